package e2e

import (
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/internal/trainjobscale"
)

// scaleTrainJob writes replicas through the TrainJob's scale subresource,
// as kubectl scale does.
func scaleTrainJob(ns, name string, replicas int32) error {
	return trainjobscale.Set(ctx, k8s, client.ObjectKey{Namespace: ns, Name: name}, replicas)
}

// livePodIndexes are the completion indexes of a JobSet's pods that are
// not being deleted, sorted, with their phases.
func livePodIndexes(g Gomega, ns, name string) ([]string, []corev1.PodPhase) {
	var idx []string
	var ph []corev1.PodPhase
	pods := podsOf(g, ns, name)
	slices.SortFunc(pods, func(a, b corev1.Pod) int {
		return compareIndex(a.Annotations[batchv1.JobCompletionIndexAnnotation], b.Annotations[batchv1.JobCompletionIndexAnnotation])
	})
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		idx = append(idx, p.Annotations[batchv1.JobCompletionIndexAnnotation])
		ph = append(ph, p.Status.Phase)
	}
	return idx, ph
}

func compareIndex(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var _ = Describe("an elastic TrainJob", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("follows kubectl scale 2 → 4 → 3 in place: its Job's parallelism, pods added and the highest removed, the same JobSet", func() {
		cpu := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)},
		}}
		torchRuntime{
			annotations: map[string]string{runForAnnotation: "10m"},
			elastic:     &trainer.TorchElasticPolicy{MinNodes: ptr.To[int32](2), MaxNodes: ptr.To[int32](4), Metrics: []autoscalingv2.MetricSpec{cpu}},
		}.create(ns, "elastic")
		trainJob(ns, "grow", "elastic", 2, 0)
		expectState(ns, "grow", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		pods := podsOf(Default, ns, "grow")
		Expect(pods).To(HaveLen(2))
		Expect(envOf(&pods[0], "node")).To(And(HaveKeyWithValue("PET_NNODES", "2:4"), HaveKeyWithValue("PET_RDZV_BACKEND", "c10d")))
		js := &jobsetv1alpha2.JobSet{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "grow"}, js)).To(Succeed())
		uid := js.UID
		first := map[string]types.UID{}
		for _, p := range pods {
			first[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = p.UID
		}

		for _, step := range []struct {
			n       int32
			indexes []string
		}{{4, []string{"0", "1", "2", "3"}}, {3, []string{"0", "1", "2"}}} {
			By(fmt.Sprintf("scaled to %d", step.n))
			Expect(scaleTrainJob(ns, "grow", step.n)).To(Succeed())
			Eventually(func(g Gomega) {
				job := &batchv1.Job{}
				g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "grow-node-0"}, job)).To(Succeed())
				g.Expect([]int32{ptr.Deref(job.Spec.Parallelism, 0), ptr.Deref(job.Spec.Completions, 0)}).To(Equal([]int32{step.n, step.n}))
				idx, ph := livePodIndexes(g, ns, "grow")
				g.Expect(idx).To(Equal(step.indexes))
				g.Expect(ph).To(HaveEach(corev1.PodRunning))
				g.Expect(getTrainJob(g, ns, "grow").Status.Nodes).To(HaveField("Current", step.n))
			}).Should(Succeed())
		}

		By("the same JobSet, no restart, and the pods that kept running untouched")
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "grow"}, js)).To(Succeed())
		Expect(js.UID).To(Equal(uid))
		Expect(js.Status.Restarts).To(BeZero())
		for _, p := range podsOf(Default, ns, "grow") {
			if want, ok := first[p.Annotations[batchv1.JobCompletionIndexAnnotation]]; ok && p.DeletionTimestamp == nil {
				Expect(p.UID).To(Equal(want), "pod %s was replaced", p.Name)
			}
		}
		job := getTrainJob(Default, ns, "grow")
		Expect(job.Status.Restarts).To(BeNil())
		Expect(job.Status.Nodes.LastResizeTime).NotTo(BeNil())
		Expect(state(job)).To(Equal(trainer.TrainJobRunning))

		By("an autoscaler built for it, and accepted")
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "grow"}, hpa)).To(Succeed())
		Expect(hpa.Spec.ScaleTargetRef.Kind).To(Equal(trainer.TrainJobKind))
		Expect(hpa.Spec.MaxReplicas).To(BeEquivalentTo(4))
	})

	It("replaces a trainer pod lost to a node failure while the others run on: no restart, no budget spent", func() {
		torchRuntime{
			annotations:   map[string]string{runForAnnotation: "10m"},
			restartPolicy: &trainer.RestartPolicy{MaxRestarts: ptr.To[int32](0)}, // no budget: a restart would fail it
			elastic:       &trainer.TorchElasticPolicy{MinNodes: ptr.To[int32](2), MaxNodes: ptr.To[int32](3)},
		}.create(ns, "spot")
		trainJob(ns, "spot", "spot", 3, 0)
		expectState(ns, "spot", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		js := &jobsetv1alpha2.JobSet{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "spot"}, js)).To(Succeed())
		uid := js.UID
		pods := podsOf(Default, ns, "spot")
		Expect(pods).To(HaveLen(3))
		kept := map[types.UID]bool{}
		var lost corev1.Pod
		for _, p := range pods {
			if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "1" {
				lost = p
			} else {
				kept[p.UID] = true
			}
		}

		By("node 1's pod lost, as the taint manager and PodGC leave it")
		lost.Status.Phase = corev1.PodFailed
		lost.Status.Conditions = append(lost.Status.Conditions, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "DeletionByTaintManager",
			Message: "Taint manager: deleting due to NoExecute taint", LastTransitionTime: metav1.Now(),
		})
		Expect(k8s.Status().Update(ctx, &lost)).To(Succeed())

		By("replaced by its Job, the others untouched, the same JobSet")
		Eventually(func(g Gomega) {
			idx, ph := livePodIndexes(g, ns, "spot")
			g.Expect(idx).To(Equal([]string{"0", "1", "2"}))
			g.Expect(ph).To(HaveEach(corev1.PodRunning))
			var replacement bool
			for _, p := range podsOf(g, ns, "spot") {
				if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "1" && p.UID != lost.UID && p.Status.Phase == corev1.PodRunning {
					replacement = true
				}
			}
			g.Expect(replacement).To(BeTrue(), "a new pod for index 1")
		}).Should(Succeed())
		for _, p := range podsOf(Default, ns, "spot") {
			if p.Annotations[batchv1.JobCompletionIndexAnnotation] != "1" {
				Expect(kept).To(HaveKey(p.UID), "pod %s was replaced", p.Name)
			}
		}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "spot"}, js)).To(Succeed())
		Expect(js.UID).To(Equal(uid))
		Expect(js.Status.Restarts).To(BeZero())
		// Running again once the replacement runs (it was not while the
		// lost pod was gone).
		job := expectState(ns, "spot", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		Expect(job.Status.Restarts).To(BeNil())
	})

	It("refuses kubectl scale of a TrainJob whose runtime is not elastic", func() {
		torchRuntime{annotations: map[string]string{runForAnnotation: "10m"}}.create(ns, "torch")
		trainJob(ns, "fixed", "torch", 2, 0)
		expectState(ns, "fixed", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		err := scaleTrainJob(ns, "fixed", 3)
		Expect(err).To(MatchError(And(ContainSubstring("spec.trainer.numNodes"),
			ContainSubstring("field is immutable: only a TrainJob whose runtime sets mlPolicy.torch.elasticPolicy can be resized"))))
		Consistently(func(g Gomega) []corev1.Pod { return podsOf(g, ns, "fixed") }, "3s").Should(HaveLen(2))
	})
})
