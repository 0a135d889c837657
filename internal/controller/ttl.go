package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// ttlSeconds returns the TrainJob's time to live after it finished: its
// own spec.ttlSecondsAfterFinished, else its runtime's
// runPolicy.ttlSecondsAfterFinished, as its runtime snapshot holds it (so
// that editing the runtime changes no TrainJob that exists). ok is false
// when neither is set: the TrainJob is kept.
func ttlSeconds(job *trainer.TrainJob) (seconds int32, ok bool) {
	if job.Spec.TTLSecondsAfterFinished != nil {
		return *job.Spec.TTLSecondsAfterFinished, true
	}
	if snap := job.Status.RuntimeSnapshot; snap != nil && snap.Spec.RunPolicy != nil && snap.Spec.RunPolicy.TTLSecondsAfterFinished != nil {
		return *snap.Spec.RunPolicy.TTLSecondsAfterFinished, true
	}
	return 0, false
}

// finishedAt returns when the TrainJob finished: the lastTransitionTime of
// its Complete or Failed condition, whichever is True. It is read from the
// stored status, so a controller that restarts finds the same time.
func finishedAt(job *trainer.TrainJob) (time.Time, bool) {
	for _, t := range []string{trainer.TrainJobComplete, trainer.TrainJobFailed} {
		if c := meta.FindStatusCondition(job.Status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// expireAfterFinished deletes a finished TrainJob whose time to live has
// passed, or returns the result that brings the reconcile back when it
// will have: the time is kept in the TrainJob's status only, never in the
// controller's memory.
//
// The delete is in the foreground, as the Job TTL controller's: the
// garbage collector deletes the JobSet, its Jobs and their pods (and any
// other object the TrainJob owns) before the TrainJob itself, so a
// TrainJob that is gone has left nothing running. Its preconditions (UID
// and resourceVersion) make a TrainJob that was recreated under the same
// name, or whose ttlSecondsAfterFinished was just changed, fail the delete
// with a conflict instead; the retry reads it again.
func (r *TrainJobReconciler) expireAfterFinished(ctx context.Context, job *trainer.TrainJob) (ctrl.Result, error) {
	ttl, ok := ttlSeconds(job)
	if !ok {
		return ctrl.Result{}, nil
	}
	finished, ok := finishedAt(job)
	if !ok {
		return ctrl.Result{}, nil
	}
	expiry := finished.Add(time.Duration(ttl) * time.Second)
	if left := expiry.Sub(r.Clock.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	uid, resourceVersion := job.UID, job.ResourceVersion
	err := r.Client.Delete(ctx, job,
		client.PropagationPolicy(metav1.DeletePropagationForeground),
		client.Preconditions{UID: &uid, ResourceVersion: &resourceVersion})
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("deleting the TrainJob after ttlSecondsAfterFinished (%ds): %w", ttl, err)
	}
	log.FromContext(ctx).Info("deleted a finished TrainJob after its ttlSecondsAfterFinished", "ttlSecondsAfterFinished", ttl, "finishedAt", finished)
	r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, trainer.TrainJobTTLExpiredReason, "Delete",
		"Deleted %ds after the TrainJob finished (ttlSecondsAfterFinished)", ttl)
	return ctrl.Result{}, nil
}
