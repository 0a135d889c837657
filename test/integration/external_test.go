package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/template"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/framework/frameworktest"
	"github.com/trainforge/trainforge/internal/controller"
	"github.com/trainforge/trainforge/internal/freeport"
	"github.com/trainforge/trainforge/internal/operator"
	"github.com/trainforge/trainforge/test/testenv"
)

// The external-plugin specs run against a second API server, reconciled by
// the real trainforge-controller binary with every plugin out of process:
// the four built-ins served by trainforge-builtin-plugin, and misbehaving
// plugins (test/plugins/faulty), each owning its own mlPolicy key so that
// each failure reaches only the TrainJobs that use it.

// pluginsHeader runs the built-ins out of process, through
// trainforge-builtin-plugin.
const pluginsHeader = `apiVersion: config.trainforge.dev/v1alpha1
kind: Configuration
plugins:
{{- range .Builtins }}
- name: {{ . }}
  external:
    command: {{ $.Bin }}/trainforge-builtin-plugin
    args: [{{ . }}]
{{- end }}
`

// managerSettings are the end of every configuration file.
const managerSettings = `pluginHost:
  restartBackoff:
    initial: 200ms
    max: 2s
metrics:
  bindAddress: {{ .MetricsAddr }}
health:
  healthProbeBindAddress: {{ .ProbeAddr }}
webhook:
  port: {{ .WebhookPort }}
  certDir: {{ .CertDir }}
`

// runtimeFailures are plugins that start, then fail in calls. Each owns
// its own mlPolicy key, so each failure reaches only the TrainJobs that use
// it.
const runtimeFailures = pluginsHeader + `- name: Hang
  external:
    command: {{ .Bin }}/faulty
    args: [--name=Hang, --ml-key=hang, --block-file={{ .Dir }}/hang]
    callTimeout: 1s
- name: Late
  external:
    command: {{ .Bin }}/faulty
    args: [--name=Late, --ml-key=late, --declare-kind=v1/Secret, --start-after-file={{ .Dir }}/late-may-start]
- name: HangIgnored
  failurePolicy: Ignore
  external:
    command: {{ .Bin }}/faulty
    args: [--name=HangIgnored, --ml-key=hang-ignored, --block-file={{ .Dir }}/hang-ignored]
    callTimeout: 1s
- name: HangOnceIgnored
  failurePolicy: Ignore
  external:
    command: {{ .Bin }}/faulty
    args: [--name=HangOnceIgnored, --ml-key=hang-once-ignored, --hang-calls=1]
    callTimeout: 1s
- name: Killed
  args: {greeting: restarted}
  external:
    command: {{ .Bin }}/faulty
    args: [--name=Killed, --ml-key=killed, --block-file={{ .Dir }}/killed]
    callTimeout: 60s
- name: ChecksumIgnored
  failurePolicy: Ignore
  external:
    command: {{ .Bin }}/faulty
    args: [--name=ChecksumIgnored, --ml-key=checksum-ignored]
    sha256: "{{ .BadSum }}"
- name: OutsidePatch
  external:
    command: {{ .Bin }}/faulty
    args: [--name=OutsidePatch, --ml-key=outside, '--patch=[{"op":"add","path":"/trainJob","value":{"spec":{}}}]']
- name: OutsidePatchIgnored
  failurePolicy: Ignore
  external:
    command: {{ .Bin }}/faulty
    args: [--name=OutsidePatchIgnored, --ml-key=outside-ignored, '--patch=[{"op":"add","path":"/trainJob","value":{"spec":{}}}]']
- name: UndeclaredKind
  external:
    command: {{ .Bin }}/faulty
    args: [--name=UndeclaredKind, --ml-key=undeclared, --build-kind=v1/Secret]
- name: UndeclaredKindIgnored
  failurePolicy: Ignore
  external:
    command: {{ .Bin }}/faulty
    args: [--name=UndeclaredKindIgnored, --ml-key=undeclared-ignored, --build-kind=v1/Secret]
- name: OtherNamespace
  external:
    command: {{ .Bin }}/faulty
    args: [--name=OtherNamespace, --ml-key=other-namespace, --build-namespace=default]
` + managerSettings

