package integration

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"text/template"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// reloadConfig is the configuration of the reload specs: the built-ins in
// process around one external plugin, JAX, whose entry the specs change.
const reloadConfig = `apiVersion: config.trainforge.dev/v1alpha1
kind: Configuration
plugins:
- name: PlainML
- name: Torch
{{- if .JAX }}
- name: JAX
  external:
    command: {{ .JAX }}
{{- if .JAXArgs }}
    args: {{ .JAXArgs }}
{{- end }}
{{- end }}
- name: JobSet
- name: Coscheduling
{{ with .Extra }}{{ . }}
{{ end }}` + managerSettings

// configMapDir writes configuration files the way the kubelet writes a
// ConfigMap volume: each version in a directory of its own, a ..data
// symlink to the current one swapped atomically, and the file a symlink
// through ..data.
type configMapDir struct {
	dir     string
	version int
}

func (c *configMapDir) path() string { return filepath.Join(c.dir, "config.yaml") }

func (c *configMapDir) write(content string) {
	c.version++
	v := fmt.Sprintf("..v%d", c.version)
	Expect(os.MkdirAll(filepath.Join(c.dir, v), 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(c.dir, v, "config.yaml"), []byte(content), 0o644)).To(Succeed())
	tmp := filepath.Join(c.dir, "..data_tmp")
	_ = os.Remove(tmp)
	Expect(os.Symlink(v, tmp)).To(Succeed())
	Expect(os.Rename(tmp, filepath.Join(c.dir, "..data"))).To(Succeed())
	if _, err := os.Lstat(c.path()); os.IsNotExist(err) {
		Expect(os.Symlink(filepath.Join("..data", "config.yaml"), c.path())).To(Succeed())
	}
}

