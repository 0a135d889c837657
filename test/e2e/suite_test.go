// Package e2e runs TrainJobs on the simulated cluster of hack/simcluster,
// the one `make demo` shows: a real API server, controller manager (Jobs,
// garbage collection) and Coscheduling scheduler, the JobSet controller,
// and Trainforge's controller binary with its webhooks and plugin
// processes; only the nodes are fake (kwok), and the pods run for as long
// as their annotations say. It proves what envtest cannot: the TrainJob's
// status follows real Jobs and pods, gangs are scheduled whole, and
// deleting a TrainJob removes what it made.
//
// `make test-e2e` builds the cluster's binaries (hack/cluster-binaries.sh)
// and runs it.
package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
	"github.com/trainforge/trainforge/test/testenv"
)

const clusterName = "trainforge-e2e"

var (
	ctx     = context.Background()
	cluster *simcluster.Cluster
	// tf is Trainforge's controller on the cluster.
	tf       *simcluster.Trainforge
	k8s      client.Client
	repoRoot string
	// failed is set by the first failed spec, so that the logs are kept.
	failed bool
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	// Pods run for seconds and the scheduler retries a waiting gang every
	// few tens of seconds: waits are long, assertions are on states.
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	RunSpecs(t, "e2e suite: the simulated cluster")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	binaries := os.Getenv(simcluster.BinariesEnv)
	Expect(binaries).NotTo(BeEmpty(), "%s is not set: run `make test-e2e`, which builds the cluster's binaries with hack/cluster-binaries.sh", simcluster.BinariesEnv)
	var err error
	repoRoot, err = filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())

	lock, err := simcluster.TryLock(clusterName, "an e2e run, pid "+strconv.Itoa(os.Getpid()))
	Expect(err).NotTo(HaveOccurred(), "another e2e run uses the cluster name %s; wait for it to end", clusterName)
	DeferCleanup(lock.Release)

	dir, err := os.MkdirTemp("", "trainforge-e2e-")
	Expect(err).NotTo(HaveOccurred())
	cluster, err = simcluster.Start(ctx, simcluster.Options{
		Name: clusterName, RepoRoot: repoRoot, Binaries: binaries, Dir: dir,
		// The real jobs' training loops reach the status endpoint by the
		// name of the controller's Service, which KUBEFLOW_TRAINER_SERVER_URL
		// gives; the simulated cluster has no Service network, and the
		// endpoint listens on this machine.
		ProcessNodeHosts: []corev1.HostAlias{{IP: "127.0.0.1", Hostnames: []string{
			configv1alpha1.DefaultWebhookServiceName + "." + simcluster.TrainforgeNamespace + ".svc",
		}}},
		Progress: func(s string) { GinkgoWriter.Println("starting:", s) },
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		if failed {
			keepLogs()
		}
		cluster.Stop()
	})
	k8s = cluster.Client

	// make test-e2e has built the controller, the plugins and the wasm
	// modules once for every suite (make test-bin and make wasm-bin); go
	// test alone builds them here.
	bin := os.Getenv(testenv.BinEnv)
	if bin != "" {
		Expect(simcluster.MissingBinaries(bin)).To(BeEmpty(), "%s=%s lacks binaries the suite runs: run `make test-bin wasm-bin`, or unset %s", testenv.BinEnv, bin, testenv.BinEnv)
	} else {
		bin = filepath.Join(dir, "bin")
		Expect(simcluster.BuildTrainforge(ctx, repoRoot, bin)).To(Succeed())
	}
	tf, err = cluster.StartTrainforge(ctx, bin)
	Expect(err).NotTo(HaveOccurred())
})

var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() {
		failed = true
	}
})

// Every spec first checks that no process of the cluster died: a failure
// then names it instead of timing out on a state that cannot come.
var _ = BeforeEach(func() {
	Expect(cluster.Exited()).To(Succeed())
})

// keepLogs copies the logs of a failed run out of the work directory,
// which Stop removes.
func keepLogs() {
	dest, err := os.MkdirTemp("", "trainforge-e2e-logs-")
	if err != nil {
		return
	}
	for _, from := range []string{cluster.Logs, cluster.KwokLogs} {
		_ = exec.Command("cp", "-r", from, filepath.Join(dest, filepath.Base(filepath.Dir(from))+"-"+filepath.Base(from))).Run()
	}
	// Printed, not to GinkgoWriter: the suite is over, and whoever reads
	// the failure needs the path.
	os.Stderr.WriteString("a spec failed; the logs of the cluster's processes are in " + dest + "\n")
}
