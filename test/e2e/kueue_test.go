package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	jobsetplugin "github.com/trainforge/trainforge/builtin/jobset"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// Kueue's API, written as unstructured objects: the controller does not
// depend on Kueue's module.
var kueueGV = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

func kueueObject(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(kueueGV.WithKind(kind))
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// workload is what a spec reads of one of Kueue's Workloads.
type workload struct {
	Name     string
	UID      types.UID
	Count    int64
	Admitted bool
	Pending  string // the message of its QuotaReserved=False condition
}

// workloadsOf lists the Workloads Kueue made for a TrainJob (owned by it),
// by name.
func workloadsOf(g Gomega, ns, owner string) []workload {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(kueueGV.WithKind("WorkloadList"))
	g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	var out []workload
	for _, u := range list.Items {
		owned := false
		for _, ref := range u.GetOwnerReferences() {
			owned = owned || (ref.Kind == trainer.TrainJobKind && ref.Name == owner)
		}
		if !owned || u.GetDeletionTimestamp() != nil {
			continue
		}
		w := workload{Name: u.GetName(), UID: u.GetUID()}
		podSets, _, _ := unstructured.NestedSlice(u.Object, "spec", "podSets")
		for _, ps := range podSets {
			if n, ok, _ := unstructured.NestedInt64(ps.(map[string]any), "count"); ok {
				w.Count += n
			}
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			c := c.(map[string]any)
			switch {
			case c["type"] == "Admitted" && c["status"] == "True":
				w.Admitted = true
			case c["type"] == "QuotaReserved" && c["status"] == "False":
				w.Pending, _ = c["message"].(string)
			}
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// eventReasons are the reasons of the Events of a TrainJob, oldest first,
// with their sources: "Stopped (kueue-admission)".
func eventReasons(g Gomega, ns, name string) []string {
	list := &corev1.EventList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].CreationTimestamp.Before(&list.Items[j].CreationTimestamp) })
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == trainer.TrainJobKind && e.InvolvedObject.Name == name {
			out = append(out, e.Reason)
			GinkgoWriter.Printf("event of %s: %s %s (%s): %s\n", name, e.Type, e.Reason, e.Source.Component+e.ReportingController, e.Message)
		}
	}
	return out
}

// count is how many of got are want.
func count(got []string, want string) int {
	n := 0
	for _, g := range got {
		if g == want {
			n++
		}
	}
	return n
}

func trainerParallelism(g Gomega, ns, name string) int32 {
	job := &batchv1.Job{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name + "-node-0"}, job)).To(Succeed())
	return ptr.Deref(job.Spec.Parallelism, 0)
}

