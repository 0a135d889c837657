package simcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainforge/trainforge/internal/freeport"
)

// kueueConfig is the Kueue manager's configuration: only TrainJobs with a
// queue name (kueue.x-k8s.io/queue-name) are Kueue's, through its TrainJob
// integration; its webhooks on 127.0.0.1 with the certificate of certDir and
// no certificate management of its own (as the JobSet controller's); no
// leader election; no metrics server (its metrics need authentication the
// simulated cluster does not set up). The JobSet integration is off: the
// TrainJob integration needs none, and the TrainJob's JobSet carries no
// queue name.
const kueueConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
manageJobsWithoutQueueName: false
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: %s
integrations:
  frameworks:
  - "trainer.kubeflow.org/trainjob"
`

// kueueMetricsCertDir is where Kueue's manager (cmd/kueue) looks for
// its metrics certificate when internal certificate management is off.
const kueueMetricsCertDir = "/etc/kueue/metrics/certs"

// KueueDir is where, in the cluster's binaries, hack/cluster-binaries.sh
// puts Kueue's build: manager, crd/*.yaml and webhook/manifests.yaml.
const KueueDir = "kueue"

// Kueue is a running Kueue manager (sigs.k8s.io/kueue's cmd/kueue).
type Kueue struct {
	c        *Cluster
	proc     *process
	webhooks []client.Object
	// Log is the path of the manager's log.
	Log string
}

// StartKueue installs Kueue's CRDs, runs its manager as a process with the
// admin kubeconfig (so no RBAC), and registers its webhooks: those of its
// own kinds (Workload, ClusterQueue, ResourceFlavor, Cohort) and of
// TrainJob, the one integration it enables. The cluster does not start it
// by itself (Options.Kueue does): a caller that needs it for a while
// starts it, and stops it with Kueue.Stop.
func (c *Cluster) StartKueue(ctx context.Context) (k *Kueue, err error) {
	dir := filepath.Join(c.opts.Binaries, KueueDir)
	if _, err := os.Stat(filepath.Join(dir, "manager")); err != nil {
		return nil, fmt.Errorf("%s has no Kueue manager (%s/manager): run hack/cluster-binaries.sh and use the directory it prints", c.opts.Binaries, KueueDir)
	}
	crds, err := filepath.Glob(filepath.Join(dir, "crd", "*.yaml"))
	if err != nil || len(crds) == 0 {
		return nil, fmt.Errorf("no Kueue CRDs in %s/crd: run hack/cluster-binaries.sh", dir)
	}
	if err := c.applyCRDs(ctx, crds...); err != nil {
		return nil, fmt.Errorf("installing Kueue's CRDs: %w", err)
	}
	port, err := freeport.Port()
	if err != nil {
		return nil, err
	}
	probe, err := freeport.Port()
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(c.opts.Dir, "kueue-certs")
	ca, err := servingCert(certDir, 30*24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("making the Kueue webhook certificate: %w", err)
	}
	probeAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(probe))
	config := filepath.Join(c.opts.Dir, "kueue-config.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, kueueConfig, port, certDir, probeAddr), 0o644); err != nil {
		return nil, err
	}
	k = &Kueue{c: c, Log: filepath.Join(c.Logs, "kueue-manager.log")}
	// The visibility server is an aggregated API server of its own, which
	// the cluster does not register: off.
	// Without its own certificate management, the manager reads its
	// metrics server's certificate from a fixed path, even with the
	// metrics server off: it gets the webhook's, bound there.
	k.proc, err = startProcessWithMounts("the Kueue manager", k.Log, filepath.Join(dir, "manager"),
		[]string{"--config", config, "--feature-gates", "VisibilityOnDemand=false"}, []string{"KUBECONFIG=" + c.Kubeconfig},
		map[string]string{kueueMetricsCertDir: certDir})
	if err != nil {
		return nil, err
	}
	c.track(k.proc)
	defer func() {
		if err != nil {
			k.Stop()
		}
	}()
	if err := c.waitReady(ctx, k.proc, "http://"+probeAddr+"/readyz", 2*time.Minute); err != nil {
		return k, err
	}
	k.webhooks, err = c.registerWebhooks(ctx, webhookSet{
		owner: "kueue", manifests: filepath.Join(dir, "webhook", "manifests.yaml"), port: port, ca: ca,
		keep: func(path string) bool {
			return strings.Contains(path, "-kueue-x-k8s-io-") || strings.Contains(path, "-trainer-kubeflow-org-")
		},
	})
	return k, err
}

// Stop removes Kueue's webhooks, then stops its manager: TrainJobs are
// admitted without it again. Its CRDs and objects stay. It may be called
// more than once.
func (k *Kueue) Stop() {
	if k == nil || k.proc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, w := range k.webhooks {
		_ = client.IgnoreNotFound(k.c.Client.Delete(ctx, w))
	}
	k.webhooks = nil
	k.proc.stop(10 * time.Second)
	// Stopped on purpose: Cluster.Exited does not report it.
	k.c.procs = slices.DeleteFunc(k.c.procs, func(p *process) bool { return p == k.proc })
	k.proc = nil
}
