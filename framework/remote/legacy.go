package remote

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// The annotations that said, before protocol 1.3 (1.4 for live fields),
// what the protocol's fields say now (ValidateRequest.kind,
// BuildResponse.create_once, BuiltObject.live_fields). Both sides still
// write and read them, for the other side's sake, as long as protocol
// version 1 lasts (docs/writing-a-plugin.md, "Legacy annotations", says
// when they go); the framework's interfaces never see them.
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
	// LiveFieldsAnnotation, on a built object, lists as a JSON array of
	// JSON pointers the fields the host may change while the object runs,
	// for hosts and plugins before 1.4 (framework.LiveFields.Paths).
	LiveFieldsAnnotation = "trainforge.dev/live-fields"
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

// markLiveFields sets LiveFieldsAnnotation on obj, for hosts before 1.4.
func markLiveFields(obj *unstructured.Unstructured, paths []string) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(paths)
	if err != nil {
		return obj, err
	}
	obj = obj.DeepCopy()
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[LiveFieldsAnnotation] = string(data)
	obj.SetAnnotations(annotations)
	return obj, nil
}

// takeLiveFields returns the live fields that obj's LiveFieldsAnnotation
// lists (a plugin before 1.4, or one answering such hosts too), and
// removes the annotation; nil when it has none.
func takeLiveFields(obj *unstructured.Unstructured) (*framework.LiveFields, error) {
	annotations := obj.GetAnnotations()
	raw, ok := annotations[LiveFieldsAnnotation]
	if !ok {
		return nil, nil
	}
	var paths []string
	if err := json.Unmarshal([]byte(raw), &paths); err != nil {
		return nil, fmt.Errorf("annotation %s: %w; want a JSON array of JSON pointers", LiveFieldsAnnotation, err)
	}
	delete(annotations, LiveFieldsAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	obj.SetAnnotations(annotations)
	return &framework.LiveFields{Paths: paths}, nil
}