// startFailures are plugins under Fail that never start. Until a plugin
// has started the controller cannot know which keys it owns, so they run
// in a controller of their own.
const startFailures = pluginsHeader + `- name: Checksum
  external:
    command: {{ .Bin }}/faulty
    args: [--name=Checksum, --ml-key=checksum]
    sha256: "{{ .BadSum }}"
- name: NotAPlugin
  external:
    command: {{ .Bin }}/faulty
    args: [--not-a-plugin]
- name: OtherProtocol
  external:
    command: {{ .Bin }}/faulty
    args: [--name=OtherProtocol, --protocol-version=2]
` + managerSettings

// syncBuffer collects the controller's log.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ownAPIServer is an API server of the spec tree's own, for specs that run
// the controller as a process: it has the suite's CRDs (and extraCRDs) and
// webhook manifests, and kubeconfigPath is an admin's kubeconfig for the
// controller.
type ownAPIServer struct {
	client         client.Client
	webhook        envtest.WebhookInstallOptions
	kubeconfigPath string
}

// startOwnAPIServer starts an ownAPIServer, stopped with the spec tree, and
// writes its kubeconfig into dir.
func startOwnAPIServer(dir string, extraCRDs ...string) ownAPIServer {
	GinkgoHelper()
	return startAPIServer(testenv.Options{Webhooks: true, ExtraCRDs: extraCRDs}, dir)
}

// startAPIServer starts an API server with what o asks for, stopped with
// the spec tree, and writes the kubeconfig of an admin user into dir.
func startAPIServer(o testenv.Options, dir string) ownAPIServer {
	GinkgoHelper()
	env, err := testenv.Start(o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	scheme, err := operator.NewScheme(builtin.AddToScheme)
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	path, err := env.AdminKubeconfig(dir)
	Expect(err).NotTo(HaveOccurred())
	return ownAPIServer{client: c, webhook: env.WebhookInstallOptions, kubeconfigPath: path}
}

// processEnv is what a spec tree that runs the controller as a process
// needs: the binaries, a work directory and an API server of its own.
type processEnv struct {
	ownAPIServer
	bin, dir string
}

// startProcessEnv makes a processEnv that goes with the spec tree: the
// controller's binary and those of pkgs, a work directory named with
// prefix.
func startProcessEnv(prefix string, pkgs ...string) *processEnv {
	GinkgoHelper()
	e := &processEnv{bin: binDir(pkgs...), dir: tempDir(prefix)}
	e.ownAPIServer = startOwnAPIServer(e.dir)
	return e
}

// startController starts the controller against the env's API server with
// config, as startController does.
func (e *processEnv) startController(config string, builtins ...string) *controllerProcess {
	GinkgoHelper()
	return startController(e.bin, e.dir, e.kubeconfigPath, e.webhook, config, builtins...)
}

// tempDir makes a directory that goes with the spec tree. Keep prefix
// short where a socket goes into it: a socket's path must fit in about 100
// bytes.
func tempDir(prefix string) string {
	GinkgoHelper()
	dir, err := os.MkdirTemp("", prefix)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	return dir
}

// binDir makes a directory that goes with the spec tree, with the
// controller's binary and those of pkgs in it (buildBinary), and returns
// it.
func binDir(pkgs ...string) string {
	GinkgoHelper()
	bin := tempDir("trainforge-bin-")
	for _, pkg := range append([]string{"cmd/trainforge-controller"}, pkgs...) {
		buildBinary(bin, pkg)
	}
	return bin
}

// buildBinary puts the binary of a main package of the module (a path
// inside it, such as cmd/trainforge-controller) into dir and returns its
// path. The suite's binaries (suiteBinaries) are built once per suite run
// and linked here, so that the containers that run processes do not each
// link them again; a package outside that list is built on its own.
func buildBinary(dir, pkg string) string {
	GinkgoHelper()
	out := filepath.Join(dir, path.Base(pkg))
	if !suiteBinaries.Has(pkg) {
		Expect(testenv.Build(dir, pkg)).To(Succeed())
		return out
	}
	built, err := suiteBinaries.Path(pkg)
	Expect(err).NotTo(HaveOccurred())
	if os.Link(built, out) != nil {
		// Another file system (TRAINFORGE_TEST_BIN in the repository,
		// dir in /tmp): a copy.
		data, err := os.ReadFile(built)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(out, data, 0o755)).To(Succeed())
	}
	return out
}

