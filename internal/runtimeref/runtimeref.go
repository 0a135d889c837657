// Package runtimeref resolves a TrainJob's runtimeRef to the runtime's spec,
// for the controller and the webhook alike.
package runtimeref

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// Kind returns the kind a TrainJob's runtimeRef names, defaulted.
func Kind(job *trainer.TrainJob) string {
	return ptr.Deref(job.Spec.RuntimeRef.Kind, trainer.ClusterTrainingRuntimeKind)
}

// SupportedKinds are the kinds a runtimeRef may name.
var SupportedKinds = []string{trainer.ClusterTrainingRuntimeKind, trainer.TrainingRuntimeKind}

// Validate checks that a TrainJob's runtimeRef names a supported group and
// kind. The webhook reports its errors; Resolve fails with them.
func Validate(job *trainer.TrainJob) field.ErrorList {
	var errs field.ErrorList
	ref := field.NewPath("spec", "runtimeRef")
	if g := ptr.Deref(job.Spec.RuntimeRef.APIGroup, trainer.GroupVersion.Group); g != trainer.GroupVersion.Group {
		errs = append(errs, field.NotSupported(ref.Child("apiGroup"), g, []string{trainer.GroupVersion.Group}))
	}
	if k := Kind(job); !slices.Contains(SupportedKinds, k) {
		errs = append(errs, field.NotSupported(ref.Child("kind"), k, SupportedKinds))
	}
	return errs
}

// Resolve returns the spec of the runtime a TrainJob references. A missing
// runtime is a NotFound error; an unsupported apiGroup or kind is an error
// naming the field (Validate).
func Resolve(ctx context.Context, reader client.Reader, job *trainer.TrainJob) (*trainer.TrainingRuntimeSpec, error) {
	if errs := Validate(job); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	ref := job.Spec.RuntimeRef
	if Kind(job) == trainer.ClusterTrainingRuntimeKind {
		rt := &trainer.ClusterTrainingRuntime{}
		if err := reader.Get(ctx, types.NamespacedName{Name: ref.Name}, rt); err != nil {
			return nil, err
		}
		return &rt.Spec, nil
	}
	rt := &trainer.TrainingRuntime{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: ref.Name}, rt); err != nil {
		return nil, err
	}
	return &rt.Spec, nil
}