// The Kueue manager runs for this spec only: the suite's cluster is shared,
// and with Kueue's TrainJob webhooks registered (failure policy Fail) every
// other spec's TrainJob would go through it too. Starting it takes seconds
// (its CRDs, its webhooks); it is stopped, webhooks first, at the end.
var _ = Describe("an elastic TrainJob in a Kueue queue, with the real Kueue manager", Label("Kueue"), func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		kueue, err := cluster.StartKueue(ctx)
		DeferCleanup(kueue.Stop)
		Expect(err).NotTo(HaveOccurred())
	})

	It("is admitted by Kueue; on a resize Kueue stops it, replaces its Workload and admits it again at the new size; beyond the quota it waits suspended", func() {
		By("a ResourceFlavor, a ClusterQueue with 4 GPUs, a LocalQueue")
		flavor := kueueObject("ResourceFlavor", "", ns, map[string]any{})
		queue := kueueObject("ClusterQueue", "", ns, map[string]any{
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}},
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{string(simcluster.GPUResource)},
				"flavors": []any{map[string]any{"name": ns, "resources": []any{map[string]any{
					"name": string(simcluster.GPUResource), "nominalQuota": "4",
				}}}},
			}},
		})
		local := kueueObject("LocalQueue", ns, "team-a", map[string]any{"clusterQueue": ns})
		Expect(simcluster.Apply(ctx, k8s, ns, flavor, queue, local)).To(Succeed())
		DeferCleanup(func() {
			for _, u := range []*unstructured.Unstructured{queue, flavor} {
				Expect(client.IgnoreNotFound(k8s.Delete(ctx, u))).To(Succeed())
			}
		})

		torchRuntime{
			annotations: map[string]string{runForAnnotation: "10m"},
			elastic:     &trainer.TorchElasticPolicy{MinNodes: ptr.To[int32](2), MaxNodes: ptr.To[int32](6)},
		}.create(ns, "elastic")
		job := newTrainJob(ns, "queued", "elastic", 2, 1)
		job.Labels = map[string]string{jobsetplugin.KueueQueueNameLabel: "team-a"}
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Expect(job.Spec.Suspend).To(HaveValue(BeTrue()), "suspended by Kueue's webhook on creation")

		By("admitted: a Workload of 2 pods admitted, the TrainJob resumed, its 2 pods running")
		var first workload
		Eventually(func(g Gomega) {
			wls := workloadsOf(g, ns, "queued")
			g.Expect(wls).To(HaveLen(1))
			g.Expect(wls[0]).To(And(HaveField("Admitted", true), HaveField("Count", BeEquivalentTo(2))))
			first = wls[0]
		}).Should(Succeed())
		expectState(ns, "queued", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		Expect(getTrainJob(Default, ns, "queued").Spec.Suspend).To(HaveValue(BeFalse()))
		before := map[types.UID]bool{}
		for _, p := range podsOf(Default, ns, "queued") {
			before[p.UID] = true
		}
		Expect(before).To(HaveLen(2))

		By("scaled to 3: Kueue stops it, deletes the Workload of 2, admits one of 3, and it runs at 3")
		Expect(scaleTrainJob(ns, "queued", 3)).To(Succeed())
		var sawSuspended bool
		Eventually(func(g Gomega) {
			job := getTrainJob(g, ns, "queued")
			sawSuspended = sawSuspended || ptr.Deref(job.Spec.Suspend, false)
			wls := workloadsOf(g, ns, "queued")
			g.Expect(wls).To(HaveLen(1))
			g.Expect(wls[0]).To(And(HaveField("Admitted", true), HaveField("Count", BeEquivalentTo(3))))
			g.Expect(wls[0].UID).NotTo(Equal(first.UID), "a new Workload")
			g.Expect(ptr.Deref(job.Spec.Suspend, true)).To(BeFalse())
			g.Expect(trainerParallelism(g, ns, "queued")).To(BeEquivalentTo(3))
			idx, ph := livePodIndexes(g, ns, "queued")
			g.Expect(idx).To(Equal([]string{"0", "1", "2"}))
			g.Expect(ph).To(HaveEach(corev1.PodRunning))
		}).Should(Succeed())
		GinkgoWriter.Println("saw the TrainJob suspended while polling:", sawSuspended)
		reasons := eventReasons(Default, ns, "queued")
		GinkgoWriter.Println("the TrainJob's events:", strings.Join(reasons, ", "))
		// Events carry times to the second, and Kueue stops the job and
		// deletes its Workload in the same pass: what is asserted is that
		// each happened, and the second suspension and resumption (the
		// first are Kueue's admission). The controller and Kueue both see
		// the new size at once: when the controller's pass comes first, it
		// holds the running JobSet at its size (ResizeRefused); when
		// Kueue's comes first, the controller finds the TrainJob
		// suspended and applies the JobSet whole at the new size. Either
		// way no pod of the old size is resized in place (below).
		Expect(reasons).To(ContainElement("DeletedWorkload"), "Kueue deleted the Workload of 2")
		refused := slices.Contains(reasons, trainer.TrainJobResizeRefusedReason)
		GinkgoWriter.Println("the controller held the live resize before Kueue stopped the job:", refused)
		Expect(count(reasons, trainer.TrainJobSuspendedReason)).To(BeNumerically(">=", 2), "Kueue stopped the TrainJob again: %v", reasons)
		Expect(count(reasons, trainer.TrainJobResumedReason)).To(BeNumerically(">=", 2), "Kueue resumed it again: %v", reasons)
		for _, p := range podsOf(Default, ns, "queued") {
			Expect(before).NotTo(HaveKey(p.UID), "every pod restarted: pod %s of the old size kept running", p.Name)
		}
		expectState(ns, "queued", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		Eventually(func(g Gomega) *trainer.NodesStatus { return getTrainJob(g, ns, "queued").Status.Nodes }).Should(HaveField("Current", BeEquivalentTo(3)))
		if refused {
			Eventually(func(g Gomega) *metav1.Condition {
				return meta.FindStatusCondition(getTrainJob(g, ns, "queued").Status.Conditions, trainer.TrainJobResized)
			}).Should(And(HaveField("Status", metav1.ConditionTrue), HaveField("Reason", trainer.TrainJobResizedReason)), "the refusal is over at the new size")
		} else {
			if c := meta.FindStatusCondition(getTrainJob(Default, ns, "queued").Status.Conditions, trainer.TrainJobResized); c != nil {
				Expect(c.Status).NotTo(Equal(metav1.ConditionFalse), "no resize was refused: %s", c.Message)
			}
		}
		GinkgoWriter.Println("the TrainJob's conditions:", conditions(getTrainJob(Default, ns, "queued")))

		By("scaled to 5, beyond the quota of 4 GPUs: stopped, and it waits suspended, its Workload of 5 not admitted")
		Expect(scaleTrainJob(ns, "queued", 5)).To(Succeed())
		Eventually(func(g Gomega) {
			job := getTrainJob(g, ns, "queued")
			g.Expect(job.Spec.Suspend).To(HaveValue(BeTrue()))
			wls := workloadsOf(g, ns, "queued")
			g.Expect(wls).To(HaveLen(1))
			g.Expect(wls[0]).To(And(HaveField("Admitted", false), HaveField("Count", BeEquivalentTo(5))))
			g.Expect(wls[0].Pending).To(ContainSubstring("insufficient quota"))
			g.Expect(livePodIndexes(g, ns, "queued")).To(BeEmpty())
		}).Should(Succeed())
		Consistently(func(g Gomega) bool { return ptr.Deref(getTrainJob(g, ns, "queued").Spec.Suspend, false) }, "3s").Should(BeTrue())
		job = getTrainJob(Default, ns, "queued")
		GinkgoWriter.Println("over quota, the TrainJob's conditions:", conditions(job))
		Expect(state(job)).To(Equal(trainer.TrainJobSuspended), "conditions: %s", conditions(job))
		Expect(job.Spec.Trainer.NumNodes).To(HaveValue(BeEquivalentTo(5)), "nothing lost: the size asked for stays")

		By("scaled back to 4, within the quota: admitted again and running at 4")
		Expect(scaleTrainJob(ns, "queued", 4)).To(Succeed())
		Eventually(func(g Gomega) {
			wls := workloadsOf(g, ns, "queued")
			g.Expect(wls).To(HaveLen(1))
			g.Expect(wls[0]).To(And(HaveField("Admitted", true), HaveField("Count", BeEquivalentTo(4))))
			g.Expect(trainerParallelism(g, ns, "queued")).To(BeEquivalentTo(4))
			idx, ph := livePodIndexes(g, ns, "queued")
			g.Expect(idx).To(HaveLen(4), fmt.Sprint(idx))
			g.Expect(ph).To(HaveEach(corev1.PodRunning))
		}).Should(Succeed())
		expectState(ns, "queued", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
	})
})
