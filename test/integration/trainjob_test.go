package integration

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// createExample creates the runtimes and TrainJobs of one seed example
// in a fresh namespace and returns that namespace.
func createExample(file string) string {
	ns := newNamespace()
	runtimes, jobs := exampleObjects(file)
	for _, rt := range runtimes {
		createCleaned(rt)
	}
	for _, job := range jobs {
		job.Namespace = ns
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
	}
	return ns
}

func expectControlledByTrainJob(obj metav1.Object, jobName string) {
	owner := controllerOwner(obj)
	Expect(owner).NotTo(BeNil(), "%s has no controller owner", obj.GetName())
	Expect(owner.APIVersion).To(Equal(trainer.GroupVersion.String()))
	Expect(owner.Kind).To(Equal(trainer.TrainJobKind))
	Expect(owner.Name).To(Equal(jobName))
	Expect(owner.BlockOwnerDeletion).To(Equal(ptr.To(true)))
}

var _ = Describe("the seed examples", func() {
	// The seeds came from a directory beside the repository, where they
	// are kept; a clone has its own copies (examples/seed, which a unit
	// test keeps equal to the embedded ones). Where the originals are at
	// hand, the copies must not have drifted.
	It("are the ones the project keeps beside the repository, where those are at hand", func() {
		originals := filepath.Join(repoRoot, "..", "shared", "examples")
		if _, err := os.Stat(originals); err != nil {
			Skip("no " + originals + " beside this clone to compare examples/seed with")
		}
		for _, file := range frameworktest.SeedFiles() {
			original, err := os.ReadFile(filepath.Join(originals, file))
			Expect(err).NotTo(HaveOccurred())
			copied, err := os.ReadFile(filepath.Join(repoRoot, "examples", "seed", file))
			Expect(err).NotTo(HaveOccurred())
			Expect(string(copied)).To(Equal(string(original)), "examples/seed/%s is stale: copy it from %s", file, originals)
		}
	})

	It("seed-plainml: one JobSet first-job whose trainer-node runs 2 pods", func() {
		ns := createExample("seed-plainml.yaml")
		js := jobSetOf(ns, "first-job")
		Eventually(js).Should(Not(BeNil()))
		got := js(Default)
		Expect(got.Spec.ReplicatedJobs).To(HaveLen(1))
		rj := replicatedJob(got, "trainer-node")
		Expect(rj).NotTo(BeNil())
		Expect(rj.Template.Spec.Parallelism).To(Equal(ptr.To[int32](2)))
		Expect(rj.Template.Spec.Completions).To(Equal(ptr.To[int32](2)))
		c := container(got, "trainer-node", "trainer")
		Expect(c.Image).To(Equal("python:alpine3.20"))
		Expect(c.Command).To(Equal([]string{"/bin/sh", "-c", "echo 'Hello From Training Runtime'"}))
		expectControlledByTrainJob(got, "first-job")

		Eventually(func(g Gomega) {
			c := conditionOf(trainJobOf(ns, "first-job")(g), trainer.TrainJobCreated)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	})

	It("seed-torch: 3 pods with the PET_* environment, port 29500 and the user's env", func() {
		ns := createExample("seed-torch.yaml")
		Eventually(jobSetOf(ns, "first-job")).Should(Not(BeNil()))
		got := jobSetOf(ns, "first-job")(Default)
		rj := replicatedJob(got, "trainer-node")
		Expect(rj.Template.Spec.Parallelism).To(Equal(ptr.To[int32](3)))
		Expect(rj.Template.Spec.Completions).To(Equal(ptr.To[int32](3)))
		c := container(got, "trainer-node", "trainer")
		Expect(c.Image).To(Equal("docker.io/andreyvelichkevich/test-torch"))
		env := map[string]corev1.EnvVar{}
		for _, e := range c.Env {
			env[e.Name] = e
		}
		Expect(env["PET_NNODES"].Value).To(Equal("3"))
		Expect(env["PET_NPROC_PER_NODE"].Value).To(Equal("5"))
		Expect(env["PET_MASTER_ADDR"].Value).To(Equal("first-job-trainer-node-0-0.first-job"))
		Expect(env["PET_MASTER_PORT"].Value).To(Equal("29500"))
		Expect(env["PET_NODE_RANK"].ValueFrom).NotTo(BeNil())
		Expect(env["PET_NODE_RANK"].ValueFrom.FieldRef).NotTo(BeNil())
		Expect(env["PET_NODE_RANK"].ValueFrom.FieldRef.FieldPath).To(Equal("metadata.annotations['batch.kubernetes.io/job-completion-index']"))
		Expect(env["TRAIN_JOB"].Value).To(Equal("env"))
		Expect(c.Ports).To(ContainElement(HaveField("ContainerPort", int32(29500))))
	})

	It("seed-coscheduling: PodGroup gang-job with minMember 10, timeout 60, label on the trainer pods", func() {
		ns := createExample("seed-coscheduling.yaml")
		pg := &schedulingv1alpha1.PodGroup{}
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gang-job"}, pg)
		}).Should(Succeed())
		Expect(pg.Spec.MinMember).To(Equal(int32(10)))
		Expect(pg.Spec.ScheduleTimeoutSeconds).To(Equal(ptr.To[int32](60)))
		Expect(pg.Spec.MinResources.Cpu().Equal(resource.MustParse("30"))).To(BeTrue(), "cpu %s", pg.Spec.MinResources.Cpu())
		Expect(pg.Spec.MinResources.Memory().Equal(resource.MustParse("40Gi"))).To(BeTrue(), "memory %s", pg.Spec.MinResources.Memory())
		expectControlledByTrainJob(pg, "gang-job")

		// The PodGroup is applied before the JobSet whose pods it gangs:
		// its presence does not say the JobSet exists yet.
		var js *jobsetv1alpha2.JobSet
		Eventually(func(g Gomega) { js = jobSetOf(ns, "gang-job")(g) }).Should(Succeed())
		rj := replicatedJob(js, "node")
		Expect(rj.Template.Spec.Parallelism).To(Equal(ptr.To[int32](10)))
		Expect(rj.Template.Spec.Template.Labels).To(HaveKeyWithValue(schedulingv1alpha1.PodGroupLabel, "gang-job"))
		expectControlledByTrainJob(js, "gang-job")

		Eventually(func(g Gomega) {
			c := conditionOf(trainJobOf(ns, "gang-job")(g), trainer.TrainJobCreated)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(Equal("Created JobSet gang-job, PodGroup gang-job; plugins: Torch, JobSet, Coscheduling, TrainJobStatus"))
		}).Should(Succeed())

		// Each plugin applies what it builds under its own field manager.
		Expect(fieldManagers(js.ManagedFields)).To(ContainElement("trainforge-jobset"))
		Expect(fieldManagers(pg.ManagedFields)).To(ContainElement("trainforge-coscheduling"))
	})
})