var _ = Describe("a configuration file changed while the controller runs", Ordered, func() {
	var (
		c            client.Client
		proc         *controllerProcess
		cm           *configMapDir
		jax, jaxCopy string
		notAPlugin   string
		podName      = "trainforge-controller-0"
		ns           string
		render       func(values map[string]any) string
	)

	BeforeAll(func() {
		bin := binDir()
		jax = buildBinary(bin, "cmd/trainforge-plugin-jax")
		notAPlugin = buildBinary(bin, "test/plugins/faulty")
		// The upgrade: the same plugin, at another path (a new version).
		jaxCopy = filepath.Join(bin, "trainforge-plugin-jax-v2")
		data, err := os.ReadFile(jax)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(jaxCopy, data, 0o755)).To(Succeed())

		dir := tempDir("trainforge-reload-")
		api := startOwnAPIServer(dir)
		c = api.client

		// The controller's own Pod, on which it records reload Events.
		Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: controllerNamespace}})).To(Succeed())
		Expect(c.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: podName},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "trainforge"}}},
		})).To(Succeed())

		proc = &controllerProcess{log: &syncBuffer{}, exited: make(chan struct{}), probeAddr: freeAddr(), metricsAddr: freeAddr()}
		webhook := api.webhook
		render = func(values map[string]any) string {
			values["ProbeAddr"], values["MetricsAddr"] = proc.probeAddr, proc.metricsAddr
			values["WebhookPort"], values["CertDir"] = webhook.LocalServingPort, webhook.LocalServingCertDir
			var b bytes.Buffer
			Expect(template.Must(template.New("config").Parse(reloadConfig)).Execute(&b, values)).To(Succeed())
			return b.String()
		}
		cm = &configMapDir{dir: filepath.Join(dir, "config")}
		cm.write(render(map[string]any{"JAX": jax}))

		proc.cmd = exec.Command(filepath.Join(bin, "trainforge-controller"), "--config", cm.path(), "--kubeconfig", api.kubeconfigPath)
		proc.cmd.Env = append(os.Environ(), "POD_NAME="+podName, "POD_NAMESPACE="+controllerNamespace)
		proc.cmd.Stdout = io.MultiWriter(proc.log, GinkgoWriter)
		proc.cmd.Stderr = io.MultiWriter(proc.log, GinkgoWriter)
		Expect(proc.cmd.Start()).To(Succeed())
		go func() {
			_ = proc.cmd.Wait()
			close(proc.exited)
		}()
		DeferCleanup(proc.kill)
		proc.waitHealthy(webhook)

		nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "reload-"}}
		Expect(c.Create(ctx, nsObj)).To(Succeed())
		ns = nsObj.Name
		Expect(c.Create(ctx, vendorRuntime(ns, "jax-distributed", "jax", "{}", "nvcr.io/nvidia/jax"))).To(Succeed())
	})

	// pluginPID is the pid of the controller's child process running path.
	pluginPID := func(path string) func() int {
		return func() int {
			for _, pid := range childPIDs(proc.cmd.Process.Pid) {
				if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == path && alive(pid) {
					return pid
				}
			}
			return 0
		}
	}
	created := func(name string) func(Gomega) *metav1.Condition {
		return func(g Gomega) *metav1.Condition {
			job := &trainer.TrainJob{}
			g.Expect(c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job)).To(Succeed())
			return conditionOf(job, trainer.TrainJobCreated)
		}
	}
	reloadEvents := func(g Gomega) []string {
		list := &eventsv1.EventList{}
		g.Expect(c.List(ctx, list, client.InNamespace(controllerNamespace))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Name == podName {
				out = append(out, e.Type+" "+e.Reason+": "+e.Note)
			}
		}
		return out
	}
	reloads := func(result string) func(Gomega) string {
		return proc.metric("trainforge_config_reloads_total", `result="`+result+`"`)
	}

	It("upgrades an external plugin during a storm of 200 TrainJobs, losing no reconcile and creating nothing twice", func() {
		Eventually(pluginPID(jax)).ShouldNot(BeZero())
		oldPID := pluginPID(jax)()

		const n = 200
		var wg sync.WaitGroup
		names := make(chan string, n)
		for i := range n {
			names <- fmt.Sprintf("storm-%03d", i)
		}
		close(names)
		for range 8 {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for name := range names {
					Expect(c.Create(ctx, trainJob(ns, name, "jax-distributed"))).To(Succeed())
				}
			}()
		}
		// Mid-storm: the new binary.
		time.Sleep(500 * time.Millisecond)
		cm.write(render(map[string]any{"JAX": jaxCopy}))
		wg.Wait()

		Eventually(reloads("applied")).Should(Equal("1"))
		Eventually(pluginPID(jaxCopy)).ShouldNot(BeZero())
		Eventually(func() bool { return alive(oldPID) }).Should(BeFalse(), "the replaced plugin process still runs")

		var jobSets jobsetv1alpha2.JobSetList
		Eventually(func(g Gomega) int {
			g.Expect(c.List(ctx, &jobSets, client.InNamespace(ns))).To(Succeed())
			return len(jobSets.Items)
		}, "120s").Should(Equal(n))
		for _, js := range jobSets.Items {
			Expect(js.Generation).To(Equal(int64(1)), "JobSet %s was changed after its creation", js.Name)
			_, ctr := trainerOf(&js)
			Expect(ctr.Env).To(ContainElement(HaveField("Name", "JAX_COORDINATOR_ADDRESS")), "JobSet %s was built without the JAX plugin", js.Name)
		}
		first := map[string]types.UID{}
		for _, js := range jobSets.Items {
			first[js.Name] = js.UID
		}
		// Nothing is deleted and made again afterwards.
		Consistently(func(g Gomega) map[string]types.UID {
			g.Expect(c.List(ctx, &jobSets, client.InNamespace(ns))).To(Succeed())
			now := map[string]types.UID{}
			for _, js := range jobSets.Items {
				now[js.Name] = js.UID
			}
			return now
		}).Should(Equal(first))
		for i := range n {
			Eventually(created(fmt.Sprintf("storm-%03d", i))).Should(HaveField("Status", metav1.ConditionTrue))
		}
		Eventually(reloadEvents).Should(ContainElement(ContainSubstring("Normal ConfigurationReloaded: configuration file " + cm.path() + " reloaded: plugins PlainML, Torch, JAX, JobSet, Coscheduling")))
	})

	It("refuses a new binary that does not start, and the running plugin goes on serving", func() {
		running := pluginPID(jaxCopy)()
		Expect(running).NotTo(BeZero())
		cm.write(render(map[string]any{"JAX": notAPlugin, "JAXArgs": "[--not-a-plugin]"}))
		Eventually(reloads("refused")).Should(Equal("1"))
		Eventually(proc.log.String).Should(ContainSubstring("not applied, the plugins run on as they were: plugins[2] (JAX): the new plugin did not start"))
		Eventually(reloadEvents).Should(ContainElement(ContainSubstring("Warning ConfigurationRefused: configuration file " + cm.path() + " not applied")))
		Expect(pluginPID(jaxCopy)()).To(Equal(running))
		Expect(pluginPID(notAPlugin)()).To(BeZero(), "the refused plugin's process was left running")

		Expect(c.Create(ctx, trainJob(ns, "after-refusal", "jax-distributed"))).To(Succeed())
		Eventually(created("after-refusal")).Should(HaveField("Status", metav1.ConditionTrue))
	})

	It("refuses a file that does not decode, naming the field", func() {
		cm.write(render(map[string]any{"JAX": jaxCopy, "Extra": "pluginHots: {}"}))
		Eventually(reloads("invalid")).Should(Equal("1"))
		Eventually(proc.log.String).Should(ContainSubstring(`unknown field \"pluginHots\"`))
	})

	It("says which settings need a restart", func() {
		cm.write(render(map[string]any{"JAX": jaxCopy}) + "leaderElection:\n  resourceName: another-lease\n")
		Eventually(reloadEvents).Should(ContainElement(ContainSubstring("Warning ConfigurationNeedsRestart: configuration file " + cm.path() + ": leaderElection changed; these settings are read at start-up: restart the controller to apply them")))
	})

	It("gives a removed plugin's TrainJobs the condition of a key no plugin owns", func() {
		running := pluginPID(jaxCopy)()
		cm.write(render(map[string]any{}))
		Eventually(reloads("applied")).Should(Equal("2"))
		Eventually(func() bool { return alive(running) }).Should(BeFalse())
		Eventually(created("storm-000")).Should(And(
			HaveField("Status", metav1.ConditionFalse),
			HaveField("Message", ContainSubstring("mlPolicy.jax: no enabled plugin owns this key")),
		))
	})
})
