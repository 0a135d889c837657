package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// refusedError is the API server's refusal (422, Invalid) of an object a
// plugin built: the object breaks a rule of its kind's validation (an
// HPA's metric, a JobSet's webhook). The object is built from the TrainJob
// and its runtime snapshot, so a retry would build it again and be
// refused again: it is not retried with backoff, and the TrainJob's
// Created condition keeps the API server's message, which names the
// object and the field. A change of the TrainJob, or of one of its
// objects, reconciles it again.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// writeFailed is the error of a write (verb: applying, creating) of a
// built object: a refusedError for the API server's 422.
func writeFailed(o frameworkruntime.BuiltObject, verb string, err error) error {
	err = fmt.Errorf("plugin %s: %s %s %s: %w", o.Plugin, verb, o.Object.GetKind(), o.Object.GetName(), err)
	if apierrors.IsInvalid(err) {
		return &refusedError{err: err}
	}
	return err
}

// unavailableRetry is when a TrainJob whose reconcile met a plugin that
// gave no answer of its own (framework.UnavailableError: a wasm module in
// its backoff or without a free instance within its 1 s wait, an external
// plugin that is down or whose call missed its deadline the first time for
// that input, a wasm call that reached its deadline short of CPU the first
// time) is tried again: a fixed, short delay, jittered up to half
// of it so that the TrainJobs that met it together do not come back
// together. Not the per-item exponential backoff: the plugin gave no
// answer about this TrainJob, so its retries are no measure of it, and
// after a minute of a busy plugin the backoff would hold a TrainJob for
// minutes after the plugin is free again. A retry during a wasm backoff
// fails at once without a call (no instance, no CPU of the module's), so
// a few seconds cost little; 2 s is past the wait for an instance and the
// default first backoff (pluginHost.restartBackoff.initial, 1 s).
const unavailableRetry = 2 * time.Second

// retryUnavailable returns the result of a reconcile that failed with err
// because a plugin gave no answer of its own: a requeue after unavailableRetry, with
// no error, so that the rate limiter forgets the TrainJob's failures. ok
// is false for any other error.
func retryUnavailable(ctx context.Context, err error) (ctrl.Result, bool) {
	if err == nil || !framework.IsUnavailable(err) || errors.Is(err, reconcile.TerminalError(nil)) {
		return ctrl.Result{}, false
	}
	log.FromContext(ctx).V(1).Info("a plugin gave no answer of its own; retrying", "after", unavailableRetry, "reason", err.Error())
	return ctrl.Result{RequeueAfter: wait.Jitter(unavailableRetry, 0.5)}, true
}

// buildFailed records a failure to build or apply the job's objects on the
// Created condition and returns the error, so that the reconcile is retried
// with backoff; unless the TrainJob cannot run as it is (an invalid
// runtime, a plugin's rejection of its input, the API server's refusal of
// an object built from it): then no retry would help, the condition says
// so and the error is terminal. A change of the TrainJob reconciles it
// again. A plugin that gave no answer (framework.UnavailableError) leaves
// the condition as it is: it says nothing of the TrainJob, and a job that
// runs stays Created=True while it waits for the plugin (retryUnavailable).
func (r *TrainJobReconciler) buildFailed(job *trainer.TrainJob, err error) error {
	var refused *refusedError
	switch {
	case framework.IsUnavailable(err):
		return err
	case errors.As(err, &refused):
		setCondition(job, trainer.TrainJobCreated, metav1.ConditionFalse, trainer.TrainJobInvalidReason,
			err.Error()+"; not retried: the API server refuses the object as it is built from the TrainJob and its runtime; it is applied again when the TrainJob changes")
		return reconcile.TerminalError(err)
	case framework.IsInvalidJob(err):
		setCondition(job, trainer.TrainJobCreated, metav1.ConditionFalse, trainer.TrainJobInvalidReason,
			err.Error()+"; not retried: the TrainJob cannot run with the runtime it was created with until the TrainJob changes")
		return reconcile.TerminalError(err)
	}
	setCondition(job, trainer.TrainJobCreated, metav1.ConditionFalse, trainer.TrainJobBuildFailedReason, err.Error())
	return err
}
