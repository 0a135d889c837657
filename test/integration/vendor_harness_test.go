package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The harness of the vendor-style plugins (plugins/, one binary each in
// cmd/trainforge-plugin-<name>): a cluster of its own, reconciled by the
// real trainforge-controller binary, which keeps the built-ins in its own
// process and runs each vendor plugin as a real process, as a cluster
// operator would install it. Specs are in vendor_test.go.
//
// To add a plugin: append it to vendorPlugins, then write its specs with
// vendorRuntime and (*vendorHarness).jobSetFor.

// vendorPlugin is a vendor-style plugin that the harness builds and
// enables as an external plugin.
type vendorPlugin struct {
	// Name is the plugin's name, in the configuration file and its
	// Describe.
	Name string
	// Package is its main package, relative to the module's root.
	Package string
	// Command and Args, for a plugin in another language (no Package): its
	// interpreter and script, the script relative to the module's root.
	Command string
	Args    []string
	// Missing, when set, says why the plugin cannot run on this machine,
	// or "": the harness leaves out a plugin that cannot, and its specs
	// skip with that reason.
	Missing func() string
}

// vendorPlugins are the vendor-style plugins, in configuration order.
var vendorPlugins = []vendorPlugin{
	{Name: "JAX", Package: "cmd/trainforge-plugin-jax"},
	{Name: "XGBoost", Package: "cmd/trainforge-plugin-xgboost"},
	{Name: "MPI", Package: "cmd/trainforge-plugin-mpi"},
	{Name: "DeepSpeed", Command: debianPython, Args: []string{"examples/plugins/deepspeed/plugin.py"}, Missing: debianPythonMissing},
	{Name: "Volcano", Package: "cmd/trainforge-plugin-volcano"},
	{Name: "Flux", Package: "cmd/trainforge-plugin-flux"},
}

// debianPython is Debian's interpreter, which sees Debian's python3-grpcio,
// python3-protobuf and python3-cryptography; a python3 first on PATH may
// not.
const debianPython = "/usr/bin/python3"

// debianPythonMissing says why the Python plugins cannot run, or "".
func debianPythonMissing() string {
	out, err := exec.Command(debianPython, "-c", "import grpc, google.protobuf, cryptography").CombinedOutput()
	if err == nil {
		return ""
	}
	return fmt.Sprintf("%s cannot import grpc, google.protobuf and cryptography (%v: %s): apt-get install python3-grpcio python3-protobuf python3-cryptography",
		debianPython, err, strings.TrimSpace(string(out)))
}

// enabled returns the plugins of vendorPlugins that can run here.
func enabledVendorPlugins() []vendorPlugin {
	var out []vendorPlugin
	for _, p := range vendorPlugins {
		if p.Missing == nil || p.Missing() == "" {
			out = append(out, p)
		}
	}
	return out
}

// requirePluginRuns fails a spec of a plugin that cannot run here, saying
// why and what to install: a skip would let a machine without Debian's
// Python packages pass the suite without testing the plugin (.ci/run
// installs them).
func requirePluginRuns(name string) {
	for _, p := range vendorPlugins {
		if p.Name == name && p.Missing != nil {
			if why := p.Missing(); why != "" {
				Fail("plugin " + name + " cannot run here: " + why)
			}
		}
	}
}

// The built-ins, which stay in the controller's process: the ML plugins
// before the vendor plugins, the builders after them, as the default
// configuration orders them.
var (
	inProcessBefore = []string{"PlainML", "Torch"}
	inProcessAfter  = []string{"JobSet", "Coscheduling"}
)

// vendorHarness is the running cluster and controller.
type vendorHarness struct {
	client client.Client
	proc   *controllerProcess
	// plugins are the vendor plugins the controller runs.
	plugins []vendorPlugin
	// binaries are the built plugin binaries by plugin name.
	binaries map[string]string
	// What restartController needs to start the controller again.
	bin, dir, kubeconfigPath string
	webhook                  envtest.WebhookInstallOptions
}

// startVendorHarness builds the controller and the vendor plugins, starts
// an API server with the CRDs and webhooks of the suite, and runs the
// controller against it, as cluster admin, until the spec tree ends. It
// returns once the controller is ready, that is once every vendor plugin
// has started and described itself.
func startVendorHarness() *vendorHarness {
	h := &vendorHarness{binaries: map[string]string{}, plugins: enabledVendorPlugins()}
	bin := binDir()
	for _, p := range h.plugins {
		if p.Package != "" {
			h.binaries[p.Name] = buildBinary(bin, p.Package)
		}
	}

	// The controller serves the admission webhooks too, so that admission
	// goes through the vendor plugins' processes.
	// Volcano's CRD, which its Go module does not ship, comes from make
	// generate.
	dir := tempDir("trainforge-vendor-")
	api := startOwnAPIServer(dir, filepath.Join(repoRoot, "test", "crds", "volcano"))
	h.client = api.client
	h.bin, h.dir, h.kubeconfigPath, h.webhook = bin, dir, api.kubeconfigPath, api.webhook
	// Whichever controller runs last goes with the spec tree, even one a
	// spec restarted.
	DeferCleanup(func() {
		if h.proc != nil {
			h.proc.kill()
		}
	})
	h.startController()
	return h
}

// startController starts the controller and returns once it is ready.
// Its output goes to GinkgoWriter, so a failed spec shows the log, the
// plugins' lines included.
func (h *vendorHarness) startController() {
	h.proc = launchController(h.bin, h.dir, h.kubeconfigPath, h.webhook, h.configuration())
	h.proc.waitHealthy(h.webhook)
	var body string
	Eventually(func() (code int) { code, body = h.proc.readyz(); return code }, "60s").Should(Equal(http.StatusOK),
		func() string { return "the vendor plugins did not all start; /readyz says:\n" + body })
}

// restartController kills the controller with SIGKILL, as a crash or an
// evicted pod would, without a chance to clean up, and starts a new one
// with the same configuration, which begins with empty caches.
func (h *vendorHarness) restartController() {
	Expect(h.proc.cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
	Eventually(h.proc.exited).Should(BeClosed())
	h.startController()
}

// configuration is the controller's configuration file, a template for
// startController: the built-ins in process, each vendor plugin run from
// its binary, whose checksum is checked before every start.
func (h *vendorHarness) configuration() string {
	var b strings.Builder
	b.WriteString("apiVersion: config.trainforge.dev/v1alpha1\nkind: Configuration\nplugins:\n")
	for _, name := range inProcessBefore {
		fmt.Fprintf(&b, "- name: %s\n", name)
	}
	for _, p := range h.plugins {
		fmt.Fprintf(&b, "- name: %s\n", p.Name)
		if p.Package == "" {
			args, err := json.Marshal(p.scriptArgs())
			Expect(err).NotTo(HaveOccurred())
			fmt.Fprintf(&b, "  external:\n    command: %s\n    args: %s\n", p.Command, args)
			continue
		}
		fmt.Fprintf(&b, "  external:\n    command: %s\n    sha256: %q\n", h.binaries[p.Name], fileSHA256(h.binaries[p.Name]))
	}
	for _, name := range inProcessAfter {
		fmt.Fprintf(&b, "- name: %s\n", name)
	}
	return b.String() + managerSettings
}

// scriptArgs are the args of a plugin in another language, its script
// made absolute.
func (p vendorPlugin) scriptArgs() []string {
	out := slices.Clone(p.Args)
	if len(out) > 0 {
		out[0] = filepath.Join(repoRoot, out[0])
	}
	return out
}

func fileSHA256(path string) string {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// newNamespace creates a namespace of the harness's cluster; the cluster
// goes away with the spec tree.
func (h *vendorHarness) newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vendor-"}}
	Expect(h.client.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// vendorRuntime is a TrainingRuntime shaped like Kubeflow Trainer's
// <framework>-distributed runtimes: mlPolicy sets numNodes 1 and the
// plugin's key, whose value is policy (JSON, "{}" for none), and the one
// replicatedJob is the trainer step "node", labelled as such, whose
// container "node" runs image. A runtime of another shape (an MPI
// launcher, say) changes Spec.Template.Spec.ReplicatedJobs before
// jobSetFor creates it.
func vendorRuntime(ns, name, key, policy, image string) *trainer.TrainingRuntime {
	ml := &trainer.MLPolicy{}
	Expect(json.Unmarshal([]byte(fmt.Sprintf(`{"numNodes": 1, %q: %s}`, key, policy)), ml)).To(Succeed())
	node := replicatedJobOf(trainer.TrainerContainerName, trainer.TrainerStep, trainer.TrainerContainerName)
	node.Template.Spec.Template.Spec.Containers[0].Image = image
	return &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: ml,
			Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{node}}},
		},
	}
}

