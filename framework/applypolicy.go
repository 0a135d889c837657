package framework

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// ApplyPolicyAnnotation, set by a plugin on an object it builds, says how
// the host writes the object. Without it the host applies the object on
// every change of its desired state (server-side apply).
const ApplyPolicyAnnotation = "trainforge.dev/apply-policy"

// ApplyIfNotPresent is the ApplyPolicyAnnotation value of an object that
// the host creates once, when it does not exist, and never updates after:
// a generated secret (an SSH key, a token) that must stay the same for the
// TrainJob's whole life, across restarts of the controller and suspensions
// of the job. Such an object may differ on every Build (a new random key
// each time): only the first one created counts, so sdktest leaves its
// content out of the determinism check. Its kind and name must stay the
// same.
const ApplyIfNotPresent = "IfNotPresent"

// CreateOnce marks obj as created once and never updated
// (ApplyIfNotPresent) and returns it.
func CreateOnce(obj *unstructured.Unstructured) *unstructured.Unstructured {
	annotations := obj.GetAnnotations()
	MergeMap(&annotations, map[string]string{ApplyPolicyAnnotation: ApplyIfNotPresent})
	obj.SetAnnotations(annotations)
	return obj
}

// IsCreateOnce reports whether obj is marked by CreateOnce.
func IsCreateOnce(obj *unstructured.Unstructured) bool {
	return obj.GetAnnotations()[ApplyPolicyAnnotation] == ApplyIfNotPresent
}

// RuntimeCheckAnnotation marks the TrainJob that the host passes to
// Validate when it validates a runtime rather than a TrainJob (on the
// admission of a TrainingRuntime or ClusterTrainingRuntime): a TrainJob
// named as the runtime that overrides nothing. A plugin then reports only
// what is wrong with the runtime itself, not what a TrainJob could still
// override.
const RuntimeCheckAnnotation = "trainforge.dev/runtime-check"

// RuntimeCheckJob returns the TrainJob that stands for a runtime named
// name on the runtime's admission.
func RuntimeCheckJob(name string) *trainer.TrainJob {
	job := &trainer.TrainJob{}
	job.Name = name
	job.Spec.RuntimeRef.Name = name
	job.Annotations = map[string]string{RuntimeCheckAnnotation: "true"}
	return job
}

// IsRuntimeCheck reports whether job is the stand-in of a runtime being
// validated (RuntimeCheckJob).
func IsRuntimeCheck(job *trainer.TrainJob) bool {
	return job != nil && job.Annotations[RuntimeCheckAnnotation] == "true"
}
