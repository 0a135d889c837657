package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
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
	r.recent.remember(job)
	r.recordTransitions(before, job)
	r.observeLifecycle(before, job)
	return true, nil
}

// mergeStatus sets on job what its status plugins reported: their
// conditions, and jobsStatus, restarts and nodes when they report them.
func mergeStatus(job *trainer.TrainJob, st *trainer.TrainJobStatus) {
	for _, c := range st.Conditions {
		setCondition(job, c.Type, c.Status, c.Reason, c.Message)
	}
	if st.JobsStatus != nil {
		job.Status.JobsStatus = st.JobsStatus
	}
	if st.Restarts != nil {
		job.Status.Restarts = st.Restarts
	}
	if st.Nodes != nil {
		job.Status.Nodes = st.Nodes
	}
}