// jobSetFor creates the runtime, then the TrainJob that uses it, and
// returns the JobSet the controller builds for the TrainJob once it
// exists. When it does not appear, the failure shows the TrainJob's
// conditions (the controller's log is in GinkgoWriter).
func (h *vendorHarness) jobSetFor(rt *trainer.TrainingRuntime, job *trainer.TrainJob) *jobsetv1alpha2.JobSet {
	Expect(h.client.Create(ctx, rt)).To(Succeed())
	Expect(h.client.Create(ctx, job)).To(Succeed())
	js := &jobsetv1alpha2.JobSet{}
	key := types.NamespacedName{Namespace: job.Namespace, Name: job.Name}
	Eventually(func() error { return h.client.Get(ctx, key, js) }).Should(Succeed(),
		func() string {
			return "no JobSet for TrainJob " + key.String() + "; its conditions: " + h.conditions(key)
		})
	return js
}

// conditions describes a TrainJob's conditions, for failure messages.
func (h *vendorHarness) conditions(key types.NamespacedName) string {
	job := &trainer.TrainJob{}
	if err := h.client.Get(ctx, key, job); err != nil {
		return err.Error()
	}
	var out []string
	for _, c := range job.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	if len(out) == 0 {
		return "none yet"
	}
	return strings.Join(out, "; ")
}

// trainerOf returns the trainer step of a JobSet built from a
// vendorRuntime and its container "node".
func trainerOf(js *jobsetv1alpha2.JobSet) (*jobsetv1alpha2.ReplicatedJob, *corev1.Container) {
	rj := replicatedJob(js, trainer.TrainerContainerName)
	Expect(rj).NotTo(BeNil(), "the JobSet has no replicatedJob %q", trainer.TrainerContainerName)
	c := container(js, rj.Name, trainer.TrainerContainerName)
	Expect(c).NotTo(BeNil(), "replicatedJob %q has no container %q", rj.Name, trainer.TrainerContainerName)
	return rj, c
}

// completionIndex is the variable a plugin sets to the pod's Job
// completion index, as the API server stores it.
func completionIndex(name string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
	}}}
}
