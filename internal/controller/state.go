package controller

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// stateConditions are the conditions that can say what state a TrainJob is
// in, strongest first: the first one that is True is its state, and
// Created is when none is.
var stateConditions = []string{
	trainer.TrainJobFailed,
	trainer.TrainJobComplete,
	trainer.TrainJobSuspended,
	trainer.TrainJobRunning,
}

// settleState makes the conditions agree with each other and puts the one
// that says the state last. The CRD's State column, like Kubeflow
// Trainer's, is the type of the last condition
// (.status.conditions[-1:].type); conditions keep their place when they
// change, so without this a resumed job would still read Suspended and a
// finished one could read Running.
//
// A finished TrainJob is never reconciled again, so Running must turn
// False in the same status write that finishes it, whatever the status
// plugins last said; likewise while it is suspended.
func settleState(job *trainer.TrainJob) {
	conds := job.Status.Conditions
	if meta.IsStatusConditionTrue(conds, trainer.TrainJobRunning) {
		switch {
		case meta.IsStatusConditionTrue(conds, trainer.TrainJobFailed):
			setCondition(job, trainer.TrainJobRunning, metav1.ConditionFalse, trainer.TrainJobFailedReason, "The TrainJob has failed")
		case meta.IsStatusConditionTrue(conds, trainer.TrainJobComplete):
			setCondition(job, trainer.TrainJobRunning, metav1.ConditionFalse, trainer.TrainJobCompletedReason, "The TrainJob has completed")
		case meta.IsStatusConditionTrue(conds, trainer.TrainJobSuspended):
			setCondition(job, trainer.TrainJobRunning, metav1.ConditionFalse, trainer.TrainJobSuspendedReason, "The TrainJob is suspended")
		}
	}
	putStateLast(job.Status.Conditions)
}

// putStateLast moves the condition that says the TrainJob's state to the
// end of conds, keeping the order of the others.
func putStateLast(conds []metav1.Condition) {
	state := trainer.TrainJobCreated
	for _, t := range stateConditions {
		if meta.IsStatusConditionTrue(conds, t) {
			state = t
			break
		}
	}
	i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == state })
	if i < 0 || i == len(conds)-1 {
		return
	}
	c := conds[i]
	copy(conds[i:], conds[i+1:])
	conds[len(conds)-1] = c
}

// createdMessage names the objects of the job, in build order, and the
// plugins that shaped it, for example
// "Created JobSet first-job, PodGroup first-job; plugins: Torch, JobSet, Coscheduling".
func createdMessage(objects []frameworkruntime.BuiltObject, plugins []string) string {
	names := make([]string, 0, len(objects))
	for _, o := range objects {
		names = append(names, o.Object.GetKind()+" "+o.Object.GetName())
	}
	msg := "Created " + strings.Join(names, ", ")
	if len(plugins) > 0 {
		msg += "; plugins: " + strings.Join(plugins, ", ")
	}
	return msg
}
