package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The vendor-style plugins, run by the real controller as real processes
// (vendor_harness_test.go), checked through what reaches the cluster: the
// JobSet the controller applies and the answers of admission.
var _ = Describe("vendor plugins, run as processes by the trainforge-controller binary", Ordered, func() {
	var h *vendorHarness
	BeforeAll(func() { h = startVendorHarness() })

	It("run every vendor plugin as a child process of the controller, from its own binary", func() {
		running, commandLines := map[string]bool{}, map[string]bool{}
		for _, pid := range childPIDs(h.proc.cmd.Process.Pid) {
			if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe")); err == nil {
				running[exe] = true
			}
			if cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); err == nil {
				commandLines[strings.TrimRight(string(cmdline), "\x00")] = true
			}
		}
		for _, p := range h.plugins {
			if p.Package == "" {
				want := strings.Join(append([]string{p.Command}, p.scriptArgs()...), "\x00")
				Expect(commandLines).To(HaveKey(want), "plugin %s is not running as %q", p.Name, want)
				continue
			}
			Expect(running).To(HaveKey(h.binaries[p.Name]), "plugin %s is not running from %s", p.Name, h.binaries[p.Name])
		}
	})

	It("give a JAX TrainJob of 3 nodes a JobSet with the JAX variables, the coordinator port and the user's env", func() {
		ns := h.newNamespace()
		job := trainJob(ns, "mnist", "jax-distributed")
		job.Spec.Trainer = &trainer.Trainer{
			NumNodes: ptr.To[int32](3),
			Env: []corev1.EnvVar{
				{Name: "JAX_PLATFORMS", Value: "cpu"},
				{Name: "XLA_FLAGS", Value: "--xla_force_host_platform_device_count=2"},
			},
		}
		js := h.jobSetFor(vendorRuntime(ns, "jax-distributed", "jax", "{}", "nvcr.io/nvidia/jax:25.10-py3"), job)

		Expect(js.Spec.ReplicatedJobs).To(HaveLen(1))
		rj, c := trainerOf(js)
		Expect(rj.Replicas).To(Equal(int32(1)))
		Expect(rj.Template.Spec.Parallelism).To(Equal(ptr.To[int32](3)))
		Expect(rj.Template.Spec.Completions).To(Equal(ptr.To[int32](3)))
		Expect(c.Image).To(Equal("nvcr.io/nvidia/jax:25.10-py3"))
		Expect(c.Env).To(HaveExactElements(
			corev1.EnvVar{Name: "JAX_PLATFORMS", Value: "cpu"},
			corev1.EnvVar{Name: "XLA_FLAGS", Value: "--xla_force_host_platform_device_count=2"},
			corev1.EnvVar{Name: "JAX_NUM_PROCESSES", Value: "3"},
			completionIndex("JAX_PROCESS_ID"),
			corev1.EnvVar{Name: "JAX_COORDINATOR_ADDRESS", Value: "mnist-node-0-0.mnist:29500"},
		))
		Expect(c.Ports).To(HaveExactElements(corev1.ContainerPort{ContainerPort: 29500, Protocol: corev1.ProtocolTCP}))
	})

	It("give an XGBoost TrainJob of 2 nodes × 2 GPUs a JobSet with 4 workers, the tracker and the user's env", func() {
		ns := h.newNamespace()
		job := trainJob(ns, "ranking", "xgboost-distributed")
		gpus := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}
		job.Spec.Trainer = &trainer.Trainer{
			NumNodes:         ptr.To[int32](2),
			ResourcesPerNode: &corev1.ResourceRequirements{Limits: gpus},
			Env:              []corev1.EnvVar{{Name: "OMP_NUM_THREADS", Value: "4"}},
		}
		js := h.jobSetFor(vendorRuntime(ns, "xgboost-distributed", "xgboost", "{}", "ghcr.io/kubeflow/trainer/xgboost-runtime"), job)

		Expect(js.Spec.ReplicatedJobs).To(HaveLen(1))
		rj, c := trainerOf(js)
		Expect(rj.Replicas).To(Equal(int32(1)))
		Expect(rj.Template.Spec.Parallelism).To(Equal(ptr.To[int32](2)))
		Expect(rj.Template.Spec.Completions).To(Equal(ptr.To[int32](2)))
		Expect(c.Image).To(Equal("ghcr.io/kubeflow/trainer/xgboost-runtime"))
		Expect(c.Resources.Limits).To(HaveKeyWithValue(corev1.ResourceName("nvidia.com/gpu"), resource.MustParse("2")))
		Expect(c.Env).To(HaveExactElements(
			corev1.EnvVar{Name: "OMP_NUM_THREADS", Value: "4"},
			corev1.EnvVar{Name: "DMLC_TRACKER_URI", Value: "ranking-node-0-0.ranking"},
			corev1.EnvVar{Name: "DMLC_TRACKER_PORT", Value: "29500"},
			completionIndex("DMLC_TASK_ID"),
			corev1.EnvVar{Name: "DMLC_NUM_WORKER", Value: "4"},
		))
		Expect(c.Ports).To(HaveExactElements(corev1.ContainerPort{ContainerPort: 29500, Protocol: corev1.ProtocolTCP}))
	})

	DescribeTable("reject at admission, through the plugin's process, a TrainJob that sets a variable the plugin owns",
		func(key, image, variable, message string) {
			ns := h.newNamespace()
			Expect(h.client.Create(ctx, vendorRuntime(ns, key+"-distributed", key, "{}", image))).To(Succeed())
			job := trainJob(ns, "clash", key+"-distributed")
			job.Spec.Trainer = &trainer.Trainer{Env: []corev1.EnvVar{{Name: "MINE", Value: "1"}, {Name: variable, Value: "0"}}}
			Expect(h.client.Create(ctx, job)).To(MatchError(ContainSubstring("spec.trainer.env[1].name: Forbidden: " + message)))

			job.Spec.Trainer.Env = job.Spec.Trainer.Env[:1]
			Expect(h.client.Create(ctx, job)).To(Succeed(), "without the plugin's variable the TrainJob is admitted")
		},
		Entry("JAX_PROCESS_ID", "jax", "nvcr.io/nvidia/jax:25.10-py3", "JAX_PROCESS_ID",
			"JAX_PROCESS_ID is set by the JAX plugin, which sets JAX_NUM_PROCESSES, JAX_PROCESS_ID, JAX_COORDINATOR_ADDRESS itself; remove it from spec.trainer.env"),
		Entry("DMLC_TASK_ID", "xgboost", "ghcr.io/kubeflow/trainer/xgboost-runtime", "DMLC_TASK_ID",
			"DMLC_TASK_ID is set by the XGBoost plugin, which sets DMLC_TRACKER_URI, DMLC_TRACKER_PORT, DMLC_TASK_ID, DMLC_NUM_WORKER itself; remove it from spec.trainer.env"),
	)

	DescribeTable("reject at admission, through the plugin's process, a runtime without a trainer step",
		func(key string) {
			ns := h.newNamespace()
			rt := vendorRuntime(ns, key+"-broken", key, "{}", "busybox")
			rj := &rt.Spec.Template.Spec.ReplicatedJobs[0]
			rj.Name, rj.Template.Labels = "worker", nil
			Expect(h.client.Create(ctx, rt)).To(MatchError(ContainSubstring(
				"spec.template.spec.replicatedJobs: Required value: the runtime has no trainer step")))
		},
		Entry("JAX", "jax"),
		Entry("XGBoost", "xgboost"),
	)
})
