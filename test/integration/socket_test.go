package integration

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// socketConfig runs the built-ins in the controller's process and the JAX
// plugin on a Unix socket, as the recommended in-pod deployment does (the
// plugin in a container of its own): the controller starts no process for
// it, it connects to the socket.
const socketConfig = `apiVersion: config.trainforge.dev/v1alpha1
kind: Configuration
plugins:
- name: PlainML
- name: Torch
- name: JAX
  external:
    socket: {{ .Dir }}/jax.sock
- name: JobSet
- name: Coscheduling
` + managerSettings

// The socket-mode spec runs the real trainforge-controller binary against
// an API server of its own, and the real JAX plugin binary, started by the
// test as its container would be, serving on a socket.
var _ = Describe("an external plugin on a Unix socket, run on its own", Ordered, func() {
	var (
		c3     client.Client
		proc   *controllerProcess
		jaxBin string
		sock   string
		jax    *exec.Cmd
	)

	// serveJAX starts the JAX plugin on the socket, as its container
	// would, and waits until something listens there.
	serveJAX := func() {
		jax = exec.Command(jaxBin)
		jax.Env = append(os.Environ(), "TRAINFORGE_PLUGIN_SOCKET="+sock)
		jax.Stdout, jax.Stderr = GinkgoWriter, GinkgoWriter
		Expect(jax.Start()).To(Succeed())
		cmd := jax
		DeferCleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		Eventually(func() error {
			c, err := net.Dial("unix", sock)
			if err == nil {
				_ = c.Close()
			}
			return err
		}).Should(Succeed())
	}

	jaxJobSet := func(ns, name string) *jobsetv1alpha2.JobSet {
		rt := vendorRuntime(ns, "jax-distributed", "jax", "{}", "nvcr.io/nvidia/jax:25.10-py3")
		if err := c3.Create(ctx, rt); err != nil {
			Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
		}
		job := trainJob(ns, name, "jax-distributed")
		job.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
		Expect(c3.Create(ctx, job)).To(Succeed())
		js := &jobsetv1alpha2.JobSet{}
		Eventually(func() error { return c3.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, js) }).Should(Succeed())
		return js
	}

	jaxProcesses := func(js *jobsetv1alpha2.JobSet) []corev1.EnvVar {
		_, c := trainerOf(js)
		var out []corev1.EnvVar
		for _, e := range c.Env {
			if e.Name == "JAX_NUM_PROCESSES" {
				out = append(out, e)
			}
		}
		return out
	}

	newNamespace3 := func() string {
		ns := &corev1.Namespace{}
		ns.GenerateName = "socket-"
		Expect(c3.Create(ctx, ns)).To(Succeed())
		return ns.Name
	}

	BeforeAll(func() {
		bin := binDir()
		jaxBin = buildBinary(bin, "cmd/trainforge-plugin-jax")
		dir := tempDir("tfsock") // short: a socket goes into it
		api := startOwnAPIServer(dir)
		c3 = api.client
		sock = filepath.Join(dir, "jax.sock")

		serveJAX()
		proc = startController(bin, dir, api.kubeconfigPath, api.webhook, socketConfig)
		Eventually(func() int { code, _ := proc.readyz(); return code }, "60s").Should(Equal(http.StatusOK))
	})

	It("serve a TrainJob through the plugin's socket, with no plugin process under the controller", func() {
		Expect(childPIDs(proc.cmd.Process.Pid)).To(BeEmpty(), "the controller started a process")
		js := jaxJobSet(newNamespace3(), "mnist")
		Expect(jaxProcesses(js)).To(Equal([]corev1.EnvVar{{Name: "JAX_NUM_PROCESSES", Value: "2"}}))
	})

	It("fail readiness while the plugin is gone, say why, and reconnect once it serves again", func() {
		Expect(jax.Process.Signal(syscall.SIGKILL)).To(Succeed())
		_ = jax.Wait()
		Eventually(func() int { code, _ := proc.readyz(); return code }).Should(Equal(http.StatusInternalServerError))
		Eventually(proc.log.String).Should(ContainSubstring("nothing listens on socket " + sock + " (connection refused)"))

		serveJAX()
		Eventually(func() int { code, _ := proc.readyz(); return code }).Should(Equal(http.StatusOK))
		Eventually(proc.metric("trainforge_plugin_restarts_total", `plugin="JAX"`)).ShouldNot(BeElementOf("", "0"))
		js := jaxJobSet(newNamespace3(), "after-restart")
		Expect(jaxProcesses(js)).To(Equal([]corev1.EnvVar{{Name: "JAX_NUM_PROCESSES", Value: "2"}}), fmt.Sprintf("the JobSet of the reconnected plugin: %v", js.Spec.ReplicatedJobs))
	})
})
