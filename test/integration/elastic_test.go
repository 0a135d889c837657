package integration

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/internal/trainjobscale"
)

// elasticRuntime is torchRuntime with an elasticPolicy of [2, 4] nodes.
func elasticRuntime(ns, name string, metrics ...autoscalingv2.MetricSpec) *trainer.TrainingRuntime {
	rt := torchRuntime(ns, name, false)
	rt.Spec.MLPolicy.Torch.ElasticPolicy = &trainer.TorchElasticPolicy{
		MinNodes: ptr.To[int32](2), MaxNodes: ptr.To[int32](4), MaxRestarts: ptr.To[int32](2), Metrics: metrics,
	}
	return rt
}

// scaleTo writes spec.trainer.numNodes through the TrainJob's scale
// subresource, as kubectl scale and an autoscaler do.
func scaleTo(ns, name string, replicas int32) error {
	return trainjobscale.Set(ctx, k8sClient, client.ObjectKey{Namespace: ns, Name: name}, replicas)
}

func parallelismOf(ns, name string) func(Gomega) [2]int32 {
	return func(g Gomega) [2]int32 {
		rj := replicatedJob(jobSetOf(ns, name)(g), "node")
		return [2]int32{ptr.Deref(rj.Template.Spec.Parallelism, 0), ptr.Deref(rj.Template.Spec.Completions, 0)}
	}
}

// expectResizeRefused waits for TrainJob name's Resized=False condition,
// reason ResizeRefused, whose message has each of says, and checks that
// its trainer Job stays at 2 nodes.
func expectResizeRefused(ns, name string, says ...string) {
	GinkgoHelper()
	matchers := []gomegatypes.GomegaMatcher{
		HaveField("Status", metav1.ConditionFalse),
		HaveField("Reason", trainer.TrainJobResizeRefusedReason),
	}
	for _, m := range says {
		matchers = append(matchers, HaveField("Message", ContainSubstring(m)))
	}
	Eventually(func(g Gomega) *metav1.Condition {
		return conditionOf(trainJobOf(ns, name)(g), trainer.TrainJobResized)
	}).Should(And(matchers...))
	Consistently(parallelismOf(ns, name)).Should(Equal([2]int32{2, 2}))
}

