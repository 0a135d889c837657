// Package validation holds the rules the admission webhooks apply to
// TrainJobs, TrainingRuntimes and ClusterTrainingRuntimes: the API's and
// every enabled plugin's, so that a bad object is rejected with a message
// that names the field instead of failing later in the controller.
//
// It reads nothing from the API server: the webhooks (internal/webhook)
// look a TrainJob's runtime up and pass its spec in. So the rules depend on
// the API types and the framework only, not on controller-runtime's client
// or client-go, and run, and are fuzzed, on their own.
package validation

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/runtimeref"
)

// TrainJobKind is the group and kind a TrainJob's rejection names.
var TrainJobKind = schema.GroupKind{Group: trainer.GroupVersion.Group, Kind: trainer.TrainJobKind}

// TrainJobSpec checks what the CRD cannot and no runtime is needed for: the
// runtime reference, and a numNodes past what one replicatedJob may have.
// That numNodes is at least 1 is the CRD's rule (its minimum), checked
// before the webhook. The error is an Invalid error naming the fields.
func TrainJobSpec(job *trainer.TrainJob) error {
	errs := runtimeref.Validate(job)
	if t := job.Spec.Trainer; t != nil && t.NumNodes != nil && *t.NumNodes > framework.MaxPodSetPods {
		errs = append(errs, field.Invalid(field.NewPath("spec", "trainer", "numNodes"), *t.NumNodes,
			fmt.Sprintf("must be at most %d, the pods one replicatedJob may have", framework.MaxPodSetPods)))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(TrainJobKind, job.Name, errs)
	}
	return nil
}

// TrainJob checks a TrainJob, new (oldJob nil) or changed, against the
// runtime spec it runs with: it must resolve into an Info, and every
// enabled plugin's Validate must pass. The plugins get both objects
// without their runtime snapshot, which they have through the Info.
func TrainJob(ctx context.Context, fw *frameworkruntime.Framework, oldJob, job *trainer.TrainJob, spec *trainer.TrainingRuntimeSpec) ([]string, error) {
	info, err := framework.NewInfo(job, spec)
	if err != nil {
		var fe *field.Error
		if errors.As(err, &fe) {
			return nil, apierrors.NewInvalid(TrainJobKind, job.Name, field.ErrorList{fe})
		}
		return nil, apierrors.NewInvalid(TrainJobKind, job.Name,
			field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())})
	}
	plugins, done := fw.Use()
	defer done()
	warnings, errs := plugins.Validate(ctx, framework.ValidateRequest{
		Kind: framework.ValidateTrainJob, Info: info,
		OldJob: runtimeref.WithoutSnapshot(oldJob), NewJob: runtimeref.WithoutSnapshot(job),
	})
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(TrainJobKind, job.Name, errs)
	}
	return warnings, nil
}

// Runtime checks a TrainingRuntime or ClusterTrainingRuntime (gk) named
// name: the spec must be small enough for a TrainJob to carry as its
// snapshot, every policy key must be owned by an enabled plugin, the
// template must resolve into an Info, and the plugins' Validate must pass
// for a TrainJob that overrides nothing.
func Runtime(ctx context.Context, fw *frameworkruntime.Framework, gk schema.GroupKind, name string, spec *trainer.TrainingRuntimeSpec) ([]string, error) {
	if err := runtimeref.CheckSize(field.NewPath("spec"), spec); err != nil {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{err})
	}
	probe := framework.RuntimeCheckJob(name)
	info, err := framework.NewInfo(probe, spec)
	if err != nil {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("spec", "template"), "", err.Error())})
	}
	var warnings []string
	plugins, done := fw.Use()
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
