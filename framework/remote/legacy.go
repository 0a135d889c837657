package remote

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The annotations that said, before protocol 1.3, what the protocol's
// fields say now (ValidateRequest.kind, BuildResponse.create_once). Both
// sides still write and read them, for the other side's sake, as long as
// protocol version 1 lasts; the framework's interfaces never see them.
const (
	// RuntimeCheckAnnotation, "true" on the stand-in TrainJob of a
	// runtime being validated, tells a plugin before 1.3 that a runtime is
	// checked.
	RuntimeCheckAnnotation = "trainforge.dev/runtime-check"
	// ApplyPolicyAnnotation, ApplyIfNotPresent on a built object, tells a
	// host before 1.3 to create the object once.
	ApplyPolicyAnnotation = "trainforge.dev/apply-policy"
	// ApplyIfNotPresent is ApplyPolicyAnnotation's value.
	ApplyIfNotPresent = "IfNotPresent"
)

// markRuntimeCheck returns a copy of job with RuntimeCheckAnnotation.
func markRuntimeCheck(job *trainer.TrainJob) *trainer.TrainJob {
	job = job.DeepCopy()
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	job.Annotations[RuntimeCheckAnnotation] = "true"
	return job
}

// takeRuntimeCheck reports whether job carries RuntimeCheckAnnotation, and
// removes it: the plugin sees the stand-in as an in-process plugin does.
func takeRuntimeCheck(job *trainer.TrainJob) bool {
	if job == nil || job.Annotations[RuntimeCheckAnnotation] != "true" {
		return false
	}
	delete(job.Annotations, RuntimeCheckAnnotation)
	if len(job.Annotations) == 0 {
		job.Annotations = nil
	}
	return true
}

// markCreateOnce sets ApplyPolicyAnnotation on obj, for hosts before 1.3.
func markCreateOnce(obj *unstructured.Unstructured) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[ApplyPolicyAnnotation] = ApplyIfNotPresent
	obj.SetAnnotations(annotations)
	return obj
}

// takeCreateOnce reports whether obj carries ApplyPolicyAnnotation (a
// plugin before 1.3, or one answering such hosts too), and removes it.
func takeCreateOnce(obj *unstructured.Unstructured) bool {
	annotations := obj.GetAnnotations()
	if annotations[ApplyPolicyAnnotation] != ApplyIfNotPresent {
		return false
	}
	delete(annotations, ApplyPolicyAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	obj.SetAnnotations(annotations)
	return true
}