// The JobSet controller and its webhook do not run here (envtest has no
// JobSet webhook): these specs show what Trainforge writes and what the
// API server accepts. The e2e suite, on the simulated cluster, runs the
// JobSet controller with its ElasticJobSet gate.
var _ = Describe("an elastic TrainJob", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("is resized in place through its scale subresource, within its bounds", func() {
		Expect(k8sClient.Create(ctx, elasticRuntime(ns, "elastic"))).To(Succeed())
		job := trainJob(ns, "grow", "elastic")
		job.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
		Expect(k8sClient.Create(ctx, job)).To(Succeed())

		Eventually(func(g Gomega) *trainer.NodesStatus { return trainJobOf(ns, "grow")(g).Status.Nodes }).Should(Equal(&trainer.NodesStatus{
			Current:  2,
			MinNodes: ptr.To[int32](2), MaxNodes: ptr.To[int32](4), Range: "2:4",
			Selector: "jobset.sigs.k8s.io/jobset-name=grow,jobset.sigs.k8s.io/replicatedjob-name=node",
		}))
		before := jobSetOf(ns, "grow")(Default)
		Expect(container(before, "node", "node").Env).To(ContainElements(
			corev1.EnvVar{Name: "PET_NNODES", Value: "2:4"},
			corev1.EnvVar{Name: "PET_RDZV_BACKEND", Value: "c10d"},
			corev1.EnvVar{Name: "PET_RDZV_ENDPOINT", Value: "grow-node-0-0.grow." + ns + ".svc.cluster.local:29500"},
			corev1.EnvVar{Name: "PET_MAX_RESTARTS", Value: "2"},
		))
		Expect(ptr.Deref(before.Spec.Suspend, true)).To(BeFalse(), "the JobSet runs: only its live fields may change")

		// The scale subresource reads the size and the selector.
		scale := &autoscalingv1.Scale{}
		Expect(k8sClient.SubResource("scale").Get(ctx, job, scale)).To(Succeed())
		Expect(scale.Spec.Replicas).To(BeEquivalentTo(2))
		Expect(scale.Status.Replicas).To(BeEquivalentTo(2))
		Expect(scale.Status.Selector).To(Equal("jobset.sigs.k8s.io/jobset-name=grow,jobset.sigs.k8s.io/replicatedjob-name=node"))

		for _, n := range []int32{4, 3} {
			Expect(scaleTo(ns, "grow", n)).To(Succeed())
			Eventually(parallelismOf(ns, "grow")).Should(Equal([2]int32{n, n}))
			Eventually(func(g Gomega) int32 { return trainJobOf(ns, "grow")(g).Status.Nodes.Current }).Should(Equal(n))
		}
		after := jobSetOf(ns, "grow")(Default)
		Expect(after.UID).To(Equal(before.UID), "the JobSet is never recreated")
		// Nothing but the size changed: the pods' template is the same.
		Expect(replicatedJob(after, "node").Template.Spec.Template).To(Equal(replicatedJob(before, "node").Template.Spec.Template))

		got := trainJobOf(ns, "grow")(Default)
		Expect(got.Status.Nodes.LastResizeTime).NotTo(BeNil())
		c := conditionOf(got, trainer.TrainJobResized)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Message).To(ContainSubstring("parallelism 4 → 3"))
		Eventually(func(g Gomega) []string { return eventReasons(g, ns, "grow") }).Should(ContainElement(trainer.TrainJobResizedReason))

		// Out of bounds: refused by the API server, naming the bounds.
		err := scaleTo(ns, "grow", 5)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.trainer.numNodes: Invalid value: must be within 2:4 (minNodes:maxNodes"))
		err = scaleTo(ns, "grow", 1)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("must be within 2:4"))
		// An edit of the TrainJob goes through the webhook too.
		edit := trainJobOf(ns, "grow")(Default)
		edit.Spec.Trainer.NumNodes = ptr.To[int32](7)
		err = k8sClient.Update(ctx, edit)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("must be within 2:4"))
		// The rest of spec.trainer stays immutable.
		edit = trainJobOf(ns, "grow")(Default)
		edit.Spec.Trainer.Image = ptr.To("other")
		err = k8sClient.Update(ctx, edit)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("field is immutable"))
	})

	It("refuses to resize a TrainJob whose runtime is not elastic", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "fixed", "torch")
		job.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		Eventually(jobSetOf(ns, "fixed")).ShouldNot(BeNil())
		err := scaleTo(ns, "fixed", 3)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.trainer.numNodes: Invalid value: field is immutable"))
		edit := trainJobOf(ns, "fixed")(Default)
		edit.Spec.Trainer.NumNodes = ptr.To[int32](3)
		err = k8sClient.Update(ctx, edit)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("field is immutable"))
		// Kubeflow compatibility: no elastic variables, no status.nodes.
		js := jobSetOf(ns, "fixed")(Default)
		Expect(container(js, "node", "node").Env).To(ContainElement(corev1.EnvVar{Name: "PET_NNODES", Value: "2"}))
		Expect(container(js, "node", "node").Env).NotTo(ContainElement(HaveField("Name", "PET_RDZV_BACKEND")))
		Expect(trainJobOf(ns, "fixed")(Default).Status.Nodes).To(BeNil())
	})

	It("keeps running at its old size, saying why, when the JobSet refuses the resize", func() {
		// A stand-in for JobSet's webhook without its ElasticJobSet gate,
		// which refuses any change of a running JobSet's spec: a
		// ValidatingAdmissionPolicy, for this spec's namespace only.
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "no-elastic-jobset-" + ns},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{"jobset.x-k8s.io"}, APIVersions: []string{"v1alpha2"}, Resources: []string{"jobsets"}},
					},
				}}},
				Validations: []admissionregistrationv1.Validation{{
					Expression: "object.spec.replicatedJobs.all(r, oldObject.spec.replicatedJobs.exists(o, o.name == r.name && o.template.spec.parallelism == r.template.spec.parallelism))",
					Message:    "spec.replicatedJobs: field is immutable",
					Reason:     ptr.To(metav1.StatusReasonInvalid),
				}},
			},
		}
		createCleaned(policy)
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy.Name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{corev1.LabelMetadataName: ns},
				}},
			},
		}
		createCleaned(binding)

		Expect(k8sClient.Create(ctx, elasticRuntime(ns, "elastic"))).To(Succeed())
		job := trainJob(ns, "stuck", "elastic")
		job.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		Eventually(func(g Gomega) *trainer.NodesStatus { return trainJobOf(ns, "stuck")(g).Status.Nodes }).ShouldNot(BeNil())
		before := jobSetOf(ns, "stuck")(Default)
		// The policy takes effect a moment after it is created.
		Eventually(func() error {
			probe := before.DeepCopy()
			replicatedJob(probe, "node").Template.Spec.Parallelism = ptr.To[int32](3)
			return k8sClient.Update(ctx, probe, client.DryRunAll)
		}).Should(MatchError(ContainSubstring("field is immutable")))

		Expect(scaleTo(ns, "stuck", 3)).To(Succeed())
		expectResizeRefused(ns, "stuck", "ElasticJobSet feature gate")
		got := trainJobOf(ns, "stuck")(Default)
		Expect(got.Status.Nodes.Current).To(BeEquivalentTo(2), "status says the size it runs at")
		Expect(conditionOf(got, trainer.TrainJobCreated).Status).To(Equal(metav1.ConditionTrue), "the job keeps running")
		Expect(jobSetOf(ns, "stuck")(Default).UID).To(Equal(before.UID))
		Eventually(func(g Gomega) []string { return eventReasons(g, ns, "stuck") }).Should(ContainElement(trainer.TrainJobResizeRefusedReason))
	})

	It("is not resized while it runs in a Kueue queue, saying why, and is once suspended", func() {
		Expect(k8sClient.Create(ctx, elasticRuntime(ns, "elastic"))).To(Succeed())
		job := trainJob(ns, "queued", "elastic")
		job.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "team-a"}
		job.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		Eventually(func(g Gomega) *trainer.NodesStatus { return trainJobOf(ns, "queued")(g).Status.Nodes }).ShouldNot(BeNil())
		before := jobSetOf(ns, "queued")(Default)

		Expect(scaleTo(ns, "queued", 3)).To(Succeed())
		expectResizeRefused(ns, "queued", `Kueue queue "team-a"`, "Kueue stops (suspends) the TrainJob", "resumes it at the new size")
		Expect(trainJobOf(ns, "queued")(Default).Status.Nodes.Current).To(BeEquivalentTo(2))
		Eventually(func(g Gomega) []string { return eventReasons(g, ns, "queued") }).Should(ContainElement(trainer.TrainJobResizeRefusedReason))

		// Suspended, as Kueue stops a queued job whose size changed (there
		// is no Kueue here; test/e2e/kueue_test.go runs the real one): the
		// JobSet is applied whole at the new size, and resumed at it.
		Eventually(func() error {
			edit := trainJobOf(ns, "queued")(Default)
			edit.Spec.Suspend = ptr.To(true)
			return k8sClient.Update(ctx, edit)
		}).Should(Succeed())
		Eventually(func(g Gomega) bool { return ptr.Deref(jobSetOf(ns, "queued")(g).Spec.Suspend, false) }).Should(BeTrue())
		Eventually(parallelismOf(ns, "queued")).Should(Equal([2]int32{3, 3}))
		Eventually(func() error {
			edit := trainJobOf(ns, "queued")(Default)
			edit.Spec.Suspend = ptr.To(false)
			return k8sClient.Update(ctx, edit)
		}).Should(Succeed())
		Eventually(func(g Gomega) bool { return ptr.Deref(jobSetOf(ns, "queued")(g).Spec.Suspend, true) }).Should(BeFalse())
		Expect(parallelismOf(ns, "queued")(Default)).To(Equal([2]int32{3, 3}))
		Eventually(func(g Gomega) int32 { return trainJobOf(ns, "queued")(g).Status.Nodes.Current }).Should(BeEquivalentTo(3))
		Expect(jobSetOf(ns, "queued")(Default).UID).To(Equal(before.UID), "suspended and resumed, not recreated")
		Eventually(func(g Gomega) *metav1.Condition {
			return conditionOf(trainJobOf(ns, "queued")(g), trainer.TrainJobResized)
		}).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", trainer.TrainJobResizedReason),
			HaveField("Message", ContainSubstring("spec.trainer.numNodes 3"))), "the refusal is over once it runs at the size asked for")
	})

	It("gets a HorizontalPodAutoscaler on its scale subresource when its policy sets metrics", func() {
		metric := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)},
		}}
		Expect(k8sClient.Create(ctx, elasticRuntime(ns, "auto", metric))).To(Succeed())
		job := trainJob(ns, "auto", "auto")
		job.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](3)}
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "auto"}, hpa)
		}).Should(Succeed())
		Expect(hpa.Spec.ScaleTargetRef).To(Equal(autoscalingv2.CrossVersionObjectReference{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "auto"}))
		Expect(hpa.Spec.MinReplicas).To(Equal(ptr.To[int32](2)))
		Expect(hpa.Spec.MaxReplicas).To(BeEquivalentTo(4))
		Expect(hpa.Spec.Metrics).To(Equal([]autoscalingv2.MetricSpec{metric}))
		owner := controllerOwner(hpa)
		Expect(owner).NotTo(BeNil())
		Expect(owner.Kind).To(Equal(trainer.TrainJobKind))
		Expect(owner.Name).To(Equal("auto"))
	})

	It("rejects a TrainJob created outside its runtime's bounds, naming them", func() {
		Expect(k8sClient.Create(ctx, elasticRuntime(ns, "elastic"))).To(Succeed())
		job := trainJob(ns, "big", "elastic")
		job.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](9), ResourcesPerNode: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}}
		err := k8sClient.Create(ctx, job)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("spec.trainer.numNodes: Invalid value: %d: must be between 2 and 4", 9)))
	})
})