// freePort and freeAddr are for a process the spec starts to listen on:
// outside the kernel's ephemeral range, which an outgoing connection can
// take before the process binds (freeport.Addr).
func freePort() int {
	port, err := freeport.Port()
	Expect(err).NotTo(HaveOccurred())
	return port
}

func freeAddr() string {
	addr, err := freeport.Addr()
	Expect(err).NotTo(HaveOccurred())
	return addr
}

// childPIDs lists the processes whose parent is pid.
func childPIDs(pid int) []int {
	entries, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := procStat(child); ok && ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// procStat returns a process's parent and state from /proc.
func procStat(pid int) (ppid int, state string, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", false
	}
	// pid (comm) state ppid ...; comm may hold spaces.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	ppid, _ = strconv.Atoi(fields[1])
	return ppid, fields[0], true
}

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != "Z"
}

// controllerProcess is a running trainforge-controller binary.
type controllerProcess struct {
	cmd         *exec.Cmd
	log         *syncBuffer
	exited      chan struct{}
	probeAddr   string
	metricsAddr string
}

// startController runs the controller binary of bin with a configuration
// from the template config, against the cluster of kubeconfigPath, and
// waits for its health probe. The process is killed when the current spec
// (or container, in BeforeAll) ends.
func startController(bin, dir, kubeconfigPath string, webhook envtest.WebhookInstallOptions, config string, builtins ...string) *controllerProcess {
	p := launchController(bin, dir, kubeconfigPath, webhook, config, builtins...)
	DeferCleanup(p.kill)
	p.waitHealthy(webhook)
	return p
}

// kill stops the controller with SIGKILL and waits for it to exit.
func (p *controllerProcess) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// launchController starts the controller as startController does, and
// leaves it to the caller to wait for its health (waitHealthy) and to kill
// it.
func launchController(bin, dir, kubeconfigPath string, webhook envtest.WebhookInstallOptions, config string, builtins ...string) *controllerProcess {
	p := &controllerProcess{log: &syncBuffer{}, exited: make(chan struct{}), probeAddr: freeAddr(), metricsAddr: freeAddr()}
	var text bytes.Buffer
	Expect(template.Must(template.New("config").Parse(config)).Execute(&text, map[string]any{
		"Builtins":    builtins,
		"Bin":         bin,
		"Dir":         dir,
		"BadSum":      strings.Repeat("0", 64),
		"ProbeAddr":   p.probeAddr,
		"MetricsAddr": p.metricsAddr,
		"WebhookPort": webhook.LocalServingPort,
		"CertDir":     webhook.LocalServingCertDir,
	})).To(Succeed())
	if !strings.Contains(text.String(), "\nstatusServer:") {
		// Its own port for the status endpoint too: the default one may
		// be taken by another controller of this machine.
		fmt.Fprintf(&text, "\nstatusServer:\n  port: %d\n", freePort())
	}
	configFile, err := os.CreateTemp(dir, "config-*.yaml")
	Expect(err).NotTo(HaveOccurred())
	_, err = configFile.Write(text.Bytes())
	Expect(err).NotTo(HaveOccurred())
	Expect(configFile.Close()).To(Succeed())

	p.cmd = exec.Command(filepath.Join(bin, "trainforge-controller"), "--config", configFile.Name(), "--kubeconfig", kubeconfigPath)
	p.cmd.Stdout = io.MultiWriter(p.log, GinkgoWriter)
	p.cmd.Stderr = io.MultiWriter(p.log, GinkgoWriter)
	Expect(p.cmd.Start()).To(Succeed())
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	return p
}

