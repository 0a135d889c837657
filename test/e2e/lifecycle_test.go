package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

var _ = Describe("a TrainJob on real Jobs and pods", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("runs to Complete: Running while its pods run, then Complete, with jobsStatus counting its Jobs", func() {
		torchRuntime{annotations: map[string]string{runForAnnotation: "5s"}}.create(ns, "torch")
		trainJob(ns, "train", "torch", 2, 0)

		By("Running while its two pods run, with torchrun's environment")
		expectState(ns, "train", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		pods := podsOf(Default, ns, "train")
		Expect(pods).To(HaveLen(2))
		env := envOf(&pods[0], "node")
		Expect(env).To(HaveKeyWithValue("PET_NNODES", "2"))
		Expect(env).To(HaveKeyWithValue("PET_MASTER_ADDR", "train-node-0-0.train"))
		Expect(env).To(HaveKeyWithValue("PET_MASTER_PORT", "29500"))

		By("Complete once the JobSet completes")
		job := expectState(ns, "train", trainer.TrainJobComplete, trainer.TrainJobCompletedReason)
		complete := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobComplete)
		Expect(complete.Reason).To(Equal("AllJobsCompleted"))
		Expect(phases(podsOf(Default, ns, "train"))).To(HaveEach(corev1.PodSucceeded))
		expectJobsStatusMatchesTheJobs(ns, "train")
		Expect(*getTrainJob(Default, ns, "train").Status.JobsStatus[0].Succeeded).To(Equal(int32(1)))
	})

	It("whose pods fail past the Job's backoff becomes Failed with the JobSet's reason", func() {
		torchRuntime{annotations: map[string]string{failAfterAnnotation: "1s"}, backoffLimit: ptr.To[int32](1)}.create(ns, "broken")
		trainJob(ns, "crash", "broken", 1, 0)

		job := expectState(ns, "crash", trainer.TrainJobFailed, trainer.TrainJobFailedReason)
		failed := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobFailed)
		Expect(failed.Reason).To(Equal("FailedJobs"))
		Expect(failed.Message).To(ContainSubstring("first failed job: crash-node-0"))
		// backoffLimit 1: the first pod failed, and the one that retried it.
		Expect(phases(podsOf(Default, ns, "crash"))).To(And(HaveLen(2), HaveEach(corev1.PodFailed)))
		expectJobsStatusMatchesTheJobs(ns, "crash")
		Expect(*getTrainJob(Default, ns, "crash").Status.JobsStatus[0].Failed).To(Equal(int32(1)))

		jobs := &batchv1.JobList{}
		Expect(k8s.List(ctx, jobs, client.InNamespace(ns))).To(Succeed())
		Expect(jobs.Items).To(HaveLen(1))
		Expect(jobs.Items[0].Status.Conditions).To(ContainElement(And(
			HaveField("Type", batchv1.JobFailed), HaveField("Reason", batchv1.JobReasonBackoffLimitExceeded))))
	})

	It("is suspended while it runs, its pods removed, and resumed, its pods back", func() {
		torchRuntime{annotations: map[string]string{runForAnnotation: "10m"}}.create(ns, "torch")
		trainJob(ns, "pause", "torch", 2, 0)
		expectState(ns, "pause", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		setSuspend(ns, "pause", true)

		By("suspended: its JobSet is suspended and its pods are gone")
		expectState(ns, "pause", trainer.TrainJobSuspended, trainer.TrainJobSuspendedReason)
		Eventually(func(g Gomega) {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "pause"}, js)).To(Succeed())
			g.Expect(js.Spec.Suspend).To(Equal(ptr.To(true)))
			g.Expect(podsOf(g, ns, "pause")).To(BeEmpty())
			g.Expect(getTrainJob(g, ns, "pause").Status.JobsStatus).To(ContainElement(HaveField("Suspended", ptr.To[int32](1))))
		}).Should(Succeed())

		By("resumed: Running again once new pods run")
		setSuspend(ns, "pause", false)
		job := expectState(ns, "pause", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		suspended := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobSuspended)
		Expect(suspended.Status).To(Equal(metav1.ConditionFalse))
		Expect(suspended.Reason).To(Equal(trainer.TrainJobResumedReason))
		Eventually(func(g Gomega) []corev1.PodPhase { return phases(podsOf(g, ns, "pause")) }).Should(
			And(HaveLen(2), HaveEach(corev1.PodRunning)))
	})

	It("when deleted, takes its JobSet, Jobs, pods and PodGroup with it (garbage collection)", func() {
		torchRuntime{gang: true, annotations: map[string]string{runForAnnotation: "10m"}}.create(ns, "gang")
		trainJob(ns, "doomed", "gang", 2, 0)
		expectState(ns, "doomed", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		key := types.NamespacedName{Namespace: ns, Name: "doomed"}
		Expect(k8s.Get(ctx, key, &schedulingv1alpha1.PodGroup{})).To(Succeed())
		Expect(podsOf(Default, ns, "doomed")).To(HaveLen(2))

		Expect(k8s.Delete(ctx, &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "doomed"}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key, &jobsetv1alpha2.JobSet{})).To(MatchError(ContainSubstring("not found")))
			g.Expect(k8s.Get(ctx, key, &schedulingv1alpha1.PodGroup{})).To(MatchError(ContainSubstring("not found")))
			jobs := &batchv1.JobList{}
			g.Expect(k8s.List(ctx, jobs, client.InNamespace(ns))).To(Succeed())
			g.Expect(jobs.Items).To(BeEmpty())
			g.Expect(podsOf(g, ns, "doomed")).To(BeEmpty())
		}).Should(Succeed())
	})
})

func setSuspend(ns, name string, suspend bool) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		job := getTrainJob(g, ns, name)
		job.Spec.Suspend = ptr.To(suspend)
		g.Expect(k8s.Update(ctx, job)).To(Succeed())
	}).Should(Succeed())
}
