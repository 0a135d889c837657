package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// statusProcessConfig runs the controller as an install does: it makes
// its own certificate (for localhost, where this test reaches it too),
// and serves the status endpoint with it.
const statusProcessConfig = certManagementConfig + `statusServer:
  port: {{ .StatusPort }}
`

var _ = Describe("the status endpoint of a controller process", Ordered, func() {
	It("serves with the certificate the controller makes, takes a Python client's reports, and keeps serving after a restart", func() {
		// Debian's interpreter, not the python3 first on PATH, which may be
		// another; a missing one fails the spec: a skip would let a machine
		// without it pass what it never ran.
		out, err := exec.Command(debianPython, "--version").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "the spec runs examples/progress/report_progress.py with Debian's %s; install it with\n\n    apt-get install python3\n\n%s", debianPython, out)
		bin, dir := binDir(), tempDir("trainforge-progress-")
		server, webhook, _ := startWithInstalledWebhook(dir)
		c, kubeconfigPath := server.client, server.kubeconfigPath

		statusPort := freePort()
		config := strings.ReplaceAll(statusProcessConfig, "{{ .StatusPort }}", strconv.Itoa(statusPort))
		proc := startController(bin, dir, kubeconfigPath, webhook, config)

		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "progress-"}}
		Expect(c.Create(ctx, ns)).To(Succeed())
		r := newReportingJobIn(c, ns.Name, "python")

		By("the trainer pods' CA is the controller's own, published in the namespace")
		caFile := filepath.Join(dir, "ca.crt")
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(c.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: "trainforge-status-ca"}, cm)).To(Succeed())
			secret := &corev1.Secret{}
			g.Expect(c.Get(ctx, types.NamespacedName{Namespace: "trainforge-system", Name: "trainforge-webhook-server-cert"}, secret)).To(Succeed())
			g.Expect(cm.Data["ca.crt"]).NotTo(BeEmpty())
			g.Expect(cm.Data["ca.crt"]).To(Equal(string(secret.Data["ca.crt"])))
			g.Expect(os.WriteFile(caFile, []byte(cm.Data["ca.crt"]), 0o600)).To(Succeed())
		}, "30s").Should(Succeed())

		// report runs the example as a training container would, with
		// the variables TrainJobStatus sets (the URL at localhost, which
		// the certificate is also for) and a fresh bound token. The first
		// run after a (re)start may meet a server still starting.
		report := func(args ...string) {
			GinkgoHelper()
			tokenFile := filepath.Join(dir, "token")
			Expect(os.WriteFile(tokenFile, []byte(r.token()), 0o600)).To(Succeed())
			Eventually(func() (string, error) {
				cmd := exec.Command(debianPython, append([]string{filepath.Join(repoRoot, "examples", "progress", "report_progress.py")}, args...)...)
				cmd.Env = append(os.Environ(),
					trainer.StatusURLEnv+"=https://localhost:"+strconv.Itoa(statusPort)+trainer.StatusPath(ns.Name, "python"),
					trainer.StatusCACertEnv+"="+caFile, trainer.StatusTokenEnv+"="+tokenFile)
				out, err := cmd.CombinedOutput()
				return string(out), err
			}, "30s", "500ms").Should(HavePrefix("200 "))
		}
		trainerStatus := func(g Gomega) *trainer.TrainerStatus {
			job := &trainer.TrainJob{}
			g.Expect(c.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: "python"}, job)).To(Succeed())
			return job.Status.TrainerStatus
		}

		By("examples/progress/report_progress.py reports, verifying the endpoint with that CA")
		report("--progress", "70", "--remaining", "30", "--metric", "loss=0.125", "--metric", "accuracy=0.9")
		ts := trainerStatus(Default)
		Expect(ts).NotTo(BeNil())
		Expect(ts.ProgressPercentage).To(Equal(ptr.To[int32](70)))
		Expect(ts.EstimatedRemainingSeconds).To(Equal(ptr.To[int32](30)))
		Expect(ts.Metrics).To(Equal([]trainer.Metric{{Name: "loss", Value: "0.125"}, {Name: "accuracy", Value: "0.9"}}))

		By("a second report within the interval waits for Retry-After and is applied")
		report("--progress", "80", "--remaining", "20")
		Expect(*trainerStatus(Default).ProgressPercentage).To(Equal(int32(80)))

		By("a checkpoint it reports is recorded, and the progress stays")
		report("--checkpoint-step", "500", "--checkpoint-path", "/checkpoints/step-500")
		Eventually(func(g Gomega) *trainer.CheckpointStatus {
			job := &trainer.TrainJob{}
			g.Expect(c.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: "python"}, job)).To(Succeed())
			return job.Status.LastCheckpoint
		}).Should(PointTo(MatchFields(IgnoreExtras, Fields{"Step": Equal(int64(500)), "Path": Equal("/checkpoints/step-500")})))
		Expect(*trainerStatus(Default).ProgressPercentage).To(Equal(int32(80)))

		By("a restarted controller serves again")
		proc.kill()
		startController(bin, dir, kubeconfigPath, webhook, config)
		report("--progress", "100", "--remaining", "0")
		Expect(*trainerStatus(Default).ProgressPercentage).To(Equal(int32(100)))
	})
})