// torchRuntime is a namespaced runtime with a dataset initializer and a
// labelled trainer step.
func torchRuntime(ns, name string, gang bool) *trainer.TrainingRuntime {
	rt := &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](2), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
			Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{
				replicatedJobOf("dataset-initializer", trainer.DatasetInitializerStep, "dataset-initializer"),
				replicatedJobOf("node", trainer.TrainerStep, "node"),
			}}},
		},
	}
	if gang {
		rt.Spec.PodGroupPolicy = &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{
			Coscheduling: &trainer.CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To[int32](120)},
		}}
	}
	return rt
}

func replicatedJobOf(name, step, containerName string) jobsetv1alpha2.ReplicatedJob {
	rj := jobsetv1alpha2.ReplicatedJob{Name: name, Replicas: 1}
	rj.Template.Labels = map[string]string{trainer.AncestorStepLabel: step}
	rj.Template.Spec.Template.Spec = corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name:      containerName,
			Image:     "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		}},
	}
	return rj
}

func trainJob(ns, name, runtimeName string) *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{
			Name: runtimeName, Kind: ptr.To(trainer.TrainingRuntimeKind),
		}},
	}
}

var _ = Describe("a TrainJob", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("labels only the gang's pods and passes initializer settings to the initializer", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", true))).To(Succeed())
		job := trainJob(ns, "gang", "torch")
		job.Spec.Initializer = &trainer.Initializer{Dataset: &trainer.DatasetInitializer{
			StorageUri: ptr.To("hf://datasets/tiny"),
			Env:        []corev1.EnvVar{{Name: "SPLIT", Value: "train"}},
			SecretRef:  &corev1.LocalObjectReference{Name: "hf-token"},
		}}
		Expect(k8sClient.Create(ctx, job)).To(Succeed())

		Eventually(jobSetOf(ns, "gang")).Should(Not(BeNil()))
		js := jobSetOf(ns, "gang")(Default)
		Expect(replicatedJob(js, "node").Template.Spec.Template.Labels).To(HaveKeyWithValue(schedulingv1alpha1.PodGroupLabel, "gang"))
		Expect(replicatedJob(js, "dataset-initializer").Template.Spec.Template.Labels).NotTo(HaveKey(schedulingv1alpha1.PodGroupLabel))
		init := container(js, "dataset-initializer", "dataset-initializer")
		Expect(init.Env).To(ContainElements(
			corev1.EnvVar{Name: "STORAGE_URI", Value: "hf://datasets/tiny"},
			corev1.EnvVar{Name: "SPLIT", Value: "train"},
		))
		Expect(init.EnvFrom).To(ContainElement(corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "hf-token"}}}))

		pg := &schedulingv1alpha1.PodGroup{}
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gang"}, pg)
		}).Should(Succeed())
		Expect(pg.Spec.MinMember).To(Equal(int32(2)), "the initializer is not part of the gang")
		Expect(pg.Spec.ScheduleTimeoutSeconds).To(Equal(ptr.To[int32](120)))
	})

	It("counts the RuntimeClass overhead of the gang's pods in the PodGroup", func() {
		rc := &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: "sandboxed-" + ns},
			Handler:    "kata",
			Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
		}
		createCleaned(rc)
		rt := torchRuntime(ns, "torch", true)
		rt.Spec.Template.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.RuntimeClassName = ptr.To(rc.Name)
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		Expect(k8sClient.Create(ctx, trainJob(ns, "sandboxed", "torch"))).To(Succeed())

		pg := &schedulingv1alpha1.PodGroup{}
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sandboxed"}, pg)
		}).Should(Succeed())
		// Two nodes of 1 CPU each, plus 250m of overhead per pod.
		Expect(pg.Spec.MinResources.Cpu().Equal(resource.MustParse("2500m"))).To(BeTrue(), "cpu %s", pg.Spec.MinResources.Cpu())
	})

	It("becomes Complete, then Failed for another job, with the JobSet's reason", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		for _, tc := range []struct{ job, jsCondition, want, reason string }{
			{"done", string(jobsetv1alpha2.JobSetCompleted), trainer.TrainJobComplete, "AllJobsCompleted"},
			{"broken", string(jobsetv1alpha2.JobSetFailed), trainer.TrainJobFailed, "FailedJobs"},
		} {
			Expect(k8sClient.Create(ctx, trainJob(ns, tc.job, "torch"))).To(Succeed())
			Eventually(jobSetOf(ns, tc.job)).Should(Not(BeNil()))
			js := jobSetOf(ns, tc.job)(Default)
			js.Status.Conditions = []metav1.Condition{{
				Type: tc.jsCondition, Status: metav1.ConditionTrue, Reason: tc.reason,
				Message: "jobset says " + tc.reason, LastTransitionTime: metav1.Now(),
			}}
			js.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Succeeded: 1}}
			Expect(k8sClient.Status().Update(ctx, js)).To(Succeed())

			Eventually(func(g Gomega) {
				got := trainJobOf(ns, tc.job)(g)
				c := conditionOf(got, tc.want)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(c.Reason).To(Equal(tc.reason))
				g.Expect(c.Message).To(Equal("jobset says " + tc.reason))
				g.Expect(got.Status.JobsStatus).To(ContainElement(HaveField("Name", "node")))
			}).Should(Succeed())
			Eventually(func(g Gomega) []string { return eventReasons(g, ns, tc.job) }).Should(ContainElement(tc.reason))
		}
	})

	It("still follows its JobSet when its runtime is deleted after the start", func() {
		rt := torchRuntime(ns, "torch", false)
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		Expect(k8sClient.Create(ctx, trainJob(ns, "orphan", "torch"))).To(Succeed())
		Eventually(jobSetOf(ns, "orphan")).Should(Not(BeNil()))
		Eventually(func(g Gomega) {
			g.Expect(conditionOf(trainJobOf(ns, "orphan")(g), trainer.TrainJobCreated)).To(HaveField("Status", metav1.ConditionTrue))
		}).Should(Succeed())
		Expect(k8sClient.Delete(ctx, rt)).To(Succeed())

		js := jobSetOf(ns, "orphan")(Default)
		js.Status.Conditions = []metav1.Condition{{
			Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue, Reason: "AllJobsCompleted",
			Message: "done", LastTransitionTime: metav1.Now(),
		}}
		Expect(k8sClient.Status().Update(ctx, js)).To(Succeed())
		Eventually(func(g Gomega) {
			got := trainJobOf(ns, "orphan")(g)
			g.Expect(conditionOf(got, trainer.TrainJobComplete)).NotTo(BeNil())
			g.Expect(conditionOf(got, trainer.TrainJobCreated)).To(HaveField("Status", metav1.ConditionTrue))
		}).Should(Succeed())
	})

	It("is suspended, then resumed, and the JobSet follows", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "pause", "torch")
		job.Spec.Suspend = ptr.To(true)
		Expect(k8sClient.Create(ctx, job)).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(jobSetOf(ns, "pause")(g).Spec.Suspend).To(Equal(ptr.To(true)))
			c := conditionOf(trainJobOf(ns, "pause")(g), trainer.TrainJobSuspended)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())

		Eventually(func() error {
			got := trainJobOf(ns, "pause")(Default)
			got.Spec.Suspend = ptr.To(false)
			return k8sClient.Update(ctx, got)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(jobSetOf(ns, "pause")(g).Spec.Suspend).To(Equal(ptr.To(false)))
			c := conditionOf(trainJobOf(ns, "pause")(g), trainer.TrainJobSuspended)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(trainer.TrainJobResumedReason))
		}).Should(Succeed())
		Eventually(func(g Gomega) []string { return eventReasons(g, ns, "pause") }).Should(ContainElements(
			trainer.TrainJobSuspendedReason, trainer.TrainJobResumedReason))
	})

	It("takes a runtime patch and the resume of one update in one go, as Kueue admits a job", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "queued", "torch")
		job.Spec.Suspend = ptr.To(true)
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		Eventually(jobSetOf(ns, "queued")).Should(Not(BeNil()))
		generation := jobSetOf(ns, "queued")(Default).Generation

		Eventually(func() error {
			got := trainJobOf(ns, "queued")(Default)
			got.Spec.Suspend = ptr.To(false)
			got.Spec.RuntimePatches = []trainer.RuntimePatch{{
				Manager: "kueue.x-k8s.io/manager",
				TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{Template: &apiextensionsv1.JSON{Raw: []byte(
					`{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"flavor":"a100"}}}}}}]}}`)}},
			}}
			return k8sClient.Update(ctx, got)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			js := jobSetOf(ns, "queued")(g)
			g.Expect(js.Spec.Suspend).To(Equal(ptr.To(false)))
			g.Expect(replicatedJob(js, "node").Template.Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{"flavor": "a100"}))
			// One write: JobSet's webhook refuses a template change to a
			// JobSet that is already running.
			g.Expect(js.Generation).To(Equal(generation + 1))
		}).Should(Succeed())
	})

	It("fails with DeadlineExceeded once activeDeadlineSeconds passes, and its JobSet is suspended", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "slow", "torch")
		job.Spec.ActiveDeadlineSeconds = ptr.To[int64](2)
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		Eventually(jobSetOf(ns, "slow")).Should(Not(BeNil()))
		Expect(jobSetOf(ns, "slow")(Default).Spec.Suspend).To(Equal(ptr.To(false)))

		Eventually(func(g Gomega) {
			c := conditionOf(trainJobOf(ns, "slow")(g), trainer.TrainJobFailed)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(trainer.TrainJobDeadlineExceededReason))
		}).Should(Succeed())
		Expect(jobSetOf(ns, "slow")(Default).Spec.Suspend).To(Equal(ptr.To(true)))
	})

	It("waits for a runtime created after it, then starts by itself", func() {
		job := trainJob(ns, "early", "late-runtime")
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		Eventually(func(g Gomega) {
			c := conditionOf(trainJobOf(ns, "early")(g), trainer.TrainJobCreated)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(trainer.TrainJobRuntimeNotFoundReason))
			g.Expect(c.Message).To(ContainSubstring(`"late-runtime" not found`))
		}).Should(Succeed())
		Eventually(func(g Gomega) []string { return eventReasons(g, ns, "early") }).Should(ContainElement(trainer.TrainJobRuntimeNotFoundReason))

		Expect(k8sClient.Create(ctx, torchRuntime(ns, "late-runtime", false))).To(Succeed())
		Eventually(jobSetOf(ns, "early")).Should(Not(BeNil()))
		Eventually(func(g Gomega) {
			g.Expect(conditionOf(trainJobOf(ns, "early")(g), trainer.TrainJobCreated)).To(HaveField("Status", metav1.ConditionTrue))
		}).Should(Succeed())
	})

	It("managed by another controller is never touched", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "elsewhere", "torch")
		job.Spec.ManagedBy = ptr.To("kueue.x-k8s.io/multikueue")
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		// A job managed by us, created after it, proves the controller ran.
		Expect(k8sClient.Create(ctx, trainJob(ns, "ours", "torch"))).To(Succeed())
		Eventually(jobSetOf(ns, "ours")).Should(Not(BeNil()))

		Consistently(func(g Gomega) {
			err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "elsewhere"}, &jobsetv1alpha2.JobSet{})
			g.Expect(isNotFound(err)).To(BeTrue(), "got %v", err)
			g.Expect(trainJobOf(ns, "elsewhere")(g).Status.Conditions).To(BeEmpty())
		}).Should(Succeed())
	})

	It("does not rewrite objects whose desired state has not changed", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		Expect(k8sClient.Create(ctx, trainJob(ns, "steady", "torch"))).To(Succeed())
		Eventually(jobSetOf(ns, "steady")).Should(Not(BeNil()))
		before := jobSetOf(ns, "steady")(Default)
		unchanged := objectApplies("JobSet", "unchanged")

		// A status change of the JobSet triggers a reconcile of its TrainJob.
		before.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Active: 1}}
		Expect(k8sClient.Status().Update(ctx, before)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(trainJobOf(ns, "steady")(g).Status.JobsStatus).To(ContainElement(HaveField("Active", ptr.To[int32](1))))
		}).Should(Succeed())
		Eventually(func() float64 { return objectApplies("JobSet", "unchanged") }).Should(BeNumerically(">", unchanged))
		// controller-runtime's own metrics are served for the controller.
		Expect(metricSum("controller_runtime_reconcile_total", map[string]string{"controller": "trainjob"})).To(BeNumerically(">", 0))

		// before carries the resourceVersion of the status update.
		after := jobSetOf(ns, "steady")(Default)
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion))
	})
})

