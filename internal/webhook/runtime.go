package webhook

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/validation"
)

// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-trainingruntime,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainingruntimes,verbs=create;update,versions=v1alpha1,name=vtrainingruntime.trainer.kubeflow.org,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=clustertrainingruntimes,verbs=create;update,versions=v1alpha1,name=vclustertrainingruntime.trainer.kubeflow.org,admissionReviewVersions=v1

// RuntimeValidator validates TrainingRuntimes and ClusterTrainingRuntimes
// (validation.Runtime).
type RuntimeValidator struct {
	Framework *frameworkruntime.Framework
}

func (v *RuntimeValidator) validate(ctx context.Context, gk schema.GroupKind, name string, spec *trainer.TrainingRuntimeSpec) (admission.Warnings, error) {
	return validation.Runtime(ctx, v.Framework, gk, name, spec)
}

// typedRuntime adapts RuntimeValidator to one runtime kind.
type typedRuntime[T interface {
	client.Object
	*trainer.TrainingRuntime | *trainer.ClusterTrainingRuntime
}] struct {
	v *RuntimeValidator
}

func specOf(obj client.Object) *trainer.TrainingRuntimeSpec {
	switch rt := obj.(type) {
	case *trainer.TrainingRuntime:
		return &rt.Spec
	case *trainer.ClusterTrainingRuntime:
		return &rt.Spec
	}
	return nil
}

func kindOf(obj client.Object) schema.GroupKind {
	kind := trainer.TrainingRuntimeKind
	if _, ok := obj.(*trainer.ClusterTrainingRuntime); ok {
		kind = trainer.ClusterTrainingRuntimeKind
	}
	return schema.GroupKind{Group: trainer.GroupVersion.Group, Kind: kind}
}

func (t typedRuntime[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	return t.v.validate(ctx, kindOf(obj), obj.GetName(), specOf(obj))
}

func (t typedRuntime[T]) ValidateUpdate(ctx context.Context, _, obj T) (admission.Warnings, error) {
	return t.v.validate(ctx, kindOf(obj), obj.GetName(), specOf(obj))
}

func (t typedRuntime[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// ValidateRuntime validates a TrainingRuntime or ClusterTrainingRuntime as
// its webhook does on create, for callers without a manager (tests).
func (v *RuntimeValidator) ValidateRuntime(ctx context.Context, obj client.Object) (admission.Warnings, error) {
	return v.validate(ctx, kindOf(obj), obj.GetName(), specOf(obj))
}
