package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The restart policy on the real JobSet and Job controllers: pods exit
// with a code, or are lost as to a node failure, by the simulated
// cluster's stages.
var _ = Describe("a TrainJob's restart policy", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// policy fails the job on exit code 3 and restarts it on 134, within
	// maxRestarts.
	policy := func(maxRestarts int32) *trainer.RestartPolicy {
		return &trainer.RestartPolicy{
			MaxRestarts: ptr.To(maxRestarts),
			ExitCodes: []trainer.ExitCodeRule{
				{Action: trainer.FailOnExitCode, Values: []int32{3}},
				{Action: trainer.RestartOnExitCode, Values: []int32{134}},
			},
		}
	}

	It("fails the job at once when a pod exits with a bug's code, without a retry", func() {
		torchRuntime{
			annotations:   map[string]string{failAfterAnnotation: "1s", exitCodeAnnotation: "3"},
			restartPolicy: policy(3),
		}.create(ns, "buggy")
		trainJob(ns, "bug", "buggy", 2, 0)

		job := expectState(ns, "bug", trainer.TrainJobFailed, trainer.TrainJobFailedReason)
		failed := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobFailed)
		Expect(failed.Reason).To(Equal(trainer.TrainJobFailedExitCodeReason))
		Expect(failed.Message).To(ContainSubstring("spec.restartPolicy.exitCodes"))
		Expect(job.Status.Restarts).To(BeNil(), "a bug's exit code restarts nothing")
		// The Job failed at its first failed pod: no pod of a retry (the
		// Job's default backoffLimit is 6) or of a restart.
		Expect(len(podsOf(Default, ns, "bug"))).To(BeNumerically("<=", 2))
	})

	It("restarts the job once on a transient exit code, and it completes with restart count 1", func() {
		torchRuntime{
			annotations: map[string]string{
				failAfterAnnotation: "2s", exitCodeAnnotation: "134", firstAttemptOnlyAnnotation: "true", runForAnnotation: "2s",
			},
			restartPolicy: policy(1),
		}.create(ns, "flaky")
		trainJob(ns, "nccl", "flaky", 2, 0)

		job := expectState(ns, "nccl", trainer.TrainJobComplete, trainer.TrainJobCompletedReason)
		Expect(job.Status.Restarts).NotTo(BeNil())
		Expect(job.Status.Restarts.Count).To(Equal(int32(1)))
		Expect(job.Status.Restarts.CountedTowardsMax).To(Equal(int32(1)))
		Expect(job.Status.Restarts.LastReason).To(Equal(trainer.RestartRetryableExitCodeReason))
		Expect(restartEvents(ns, "nccl")).To(ContainElement(ContainSubstring("Restart 1")))
	})

	It("restarts the job without spending its budget when a node fails", func() {
		torchRuntime{
			annotations:   map[string]string{evictAfterAnnotation: "2s", firstAttemptOnlyAnnotation: "true", runForAnnotation: "2s"},
			restartPolicy: policy(0), // no budget at all: only a free restart can save it
		}.create(ns, "preemptible")
		trainJob(ns, "lost", "preemptible", 2, 0)

		job := expectState(ns, "lost", trainer.TrainJobComplete, trainer.TrainJobCompletedReason)
		Expect(job.Status.Restarts).NotTo(BeNil())
		Expect(job.Status.Restarts.Count).To(Equal(int32(1)))
		Expect(job.Status.Restarts.CountedTowardsMax).To(Equal(int32(0)))
		Expect(job.Status.Restarts.LastReason).To(Equal(trainer.RestartPodDisruptionReason))
	})

	It("fails with reason ReachedMaxRestarts once its budget is spent", func() {
		torchRuntime{
			annotations:   map[string]string{failAfterAnnotation: "1s", exitCodeAnnotation: "134"},
			restartPolicy: policy(1),
		}.create(ns, "hopeless")
		trainJob(ns, "spent", "hopeless", 1, 0)

		job := expectState(ns, "spent", trainer.TrainJobFailed, trainer.TrainJobFailedReason)
		failed := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobFailed)
		Expect(failed.Reason).To(Equal(trainer.TrainJobReachedMaxRestartsReason))
		Expect(failed.Message).To(ContainSubstring("after 1 restarts that count (maxRestarts 1)"))
		Expect(job.Status.Restarts).NotTo(BeNil())
		Expect(job.Status.Restarts.Count).To(Equal(int32(1)))
		Expect(phases(podsOf(Default, ns, "spent"))).To(HaveEach(corev1.PodFailed))
	})
})

// restartEvents returns the notes of the Restarted Events of a TrainJob.
func restartEvents(ns, name string) []string {
	GinkgoHelper()
	var notes []string
	Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		notes = nil
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Reason == trainer.RestartedEventReason {
				notes = append(notes, e.Note)
			}
		}
		g.Expect(notes).NotTo(BeEmpty())
	}).Should(Succeed())
	return notes
}