var _ = Describe("admission", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("rejects numNodes 0 naming the field", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "zero", "torch")
		job.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](0)}
		err := k8sClient.Create(ctx, job)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.trainer.numNodes"))
	})

	It("rejects an unknown runtime kind naming the field", func() {
		job := trainJob(ns, "odd", "torch")
		job.Spec.RuntimeRef.Kind = ptr.To("PyTorchRuntime")
		err := k8sClient.Create(ctx, job)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.runtimeRef.kind"))
		Expect(err.Error()).To(ContainSubstring(`"PyTorchRuntime"`))
	})

	It("rejects a PET_* variable on a torch runtime naming the field", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "pet", "torch")
		job.Spec.Trainer = &trainer.Trainer{Env: []corev1.EnvVar{{Name: "OK", Value: "1"}, {Name: "PET_NNODES", Value: "9"}}}
		err := k8sClient.Create(ctx, job)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.trainer.env[1].name"))
	})

	It("rejects a bad numProcPerNode naming the field", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "procs", "torch")
		job.Spec.Trainer = &trainer.Trainer{NumProcPerNode: ptr.To(intstr.FromString("many"))}
		err := k8sClient.Create(ctx, job)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.trainer.numProcPerNode"))
	})

	It("rejects a runtime whose mlPolicy key no enabled plugin owns, naming the key", func() {
		rt := torchRuntime(ns, "deepspeed", false)
		rt.Spec.MLPolicy = &trainer.MLPolicy{Extra: map[string]apiextensionsv1.JSON{"deepspeed": {Raw: []byte(`{"stage":3}`)}}}
		err := k8sClient.Create(ctx, rt)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.mlPolicy.deepspeed"))
		Expect(err.Error()).To(ContainSubstring("no enabled plugin owns this key"))
	})

	It("keeps a vendor policy key through the API server", func() {
		rt := torchRuntime(ns, "vendor", false)
		rt.Spec.PodGroupPolicy = &trainer.PodGroupPolicy{Extra: map[string]apiextensionsv1.JSON{"kai": {Raw: []byte(`{"queue":"a"}`)}}}
		// No plugin owns podGroupPolicy.kai either, so the webhook refuses
		// it; what matters here is that the key reached the webhook intact.
		err := k8sClient.Create(ctx, rt)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.podGroupPolicy.kai"))
	})

	It("warns, but accepts, a TrainJob whose runtime does not exist yet", func() {
		job := trainJob(ns, "ahead", "not-yet")
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
	})
})

// objectApplies reads the controller's apply counter from the metrics
// registry, summed over plugins.
func objectApplies(kind, result string) float64 {
	return metricSum("trainforge_object_applies_total", map[string]string{"kind": kind, "result": result})
}

// metricSum sums the counters of a metric whose labels include want.
func metricSum(name string, want map[string]string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue metrics
				}
			}
			total += m.GetCounter().GetValue()
		}
	}
	return total
}

func fieldManagers(entries []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Manager)
	}
	return out
}