// waitHealthy waits for the controller's health probe and its admission
// webhooks.
func (p *controllerProcess) waitHealthy(webhook envtest.WebhookInstallOptions) {
	Eventually(func() (int, error) {
		select {
		case <-p.exited:
			StopTrying("the controller exited:\n" + p.log.String()).Now()
		default:
		}
		resp, err := http.Get("http://" + p.probeAddr + "/healthz")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}, "60s").Should(Equal(http.StatusOK))
	// The admission webhooks answer before a spec creates anything.
	Eventually(func() error {
		conn, err := net.Dial("tcp", net.JoinHostPort(webhook.LocalServingHost, strconv.Itoa(webhook.LocalServingPort)))
		if err == nil {
			conn.Close()
		}
		return err
	}).Should(Succeed())
}

// readyz returns the status code and body of the controller's readiness
// probe.
func (p *controllerProcess) readyz() (int, string) {
	resp, err := http.Get("http://" + p.probeAddr + "/readyz?verbose")
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(body)
}

// metric returns the value of the first sample of a metric whose labels
// contain all of labels, or "".
func (p *controllerProcess) metric(name string, labels ...string) func(Gomega) string {
	return func(g Gomega) string {
		resp, err := http.Get("http://" + p.metricsAddr + "/metrics")
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		for _, line := range strings.Split(string(body), "\n") {
			if !strings.HasPrefix(line, name+"{") {
				continue
			}
			all := true
			for _, l := range labels {
				all = all && strings.Contains(line, l)
			}
			if all {
				return line[strings.LastIndexByte(line, ' ')+1:]
			}
		}
		return ""
	}
}

