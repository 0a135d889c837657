// Package webhook holds the validating admission webhooks of TrainJob,
// TrainingRuntime and ClusterTrainingRuntime: it registers them with the
// manager and reads what a TrainJob is checked against (its snapshot, or
// the live runtime); the rules themselves, the API's and every enabled
// plugin's, are internal/validation's.
package webhook

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/runtimeref"
	"github.com/trainforge/trainforge/internal/validation"
)

// Setup registers the three validating webhooks with the manager.
func Setup(mgr ctrl.Manager, fw *frameworkruntime.Framework) error {
	// Read runtimes live: a runtime created a moment before its TrainJob may
	// not be in the cache yet.
	tj := &TrainJobValidator{Client: mgr.GetAPIReader(), Framework: fw}
	if err := ctrl.NewWebhookManagedBy(mgr, &trainer.TrainJob{}).WithValidator(tj).Complete(); err != nil {
		return fmt.Errorf("registering the TrainJob webhook: %w", err)
	}
	rt := &RuntimeValidator{Framework: fw}
	if err := ctrl.NewWebhookManagedBy(mgr, &trainer.TrainingRuntime{}).WithValidator(typedRuntime[*trainer.TrainingRuntime]{rt}).Complete(); err != nil {
		return fmt.Errorf("registering the TrainingRuntime webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &trainer.ClusterTrainingRuntime{}).WithValidator(typedRuntime[*trainer.ClusterTrainingRuntime]{rt}).Complete(); err != nil {
		return fmt.Errorf("registering the ClusterTrainingRuntime webhook: %w", err)
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create;update,versions=v1alpha1,name=vtrainjob.trainer.kubeflow.org,admissionReviewVersions=v1

// TrainJobValidator validates TrainJobs.
type TrainJobValidator struct {
	Client    client.Reader
	Framework *frameworkruntime.Framework
}

// ValidateCreate validates a new TrainJob.
func (v *TrainJobValidator) ValidateCreate(ctx context.Context, job *trainer.TrainJob) (admission.Warnings, error) {
	return v.validate(ctx, nil, job)
}

// ValidateUpdate validates a changed TrainJob.
func (v *TrainJobValidator) ValidateUpdate(ctx context.Context, oldJob, newJob *trainer.TrainJob) (admission.Warnings, error) {
	return v.validate(ctx, oldJob, newJob)
}

// ValidateDelete allows every deletion.
func (v *TrainJobValidator) ValidateDelete(context.Context, *trainer.TrainJob) (admission.Warnings, error) {
	return nil, nil
}

func (v *TrainJobValidator) validate(ctx context.Context, oldJob, job *trainer.TrainJob) (admission.Warnings, error) {
	if !job.IsManagedByUs() {
		// Another controller (for example MultiKueue) owns this TrainJob.
		return nil, nil
	}
	if err := validation.TrainJobSpec(job); err != nil {
		return nil, err
	}
	spec, warning, err := v.runtimeSpec(ctx, oldJob, job)
	if spec == nil || err != nil {
		return warning, err
	}
	return validation.TrainJob(ctx, v.Framework, oldJob, job, spec)
}

// getRuntime reads a runtime for runtimeref.Resolve.
func (v *TrainJobValidator) getRuntime(ctx context.Context, key types.NamespacedName, obj runtimeref.Object) error {
	return v.Client.Get(ctx, key, obj)
}

// runtimeSpec returns the runtime spec a TrainJob is validated against: on
// an update, the old object's snapshot when it has one, since that is what
// the controller builds from; else the live runtime. A nil spec without an
// error skips the runtime's checks, with the warning that says why.
func (v *TrainJobValidator) runtimeSpec(ctx context.Context, oldJob, job *trainer.TrainJob) (*trainer.TrainingRuntimeSpec, admission.Warnings, error) {
	if oldJob != nil && oldJob.Status.RuntimeSnapshot != nil {
		if err := runtimeref.CheckSnapshot(oldJob); err != nil {
			// Refusing the update would also stop a queue (Kueue) from
			// suspending the job; the controller reports the error.
			return nil, admission.Warnings{err.Error()}, nil
		}
		return &oldJob.Status.RuntimeSnapshot.Spec, nil, nil
	}
	snap, err := runtimeref.Resolve(ctx, v.getRuntime, job)
	if apierrors.IsNotFound(err) {
		return nil, admission.Warnings{fmt.Sprintf("spec.runtimeRef: %s %q does not exist yet; the TrainJob waits for it", runtimeref.Kind(job), job.Spec.RuntimeRef.Name)}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return &snap.Spec, nil, nil
}
