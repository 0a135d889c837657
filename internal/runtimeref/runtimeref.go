// Package runtimeref resolves a TrainJob's runtimeRef to the runtime's spec,
// for the controller and the webhook alike.
package runtimeref

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// Kind returns the kind a TrainJob's runtimeRef names, defaulted.
func Kind(job *trainer.TrainJob) string {
	return ptr.Deref(job.Spec.RuntimeRef.Kind, trainer.ClusterTrainingRuntimeKind)
}

// Resolve returns the spec of the runtime a TrainJob references. A missing
// runtime is a NotFound error; an unsupported apiGroup or kind is an error
// naming the field.
func Resolve(ctx context.Context, reader client.Reader, job *trainer.TrainJob) (*trainer.TrainingRuntimeSpec, error) {
	ref := job.Spec.RuntimeRef
	if g := ptr.Deref(ref.APIGroup, trainer.GroupVersion.Group); g != trainer.GroupVersion.Group {
		return nil, fmt.Errorf("spec.runtimeRef.apiGroup: %q is not supported, use %q", g, trainer.GroupVersion.Group)
	}
	switch kind := Kind(job); kind {
	case trainer.ClusterTrainingRuntimeKind:
		rt := &trainer.ClusterTrainingRuntime{}
		if err := reader.Get(ctx, types.NamespacedName{Name: ref.Name}, rt); err != nil {
			return nil, err
		}
		return &rt.Spec, nil
	case trainer.TrainingRuntimeKind:
		rt := &trainer.TrainingRuntime{}
		if err := reader.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: ref.Name}, rt); err != nil {
			return nil, err
		}
		return &rt.Spec, nil
	default:
		return nil, fmt.Errorf("spec.runtimeRef.kind: %q is not supported, use %s or %s", kind, trainer.TrainingRuntimeKind, trainer.ClusterTrainingRuntimeKind)
	}
}