var _ = Describe("external plugins, run by the trainforge-controller binary", Ordered, func() {
	var (
		c2             client.Client
		proc           *controllerProcess
		bin, blockDir  string
		kubeconfigPath string
		webhook        envtest.WebhookInstallOptions
	)

	BeforeAll(func() {
		bin = binDir("cmd/trainforge-builtin-plugin", "test/plugins/faulty")
		// The controller serves the admission webhooks too, so that
		// admission goes through the external plugins.
		blockDir = tempDir("trainforge-external-")
		api := startOwnAPIServer(blockDir)
		c2, kubeconfigPath, webhook = api.client, api.kubeconfigPath, api.webhook
		proc = startController(bin, blockDir, kubeconfigPath, webhook, runtimeFailures, "PlainML", "Torch", "JobSet", "Coscheduling", "TrainJobStatus")
	})

	newNamespace2 := func() string {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ext-"}}
		Expect(c2.Create(ctx, ns)).To(Succeed())
		return ns.Name
	}

	// runtimeWithKey creates a runtime whose mlPolicy sets one key, which
	// only the faulty plugin of that key owns.
	runtimeWithKey := func(ns, key string) string {
		rt := &trainer.TrainingRuntime{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rt-" + key},
			Spec: trainer.TrainingRuntimeSpec{
				MLPolicy: &trainer.MLPolicy{Extra: map[string]apiextensionsv1.JSON{key: {Raw: []byte("{}")}}},
				Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{
					replicatedJobOf("node", trainer.TrainerStep, "node"),
				}}},
			},
		}
		Expect(c2.Create(ctx, rt)).To(Succeed())
		return rt.Name
	}

	plainRuntime := func(ns string) string {
		rt := &trainer.TrainingRuntime{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"},
			Spec: trainer.TrainingRuntimeSpec{
				MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1)},
				Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{
					replicatedJobOf("node", trainer.TrainerStep, "node"),
				}}},
			},
		}
		Expect(c2.Create(ctx, rt)).To(Succeed())
		return rt.Name
	}

	createJob := func(ns, name, runtime string) {
		Expect(c2.Create(ctx, trainJob(ns, name, runtime))).To(Succeed())
	}

	created := func(ns, name string) func(Gomega) *metav1.Condition {
		return func(g Gomega) *metav1.Condition {
			job := &trainer.TrainJob{}
			g.Expect(c2.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job)).To(Succeed())
			c := conditionOf(job, trainer.TrainJobCreated)
			g.Expect(c).NotTo(BeNil(), "TrainJob %s has no Created condition yet", name)
			return c
		}
	}

	failedWith := func(msg ...string) OmegaMatcher {
		matchers := []OmegaMatcher{
			HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", trainer.TrainJobBuildFailedReason),
		}
		for _, m := range msg {
			matchers = append(matchers, HaveField("Message", ContainSubstring(m)))
		}
		return And(matchers...)
	}

	succeeded := And(HaveField("Status", metav1.ConditionTrue), HaveField("Reason", trainer.TrainJobJobsCreatedReason))

	events := func(ns, name string) func(Gomega) []string {
		return func(g Gomega) []string {
			list := &eventsv1.EventList{}
			g.Expect(c2.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			var out []string
			for _, e := range list.Items {
				if e.Regarding.Name == name {
					out = append(out, e.Type+" "+e.Reason+": "+e.Note)
				}
			}
			return out
		}
	}

	object := func(ns, name string, gvk schema.GroupVersionKind) func() error {
		return func() error {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return c2.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u)
		}
	}
	// jobSetContainers waits for the JobSet ns/name and returns the
	// containers of all its replicated jobs.
	jobSetContainers := func(ns, name string) []corev1.Container {
		js := &jobsetv1alpha2.JobSet{}
		Eventually(func() error {
			return c2.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, js)
		}).Should(Succeed())
		var out []corev1.Container
		for _, rj := range js.Spec.ReplicatedJobs {
			out = append(out, rj.Template.Spec.Template.Spec.Containers...)
		}
		Expect(out).NotTo(BeEmpty(), "the JobSet %s/%s has no containers", ns, name)
		return out
	}
	jobSetGVK := jobsetv1alpha2.GroupVersion.WithKind("JobSet")
	configMapGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")

	// servesOthers shows that the controller goes on serving TrainJobs that
	// do not use the failing plugin.
	servesOthers := func(ns string) {
		rt := plainRuntime(ns)
		createJob(ns, "bystander", rt)
		Eventually(created(ns, "bystander")).Should(succeeded)
		Eventually(object(ns, "bystander", jobSetGVK)).Should(Succeed())
	}

	It("produce from the seed examples exactly the objects the built-ins produce in process", func() {
		for _, file := range frameworktest.SeedFiles() {
			By(file)
			nsIn := createExample(file)
			nsOut := newNamespace2()
			runtimes, jobs := exampleObjects(file)
			for _, rt := range runtimes {
				Expect(client.IgnoreAlreadyExists(c2.Create(ctx, rt))).To(Succeed())
			}
			for _, job := range jobs {
				job.Namespace = nsOut
				Expect(c2.Create(ctx, job)).To(Succeed())
			}
			for _, job := range jobs {
				Eventually(created(nsOut, job.Name)).Should(succeeded)
				Eventually(trainJobOf(nsIn, job.Name)).Should(WithTransform(func(j *trainer.TrainJob) *metav1.Condition {
					return conditionOf(j, trainer.TrainJobCreated)
				}, And(Not(BeNil()), succeeded)))
				for _, gvk := range []schema.GroupVersionKind{jobSetGVK, schedulingGVK} {
					in, out := &unstructured.Unstructured{}, &unstructured.Unstructured{}
					in.SetGroupVersionKind(gvk)
					out.SetGroupVersionKind(gvk)
					errIn := k8sClient.Get(ctx, types.NamespacedName{Namespace: nsIn, Name: job.Name}, in)
					errOut := c2.Get(ctx, types.NamespacedName{Namespace: nsOut, Name: job.Name}, out)
					if isNotFound(errIn) {
						Expect(isNotFound(errOut)).To(BeTrue(), "%s %s exists only with the external plugins", gvk.Kind, job.Name)
						continue
					}
					Expect(errIn).NotTo(HaveOccurred())
					Expect(errOut).NotTo(HaveOccurred())
					Expect(cmp.Diff(comparable(in), comparable(out))).To(BeEmpty(),
						"%s %s of %s differs between in-process (-) and external (+) plugins", gvk.Kind, job.Name, file)
				}
			}
		}
	})

	// Before any spec that needs every Fail plugin running.
	It("serve the TrainJobs of a plugin that starts late, once it runs, and watch the kinds it builds", func() {
		ns := newNamespace2()
		createJob(ns, "late", runtimeWithKey(ns, "late"))
		Eventually(created(ns, "late")).Should(failedWith("mlPolicy.late: no running plugin owns this key", "Late (", "not starting yet"))

		Expect(os.WriteFile(filepath.Join(blockDir, "late-may-start"), nil, 0o600)).To(Succeed())
		Eventually(created(ns, "late")).Should(succeeded)
		secret := &corev1.Secret{}
		Eventually(func() error {
			return c2.Get(ctx, types.NamespacedName{Namespace: ns, Name: "late-faulty"}, secret)
		}).Should(Succeed())

		// Secrets were watched for no plugin before Late started: a deleted
		// Secret comes back only through the watch added since.
		Eventually(proc.log.String).Should(MatchRegexp(`"msg":"watching a kind for a plugin that started late","plugin":"Late","kind":"/v1, Kind=Secret"`))
		Expect(c2.Delete(ctx, secret)).To(Succeed())
		Eventually(func(g Gomega) types.UID {
			again := &corev1.Secret{}
			g.Expect(c2.Get(ctx, types.NamespacedName{Namespace: ns, Name: "late-faulty"}, again)).To(Succeed())
			return again.UID
		}).ShouldNot(Equal(secret.UID))
		Eventually(func() int { code, _ := proc.readyz(); return code }).Should(Equal(http.StatusOK))
	})

	It("validate TrainJobs at admission through the external Torch plugin, naming the field", func() {
		ns := newNamespace2()
		Expect(c2.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "pet", "torch")
		job.Spec.Trainer = &trainer.Trainer{Env: []corev1.EnvVar{{Name: "OK", Value: "1"}, {Name: "PET_NNODES", Value: "9"}}}
		err := c2.Create(ctx, job)
		Expect(err).To(MatchError(ContainSubstring("spec.trainer.env[1].name")))
		job.Spec.Trainer.Env = job.Spec.Trainer.Env[:1]
		Expect(c2.Create(ctx, job)).To(Succeed())
	})

	It("fail a call that hangs past callTimeout, naming the plugin, and go on once it answers", func() {
		ns := newNamespace2()
		block := filepath.Join(blockDir, "hang")
		Expect(os.WriteFile(block, nil, 0o600)).To(Succeed())
		createJob(ns, "slow", runtimeWithKey(ns, "hang"))
		Eventually(created(ns, "slow")).Should(failedWith("plugin Hang, EnforceMLPolicy", "callTimeout 1s"))
		Eventually(events(ns, "slow")).Should(ContainElement(And(HavePrefix("Warning "), ContainSubstring("plugin Hang"))))
		servesOthers(ns)

		Expect(os.Remove(block)).To(Succeed())
		Eventually(created(ns, "slow")).Should(succeeded)
		Eventually(object(ns, "slow-faulty", configMapGVK)).Should(Succeed())
	})

	It("retry, rather than skip under Ignore, a call that missed callTimeout the first time for its TrainJob: its answer counts", func() {
		ns := newNamespace2()
		// The plugin's first call hangs, as one behind another TrainJob's
		// huge answer would; the retry's answer is what the TrainJob gets.
		createJob(ns, "lenient", runtimeWithKey(ns, "hang-once-ignored"))
		Eventually(created(ns, "lenient")).Should(succeeded)
		for _, c := range jobSetContainers(ns, "lenient") {
			Expect(c.Env).To(ContainElement(HaveField("Name", "FAULTY")), "the plugin's answer to the retry is in the JobSet")
		}
		Consistently(events(ns, "lenient"), "2s").ShouldNot(ContainElement(HavePrefix("Warning PluginIgnored")), "one missed deadline is not the plugin's answer")
		Eventually(object(ns, "lenient-faulty", configMapGVK)).Should(Succeed())
	})

	It("skip a call that hangs past callTimeout twice under Ignore, with an Event", func() {
		ns := newNamespace2()
		Expect(os.WriteFile(filepath.Join(blockDir, "hang-ignored"), nil, 0o600)).To(Succeed())
		createJob(ns, "lenient", runtimeWithKey(ns, "hang-ignored"))
		Eventually(created(ns, "lenient")).Should(succeeded)
		Eventually(events(ns, "lenient")).Should(ContainElement(And(
			HavePrefix("Warning PluginIgnored"), ContainSubstring("plugin HangIgnored, EnforceMLPolicy"), ContainSubstring("callTimeout 1s"))))
		// Only the failed call is skipped: its Build, which answers, counts.
		Eventually(object(ns, "lenient-faulty", configMapGVK)).Should(Succeed())
	})

	It("restart a plugin killed with SIGKILL during a call, and the TrainJob then goes on", func() {
		ns := newNamespace2()
		block := filepath.Join(blockDir, "killed")
		Expect(os.WriteFile(block, nil, 0o600)).To(Succeed())
		createJob(ns, "victim", runtimeWithKey(ns, "killed"))
		var pid int
		Eventually(func() error {
			data, err := os.ReadFile(block + ".pid")
			if err == nil {
				pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
			}
			return err
		}).Should(Succeed())
		servesOthers(ns)

		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		Eventually(created(ns, "victim")).Should(failedWith("plugin Killed, EnforceMLPolicy"))
		Expect(os.Remove(block)).To(Succeed())

		Eventually(created(ns, "victim")).Should(succeeded)
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(c2.Get(ctx, types.NamespacedName{Namespace: ns, Name: "victim-faulty"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("greeting", "restarted"), "the restarted plugin is configured again")
		}).Should(Succeed())
		Eventually(proc.metric("trainforge_plugin_restarts_total", `plugin="Killed"`)).Should(Equal("1"))
		Expect(alive(pid)).To(BeFalse())
	})

	// A plugin that never started took no call: under Ignore as under
	// Fail, a TrainJob whose runtime sets a key it may own waits for it
	// (docs/configuration.md), instead of running without it.
	It("wait for a plugin under Ignore whose checksum differs, saying why, and stay ready", func() {
		zeros := strings.Repeat("0", 64)
		Eventually(proc.log.String).Should(ContainSubstring("the configuration expects " + zeros))
		ns := newNamespace2()
		createJob(ns, "lenient", runtimeWithKey(ns, "checksum-ignored"))
		Eventually(created(ns, "lenient")).Should(And(HaveField("Status", metav1.ConditionFalse),
			HaveField("Message", And(ContainSubstring("mlPolicy.checksum-ignored: no running plugin owns this key"),
				ContainSubstring("ChecksumIgnored"), ContainSubstring("the configuration expects "+zeros)))))
		Consistently(func() bool {
			err := c2.Get(ctx, types.NamespacedName{Namespace: ns, Name: "lenient"}, &jobsetv1alpha2.JobSet{})
			return apierrors.IsNotFound(err)
		}, "3s").Should(BeTrue(), "the TrainJob ran without the plugin it waits for")
		Eventually(func() int { code, _ := proc.readyz(); return code }).Should(Equal(http.StatusOK), "a plugin under Ignore does not make the controller unready")
	})

	It("refuse a patch outside Info under Fail, naming the plugin, and skip it under Ignore", func() {
		ns := newNamespace2()
		createJob(ns, "strict", runtimeWithKey(ns, "outside"))
		createJob(ns, "lenient", runtimeWithKey(ns, "outside-ignored"))
		Eventually(created(ns, "strict")).Should(failedWith("plugin OutsidePatch, EnforceMLPolicy", `(add "/trainJob") is outside Info`))
		Eventually(created(ns, "lenient")).Should(succeeded)
		Eventually(events(ns, "lenient")).Should(ContainElement(And(
			HavePrefix("Warning PluginIgnored"), ContainSubstring("OutsidePatchIgnored"), ContainSubstring("outside Info"))))
		for _, c := range jobSetContainers(ns, "lenient") {
			Expect(c.Env).NotTo(ContainElement(HaveField("Name", "FAULTY")), "the ignored plugin's changes are discarded")
		}
		servesOthers(ns)
	})

	It("refuse a built object of an undeclared kind or in another namespace under Fail, and skip it under Ignore", func() {
		ns := newNamespace2()
		createJob(ns, "undeclared", runtimeWithKey(ns, "undeclared"))
		createJob(ns, "elsewhere", runtimeWithKey(ns, "other-namespace"))
		createJob(ns, "lenient", runtimeWithKey(ns, "undeclared-ignored"))
		Eventually(created(ns, "undeclared")).Should(failedWith("plugin UndeclaredKind, Build", "built a v1/Secret, a kind it did not declare"))
		Eventually(created(ns, "elsewhere")).Should(failedWith("plugin OtherNamespace, Build", `in namespace "default"`))
		Eventually(created(ns, "lenient")).Should(succeeded)
		Eventually(events(ns, "lenient")).Should(ContainElement(And(HavePrefix("Warning PluginIgnored"), ContainSubstring("UndeclaredKindIgnored"))))
		Expect(object(ns, "lenient-faulty", corev1.SchemeGroupVersion.WithKind("Secret"))()).To(MatchError(ContainSubstring("not found")))
		Expect(object("default", "elsewhere-faulty", configMapGVK)()).To(MatchError(ContainSubstring("not found")))
		servesOthers(ns)
	})

	It("forward each plugin's stderr to the controller's log under the plugin's name", func() {
		Eventually(proc.log.String).Should(ContainSubstring(`"msg":"configured with greeting restarted","plugin":"Killed"`))
	})

	It("leave no plugin process behind when the controller is killed with SIGKILL", func() {
		plugins := childPIDs(proc.cmd.Process.Pid)
		Expect(len(plugins)).To(BeNumerically(">=", 4), "the controller runs its plugins as child processes")
		Expect(proc.cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
		for _, pid := range plugins {
			Eventually(func() bool { return alive(pid) }).Should(BeFalse(), "plugin process %d outlived the controller", pid)
		}
	})

	// After the SIGKILL spec: this controller replaces the killed one.
	It("keep /readyz failing for plugins under Fail that cannot start, log why, and retry them", func() {
		proc = startController(bin, blockDir, kubeconfigPath, webhook, startFailures, "PlainML", "JobSet")
		Eventually(proc.log.String).Should(And(
			MatchRegexp(`Checksum.*sha256 of \S+ is [0-9a-f]{64}, the configuration expects 0{64}`),
			ContainSubstring("hello, I am not a plugin"),
			MatchRegexp(`OtherProtocol.*(?i)version`),
		))
		code, body := proc.readyz()
		Expect(code).To(Equal(http.StatusInternalServerError))
		Expect(body).To(ContainSubstring("[-]plugins failed"))
		Eventually(proc.metric("trainforge_plugin_restarts_total", `plugin="Checksum"`)).ShouldNot(BeElementOf("", "0"), "it is retried")

		ns := newNamespace2()
		createJob(ns, "checked", runtimeWithKey(ns, "checksum"))
		Eventually(created(ns, "checked")).Should(failedWith("mlPolicy.checksum: no running plugin owns this key",
			"Checksum (", "the configuration expects", "NotAPlugin (", "OtherProtocol ("))
		servesOthers(ns)
	})
})

