package controller

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/runtimeref"
)

// writeStatus is the one writer of a TrainJob's status, for every path of
// a reconcile (a job being built, a finished one following its Jobs, one
// whose objects finished and were deleted): it settles the conditions,
// writes the status when it differs from before, and then records what
// changed, as Events and in the lifecycle metrics. A transition is
// observed by the write that makes it, so each is counted once. It reports
// whether it wrote.
func (r *TrainJobReconciler) writeStatus(ctx context.Context, before, job *trainer.TrainJob) (bool, error) {
	settleState(job)
	if equality.Semantic.DeepEqual(before.Status, job.Status) {
		return false, nil
	}
	if err := r.replaceStatus(ctx, job); err != nil {
		return false, err
	}
	r.expectations.statusWritten(job)
	r.recordTransitions(before, job)
	r.observeLifecycle(before, job)
	return true, nil
}

// updateStatus sets the conditions and jobsStatus that the status plugins
// of the pass's cycle report from the TrainJob's objects and info, the
// Info they were built from (nil when the runtime is not known). written are the
// objects this reconcile just applied, which the cache may not hold yet:
// without them the first status write would not see the JobSet, and a
// second one would follow as soon as the cache did.
func (r *TrainJobReconciler) updateStatus(ctx context.Context, p *pass, info *framework.Info, job *trainer.TrainJob, written []*unstructured.Unstructured) error {
	cycle := p.cycle
	reads := &statusReads{}
	before := len(cycle.Ignored())
	reports, err := cycle.Status(ctx, info, r.ownedLister(job, written, reads))
	if err != nil {
		return err
	}
	if len(cycle.Ignored()) == before {
		// A status plugin whose failure was skipped read nothing: what
		// it would have read is kept for the next try.
		p.reads = reads
	}
	framework.ApplyTo(job, reports...)
	return nil
}

// followFinished keeps the jobsStatus of a finished TrainJob counting its
// Jobs, and changes nothing else: a JobSet deletes the Jobs still active
// when it finishes (an MPI job's workers, once its launcher succeeded)
// after the status write that finished the TrainJob.
func (r *TrainJobReconciler) followFinished(ctx context.Context, job *trainer.TrainJob) error {
	// Only the Jobs' counts are read: the Info a build would take is
	// not needed.
	set, done := r.Framework.Use()
	defer done()
	cycle := set.NewCycleWithoutRuntime(runtimeref.WithoutSnapshot(job))
	reports, err := cycle.Status(ctx, nil, r.ownedLister(job, nil, nil))
	r.recordIgnored(job, cycle.Ignored())
	if err != nil {
		return err
	}
	// The reports are merged onto a TrainJob that holds only the
	// jobsStatus: a finished TrainJob's other fields are not followed.
	var reported trainer.TrainJob
	reported.Status.JobsStatus = job.Status.JobsStatus
	framework.ApplyTo(&reported, reports...)
	if equality.Semantic.DeepEqual(reported.Status.JobsStatus, job.Status.JobsStatus) {
		return nil
	}
	before := job.DeepCopy()
	job.Status.JobsStatus = reported.Status.JobsStatus
	if _, err := r.writeStatus(ctx, before, job); err != nil {
		return fmt.Errorf("updating the jobsStatus of a finished TrainJob: %w", err)
	}
	return nil
}

// ownedLister lists, from the cache, the objects of a kind that the
// TrainJob controls, and adds those of written that the cache does not
// hold yet. What it returns is recorded in reads, when not nil.
func (r *TrainJobReconciler) ownedLister(job *trainer.TrainJob, written []*unstructured.Unstructured, reads *statusReads) frameworkruntime.OwnedLister {
	return func(ctx context.Context, gvk schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
		objs, err := r.listControlledBy(ctx, client.ObjectKeyFromObject(job), gvk)
		if err != nil {
			return nil, err
		}
		var out []*unstructured.Unstructured
		for _, o := range objs {
			if !metav1.IsControlledBy(o, job) {
				continue
			}
			u, err := asUnstructured(o, gvk)
			if err != nil {
				return nil, err
			}
			out = append(out, u)
		}
		for _, w := range written {
			if w.GroupVersionKind() != gvk || !metav1.IsControlledBy(w, job) || slices.ContainsFunc(out, func(u *unstructured.Unstructured) bool {
				return u.GetName() == w.GetName()
			}) {
				continue
			}
			out = append(out, w)
		}
		reads.listed(gvk, out)
		return out, nil
	}
}
