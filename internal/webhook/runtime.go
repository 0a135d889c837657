package webhook

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/runtimeref"
)

// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-trainingruntime,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainingruntimes,verbs=create;update,versions=v1alpha1,name=vtrainingruntime.trainer.kubeflow.org,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=clustertrainingruntimes,verbs=create;update,versions=v1alpha1,name=vclustertrainingruntime.trainer.kubeflow.org,admissionReviewVersions=v1

// RuntimeValidator validates TrainingRuntimes and ClusterTrainingRuntimes:
// the spec must be small enough for a TrainJob to carry as its snapshot,
// every policy key must be owned by an enabled plugin, the template must
// resolve into an Info, and the plugins' Validate must pass for a TrainJob
// that overrides nothing.
type RuntimeValidator struct {
	Framework *frameworkruntime.Framework
}

func (v *RuntimeValidator) validate(ctx context.Context, gk schema.GroupKind, name string, spec *trainer.TrainingRuntimeSpec) (admission.Warnings, error) {
	if err := runtimeref.CheckSize(field.NewPath("spec"), spec); err != nil {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{err})
	}
	probe := framework.RuntimeCheckJob(name)
	info, err := framework.NewInfo(probe, spec)
	if err != nil {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("spec", "template"), "", err.Error())})
	}
	var warnings admission.Warnings
	plugins, done := v.Framework.Use()
	defer done()
	if err := plugins.CheckPolicyKeys(info); err != nil {
		var unowned *frameworkruntime.UnownedPolicyKeyError
		var notStarted *frameworkruntime.NotStartedError
		switch {
		case errors.As(err, &notStarted):
			// An external plugin that has not started yet may own the key.
			warnings = append(warnings, err.Error())
		case errors.As(err, &unowned):
			return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("spec", unowned.Policy, unowned.Key), "{...}",
				"no enabled plugin owns this key; enable the plugin that handles it in the controller's configuration file")})
		default:
			return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("spec", "mlPolicy"), "", err.Error())})
		}
	}
	w, errs := plugins.Validate(ctx, framework.ValidateRequest{Kind: framework.ValidateRuntime, Info: info, NewJob: probe})
	warnings = append(warnings, w...)
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(gk, name, errs)
	}
	return warnings, nil
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