var schedulingGVK = schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}

// comparable is an object without what the API server sets on its own
// (identity, versions, times), without its namespace, and without the
// desired-state hash (a hash of the object with its namespace and owner
// UID), so that objects of two clusters can be compared.
func comparable(u *unstructured.Unstructured) map[string]any {
	o := u.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "namespace"} {
		unstructured.RemoveNestedField(o.Object, "metadata", f)
	}
	annotations := o.GetAnnotations()
	delete(annotations, controller.DesiredHashAnnotation)
	o.SetAnnotations(annotations)
	owners := o.GetOwnerReferences()
	for i := range owners {
		owners[i].UID = ""
	}
	o.SetOwnerReferences(owners)
	delete(o.Object, "status")
	// The status endpoint's URL and token audience name the TrainJob's
	// namespace, and the URL the port of its controller: both differ
	// between the two controllers by construction.
	data, err := json.Marshal(o.Object)
	Expect(err).NotTo(HaveOccurred())
	data = statusNamespace.ReplaceAll(data, []byte("/namespaces/<ns>/trainjobs/"))
	data = statusPort.ReplaceAll(data, []byte(".svc:<port>/"))
	out := map[string]any{}
	Expect(json.Unmarshal(data, &out)).To(Succeed())
	return out
}

var (
	statusNamespace = regexp.MustCompile(`/namespaces/[a-z0-9-]+/trainjobs/`)
	statusPort      = regexp.MustCompile(`\.svc:[0-9]+/`)
)
