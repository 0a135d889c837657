package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// finishJobSet writes a JobSet status that finishes its TrainJob: Completed
// or Failed.
func finishJobSet(c client.Client, ns, name string, typ jobsetv1alpha2.JobSetConditionType) {
	GinkgoHelper()
	reason := "AllJobsCompleted"
	if typ == jobsetv1alpha2.JobSetFailed {
		reason = "FailedJobs"
	}
	Eventually(func(g Gomega) {
		js := &jobsetv1alpha2.JobSet{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, js)).To(Succeed())
		js.Status.Conditions = []metav1.Condition{{Type: string(typ), Status: metav1.ConditionTrue, Reason: reason, Message: "done", LastTransitionTime: metav1.Now()}}
		g.Expect(c.Status().Update(ctx, js)).To(Succeed())
	}).Should(Succeed())
}

// finishedAt waits for a TrainJob to finish (its condition typ True) and
// returns when it did.
func finishedAt(c client.Client, ns, name, typ string) time.Time {
	GinkgoHelper()
	var at time.Time
	Eventually(func(g Gomega) {
		job := &trainer.TrainJob{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)).To(Succeed())
		cond := conditionOf(job, typ)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		at = cond.LastTransitionTime.Time
	}).Should(Succeed())
	return at
}

// deletedInForegroundAt waits for the controller to delete a TrainJob and
// returns when it did. The suite runs no garbage collector, so the
// TrainJob stays, marked for deletion, with the finalizer of a foreground
// delete: it goes after its JobSet does (the e2e suite shows it on a
// cluster with the garbage collector).
func deletedInForegroundAt(c client.Client, ns, name string, within time.Duration) time.Time {
	GinkgoHelper()
	var at time.Time
	Eventually(func(g Gomega) {
		job := &trainer.TrainJob{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)).To(Succeed())
		g.Expect(job.DeletionTimestamp).NotTo(BeNil())
		g.Expect(job.Finalizers).To(ContainElement(metav1.FinalizerDeleteDependents))
		at = job.DeletionTimestamp.Time
	}, within, 200*time.Millisecond).Should(Succeed())
	return at
}

var _ = Describe("ttlSecondsAfterFinished", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("deletes a completed TrainJob in the foreground that long after it completed, not before", func() {
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "done", "torch")
		job.Spec.TTLSecondsAfterFinished = ptr.To[int32](4)
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		Eventually(jobSetOf(ns, "done")).ShouldNot(BeNil())

		finishJobSet(k8sClient, ns, "done", jobsetv1alpha2.JobSetCompleted)
		finished := finishedAt(k8sClient, ns, "done", trainer.TrainJobComplete)
		Consistently(func(g Gomega) *metav1.Time { return trainJobOf(ns, "done")(g).DeletionTimestamp }, "2s").Should(BeNil())
		deleted := deletedInForegroundAt(k8sClient, ns, "done", 10*time.Second)
		// Timestamps keep whole seconds.
		Expect(deleted).To(BeTemporally(">=", finished.Add(4*time.Second)))
		Eventually(func(g Gomega) []string { return eventReasons(g, ns, "done") }).Should(ContainElement(trainer.TrainJobTTLExpiredReason))
	})

	It("takes the runtime's runPolicy default for a TrainJob without one, and a failed TrainJob goes too", func() {
		rt := torchRuntime(ns, "torch", false)
		rt.Spec.RunPolicy = &trainer.RunPolicy{TTLSecondsAfterFinished: ptr.To[int32](1)}
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		Expect(k8sClient.Create(ctx, trainJob(ns, "broken", "torch"))).To(Succeed())
		Eventually(jobSetOf(ns, "broken")).ShouldNot(BeNil())

		finishJobSet(k8sClient, ns, "broken", jobsetv1alpha2.JobSetFailed)
		finished := finishedAt(k8sClient, ns, "broken", trainer.TrainJobFailed)
		Expect(deletedInForegroundAt(k8sClient, ns, "broken", 10*time.Second)).To(BeTemporally(">=", finished.Add(time.Second)))
	})

	It("keeps a TrainJob whose own value is longer than its runtime's, and its value can be changed once it finished", func() {
		rt := torchRuntime(ns, "torch", false)
		rt.Spec.RunPolicy = &trainer.RunPolicy{TTLSecondsAfterFinished: ptr.To[int32](0)}
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		job := trainJob(ns, "kept", "torch")
		job.Spec.TTLSecondsAfterFinished = ptr.To[int32](3600)
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		Eventually(jobSetOf(ns, "kept")).ShouldNot(BeNil())
		finishJobSet(k8sClient, ns, "kept", jobsetv1alpha2.JobSetCompleted)
		finishedAt(k8sClient, ns, "kept", trainer.TrainJobComplete)
		Consistently(func(g Gomega) *metav1.Time { return trainJobOf(ns, "kept")(g).DeletionTimestamp }, "3s").Should(BeNil())

		By("shortening it on the finished TrainJob")
		Eventually(func(g Gomega) {
			j := trainJobOf(ns, "kept")(g)
			j.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
			g.Expect(k8sClient.Update(ctx, j)).To(Succeed())
		}).Should(Succeed())
		deletedInForegroundAt(k8sClient, ns, "kept", 10*time.Second)
	})

	It("rejects a negative value on a TrainJob and on a runtime, naming the field", func() {
		job := trainJob(ns, "negative", "torch")
		job.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1)
		err := k8sClient.Create(ctx, job)
		Expect(err).To(MatchError(ContainSubstring("spec.ttlSecondsAfterFinished: Invalid value: -1: spec.ttlSecondsAfterFinished in body should be greater than or equal to 0")))

		rt := torchRuntime(ns, "torch", false)
		rt.Spec.RunPolicy = &trainer.RunPolicy{TTLSecondsAfterFinished: ptr.To[int32](-5)}
		err = k8sClient.Create(ctx, rt)
		Expect(err).To(MatchError(ContainSubstring("spec.runPolicy.ttlSecondsAfterFinished: Invalid value: -5: spec.runPolicy.ttlSecondsAfterFinished in body should be greater than or equal to 0")))
	})
})
