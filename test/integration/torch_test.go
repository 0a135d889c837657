package integration

import (
	"os"
	"path/filepath"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// tuneRuntime is the Torch plugin's runtime shaped like Kubeflow's
// torchtune-llama3.2-1b, as a namespaced runtime of that name.
func tuneRuntime(ns string) *trainer.TrainingRuntime {
	data, err := os.ReadFile(filepath.Join(repoRoot, "builtin", "torch", "testdata", "torchtune-llama3.2-1b.yaml"))
	Expect(err).NotTo(HaveOccurred())
	cluster := &trainer.ClusterTrainingRuntime{}
	Expect(yaml.UnmarshalStrict(data, cluster)).To(Succeed())
	return &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster.Name},
		Spec:       cluster.Spec,
	}
}

var _ = Describe("the Torch plugin", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// The runtime is shaped like Kubeflow's torchtune-llama3.2-1b (2 GPUs
	// per node); the 70B model is the one torchtune runs on several nodes.
	DescribeTable("writes the torchtune command line of a tune run TrainJob",
		func(runtime string, trainerSpec trainer.Trainer, pods int32, command []string) {
			rt := tuneRuntime(ns)
			rt.Name = runtime
			Expect(k8sClient.Create(ctx, rt)).To(Succeed())
			job := trainJob(ns, "tune", runtime)
			trainerSpec.Command = []string{"tune", "run"}
			job.Spec.Trainer = &trainerSpec
			Expect(k8sClient.Create(ctx, job)).To(Succeed())
			Eventually(jobSetOf(ns, "tune")).Should(Not(BeNil()))
			js := jobSetOf(ns, "tune")(Default)
			c := container(js, "node", "node")
			Expect(c.Command).To(Equal(append([]string{"tune", "run"}, command...)))
			Expect(c.Args).To(Equal(job.Spec.Trainer.Args))
			Expect(*replicatedJob(js, "node").Template.Spec.Parallelism).To(Equal(pods))
			Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "PET_NNODES", Value: strconv.Itoa(int(pods))}))
			Expect(c.Env).NotTo(ContainElement(HaveField("Name", "PET_MASTER_ADDR")))
		},
		Entry("single node, two devices, LoRA", "torchtune-llama3.2-1b",
			trainer.Trainer{Args: []string{"model.lora_attn_modules=['q_proj','v_proj']"}}, int32(1), []string{
				"--rdzv_endpoint=tune-node-0-0.tune:29500", "lora_finetune_distributed", "--config", "llama3_2/1B_lora",
				"output_dir=/workspace/output", "tokenizer.path=/workspace/model/original/tokenizer.model", "checkpointer.checkpoint_dir=/workspace/model",
			}),
		Entry("single device: no rendezvous", "torchtune-llama3.2-1b",
			trainer.Trainer{ResourcesPerNode: &corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}, int32(1), []string{
				"full_finetune_single_device", "--config", "llama3_2/1B_full_single_device",
				"output_dir=/workspace/output", "tokenizer.path=/workspace/model/original/tokenizer.model", "checkpointer.checkpoint_dir=/workspace/model",
			}),
		Entry("multi-node", "torchtune-llama3.3-70b",
			trainer.Trainer{NumNodes: ptr.To[int32](2)}, int32(2), []string{
				"--rdzv_endpoint=tune-node-0-0.tune:29500", "full_finetune_distributed", "--config", "llama3_3/70B_full_multinode",
				"output_dir=/workspace/output", "tokenizer.path=/workspace/model/original/tokenizer.model", "checkpointer.checkpoint_dir=/workspace/model",
			}),
	)

	It("rejects a tune run TrainJob whose runtime name gives no supported model, naming the field", func() {
		rt := tuneRuntime(ns)
		rt.Name = "torchtune-gemma2-2b"
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		job := trainJob(ns, "gemma", rt.Name)
		job.Spec.Trainer = &trainer.Trainer{Command: []string{"tune", "run"}}
		err := k8sClient.Create(ctx, job)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(`spec.runtimeRef.name: Invalid value: "torchtune-gemma2-2b"`))
		Expect(err.Error()).To(ContainSubstring(`gives model "gemma2/2B"`))
	})

	It("injects the variables into the containers envInjection names", func() {
		rt := torchRuntime(ns, "injected", false)
		pod := &rt.Spec.Template.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec
		pod.InitContainers = []corev1.Container{{Name: "wait", Image: "busybox"}}
		rt.Spec.MLPolicy.Torch.EnvInjection = &trainer.EnvInjection{Targets: []trainer.EnvInjectionTarget{{JobName: "node", ContainerNames: []string{"wait"}}}}
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		Expect(k8sClient.Create(ctx, trainJob(ns, "injected", "injected"))).To(Succeed())
		Eventually(jobSetOf(ns, "injected")).Should(Not(BeNil()))
		js := jobSetOf(ns, "injected")(Default)
		wait := replicatedJob(js, "node").Template.Spec.Template.Spec.InitContainers[0]
		Expect(wait.Env).To(ContainElements(
			corev1.EnvVar{Name: "PET_NNODES", Value: "2"},
			corev1.EnvVar{Name: "PET_MASTER_ADDR", Value: "injected-node-0-0.injected"},
			corev1.EnvVar{Name: "PET_MASTER_PORT", Value: "29500"},
		))
	})

	It("rejects a runtime whose envInjection names a container it lacks, naming the runtime's field", func() {
		rt := torchRuntime(ns, "missing", false)
		rt.Spec.MLPolicy.Torch.EnvInjection = &trainer.EnvInjection{Targets: []trainer.EnvInjectionTarget{{JobName: "node", ContainerNames: []string{"sidecar"}}}}
		err := k8sClient.Create(ctx, rt)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(`spec.mlPolicy.torch.envInjection.targets[0].containerNames[0]: Invalid value: "sidecar"`))
		Expect(err.Error()).To(ContainSubstring(`it has containers "node"`))
	})

	It("rejects, in the CRD schema, an envInjection that names the node container", func() {
		rt := torchRuntime(ns, "node", false)
		rt.Spec.MLPolicy.Torch.EnvInjection = &trainer.EnvInjection{Targets: []trainer.EnvInjectionTarget{{JobName: "node", ContainerNames: []string{"node"}}}}
		err := k8sClient.Create(ctx, rt)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("containerNames must not include the main node container"))
	})
})
