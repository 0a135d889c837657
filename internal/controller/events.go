package controller

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// recordTransitions emits one Event per condition that changed.
func (r *TrainJobReconciler) recordTransitions(before, after *trainer.TrainJob) {
	for _, c := range after.Status.Conditions {
		old := meta.FindStatusCondition(before.Status.Conditions, c.Type)
		if old != nil && old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			continue
		}
		// Running=False tells nothing another Event does not: every job
		// starts with its pods pending, and suspended, completed and
		// failed have Events of their own. One Event fewer per state of
		// every job spares the API server, and the recorder's rate limit.
		if c.Type == trainer.TrainJobRunning && c.Status != metav1.ConditionTrue {
			continue
		}
		// Nor does a TrainJob's first Created=True: every job that starts
		// has it, and the condition (its message names the objects, its
		// lastTransitionTime says when) and trainforge_trainjobs say it. It
		// was a third of the controller's writes in a burst, the only one
		// the design floor does not make. Created turning True again after
		// False (a failure fixed) keeps its Event, after the failure's
		// Warning.
		if c.Type == trainer.TrainJobCreated && c.Status == metav1.ConditionTrue && old == nil {
			continue
		}
		eventType := corev1.EventTypeNormal
		if (c.Type == trainer.TrainJobCreated && c.Status == metav1.ConditionFalse) || (c.Type == trainer.TrainJobFailed && c.Status == metav1.ConditionTrue) ||
			(c.Type == trainer.TrainJobResized && c.Status == metav1.ConditionFalse) {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(after, nil, eventType, c.Reason, c.Type, "%s", c.Message)
	}
	r.recordRestart(before.Status.Restarts, after)
}

// recordRestart emits a Restarted Event when the TrainJob's restart count
// grew, with the reason of the last restart.
func (r *TrainJobReconciler) recordRestart(before *trainer.RestartStatus, after *trainer.TrainJob) {
	now := after.Status.Restarts
	if now == nil || before != nil && before.Count >= now.Count {
		return
	}
	message := fmt.Sprintf("Restart %d (%d of them counted towards maxRestarts): %s", now.Count, now.CountedTowardsMax, now.LastReason)
	if now.LastMessage != "" {
		message += "; " + now.LastMessage
	}
	r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, trainer.RestartedEventReason, "Restart", "%s", message)
}

// PluginIgnoredReason is the reason of the Event recorded when a failure of
// a plugin with failure policy Ignore is skipped.
const PluginIgnoredReason = "PluginIgnored"

// recordIgnored records a Warning Event on the TrainJob for each plugin
// failure that the plugin's Ignore policy skipped.
func (r *TrainJobReconciler) recordIgnored(job *trainer.TrainJob, ignored frameworkruntime.Ignored) {
	for _, err := range ignored {
		r.Recorder.Eventf(job, nil, corev1.EventTypeWarning, PluginIgnoredReason, string(err.Point), "%v; skipped (failurePolicy Ignore)", err)
	}
}
