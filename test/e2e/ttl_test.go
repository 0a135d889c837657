package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

var _ = Describe("a finished TrainJob with ttlSecondsAfterFinished", func() {
	It("is deleted with its JobSet, Jobs and pods that long after it completed", func() {
		const ttl = 8
		ns := newNamespace()
		torchRuntime{annotations: map[string]string{runForAnnotation: "3s"}}.create(ns, "torch")
		job := &trainer.TrainJob{}
		job.Namespace, job.Name = ns, "short"
		job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
		job.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
		job.Spec.TTLSecondsAfterFinished = ptr.To[int32](ttl)
		Expect(k8s.Create(ctx, job)).To(Succeed())

		By("completing: its JobSet, Jobs and pods are kept for the TTL")
		done := expectState(ns, "short", trainer.TrainJobComplete, trainer.TrainJobCompletedReason)
		finished := meta.FindStatusCondition(done.Status.Conditions, trainer.TrainJobComplete).LastTransitionTime.Time
		Expect(phases(podsOf(Default, ns, "short"))).To(And(HaveLen(2), HaveEach(corev1.PodSucceeded)))
		if hold := time.Until(finished.Add((ttl - 2) * time.Second)); hold > 0 {
			Consistently(func(g Gomega) {
				g.Expect(getTrainJob(g, ns, "short").DeletionTimestamp).To(BeNil())
			}, hold, time.Second).Should(Succeed())
		}

		By("then deleted, and the garbage collector deletes what it owned")
		Eventually(func(g Gomega) {
			err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "short"}, &trainer.TrainJob{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the TrainJob: %v", err)
			err = k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "short"}, &jobsetv1alpha2.JobSet{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the JobSet: %v", err)
			jobs := &batchv1.JobList{}
			g.Expect(k8s.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: "short"})).To(Succeed())
			g.Expect(jobs.Items).To(BeEmpty())
			g.Expect(podsOf(g, ns, "short")).To(BeEmpty())
		}, "90s", time.Second).Should(Succeed())
	})
})
