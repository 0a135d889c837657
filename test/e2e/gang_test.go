package e2e

import (
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// bindings records, from a watch, every pod of a JobSet seen bound to a
// node, and whether GPUs had been released when it was first seen so.
type bindings struct {
	mu       sync.Mutex
	released bool
	early    []string // bound before the release
	bound    map[string]bool
}

func watchBindings(ns, jobSet string) *bindings {
	GinkgoHelper()
	wc, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: k8s.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &corev1.PodList{}, client.InNamespace(ns), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: jobSet})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	b := &bindings{bound: map[string]bool{}}
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted || pod.Spec.NodeName == "" {
				continue
			}
			b.mu.Lock()
			if !b.bound[pod.Name] {
				b.bound[pod.Name] = true
				if !b.released {
					b.early = append(b.early, pod.Name)
				}
			}
			b.mu.Unlock()
		}
	}()
	return b
}

func (b *bindings) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.released = true
}

func (b *bindings) boundEarly() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.early...)
}

var _ = Describe("a gang", func() {
	It("stays unscheduled while the GPUs it needs together are not free, then starts whole", func() {
		ns := newNamespace()
		torchRuntime{gang: true, annotations: map[string]string{runForAnnotation: "5s"}}.create(ns, "gang")
		unblock := holdTwoGPUNodes(ns)

		By("a gang of three nodes of 8 GPUs: 24, with 16 free")
		b := watchBindings(ns, "gang")
		trainJob(ns, "gang", "gang", 3, 8)
		expectPodGroup(ns, "gang", 3, 24)
		// A scheduler without gangs would place two of them now. The
		// scheduler has tried each and left it unscheduled.
		Eventually(func(g Gomega) {
			pods := podsOf(g, ns, "gang")
			g.Expect(pods).To(HaveLen(3))
			for _, p := range pods {
				g.Expect(p.Spec.NodeName).To(BeEmpty(), "pod %s was bound while its gang could not all be", p.Name)
				g.Expect(unscheduledBecause(&p)).To(Equal(corev1.PodReasonUnschedulable), "pod %s", p.Name)
			}
		}).Should(Succeed())
		expectState(ns, "gang", trainer.TrainJobCreated, trainer.TrainJobPodsPendingReason)

		By("the blocker is deleted: its GPUs come free and the whole gang starts")
		b.release()
		unblock()
		Eventually(func(g Gomega) []corev1.PodPhase { return phases(podsOf(g, ns, "gang")) }).Should(
			And(HaveLen(3), HaveEach(corev1.PodRunning)))
		Expect(b.boundEarly()).To(BeEmpty(), "gang pods were bound before the GPUs were free")
		expectState(ns, "gang", trainer.TrainJobComplete, trainer.TrainJobCompletedReason)
	})

	It("of an elastic job starts with its minimum nodes while the others wait for room, then grows to its size", func() {
		ns := newNamespace()
		torchRuntime{
			gang:        true,
			annotations: map[string]string{runForAnnotation: "10m"},
			elastic:     &trainer.TorchElasticPolicy{MinNodes: ptr.To[int32](2), MaxNodes: ptr.To[int32](4)},
		}.create(ns, "elastic-gang")
		unblock := holdTwoGPUNodes(ns)

		By("an elastic gang of four nodes of 8 GPUs, at least two: its minimum fits in the 16 free")
		trainJob(ns, "elastic", "elastic-gang", 4, 8)
		pg := expectPodGroup(ns, "elastic", 2, 16)
		// A gang of its size (32 GPUs) would leave all four pending.
		Eventually(func(g Gomega) {
			var running, waiting int
			for _, p := range podsOf(g, ns, "elastic") {
				switch {
				case p.Status.Phase == corev1.PodRunning:
					running++
				case p.Spec.NodeName == "" && unscheduledBecause(&p) == corev1.PodReasonUnschedulable:
					waiting++
				}
			}
			g.Expect([]int{running, waiting}).To(Equal([]int{2, 2}), "running and unschedulable trainer pods")
		}).Should(Succeed())

		By("the blocker is deleted: the two waiting pods join, and the job is running at its size")
		unblock()
		Eventually(func(g Gomega) []corev1.PodPhase { return phases(podsOf(g, ns, "elastic")) }).Should(
			And(HaveLen(4), HaveEach(corev1.PodRunning)))
		expectState(ns, "elastic", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "elastic"}, pg)).To(Succeed())
		Expect(pg.Spec.MinMember).To(Equal(int32(2)), "the PodGroup follows the minimum, not the size")
	})
})

// holdTwoGPUNodes runs a job without a gang on two of the cluster's four
// GPU nodes, and returns what deletes it to free them.
func holdTwoGPUNodes(ns string) (unblock func()) {
	GinkgoHelper()
	torchRuntime{annotations: map[string]string{runForAnnotation: "10m"}}.create(ns, "plain")
	By("a job without a gang holds two of the four GPU nodes")
	trainJob(ns, "blocker", "plain", 2, 8)
	expectState(ns, "blocker", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
	return func() {
		GinkgoHelper()
		Expect(k8s.Delete(ctx, &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blocker"}})).To(Succeed())
	}
}

// expectPodGroup waits for a TrainJob's PodGroup and checks its gang:
// minMember pods and gpus GPUs in minResources.
func expectPodGroup(ns, name string, minMember int32, gpus int64) *schedulingv1alpha1.PodGroup {
	GinkgoHelper()
	pg := &schedulingv1alpha1.PodGroup{}
	Eventually(func() error { return k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, pg) }).Should(Succeed())
	Expect(pg.Spec.MinMember).To(Equal(minMember))
	Expect(pg.Spec.MinResources.Name(simcluster.GPUResource, "").Value()).To(Equal(gpus))
	return pg
}

// unscheduledBecause is the reason the scheduler left a pod unscheduled,
// or "" if it has not said.
func unscheduledBecause(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Reason
		}
	}
	return ""
}
