// Package runtimeref resolves a TrainJob's runtimeRef to the runtime it
// runs with, for the controller and the webhook alike: the snapshot in the
// TrainJob's status once there is one, the live runtime before. The
// snapshot is what keeps an existing TrainJob unchanged when its runtime is
// edited or deleted (docs/runtime-snapshot.md).
package runtimeref

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// Kind returns the kind a TrainJob's runtimeRef names, defaulted.
func Kind(job *trainer.TrainJob) string {
	return ptr.Deref(job.Spec.RuntimeRef.Kind, trainer.ClusterTrainingRuntimeKind)
}

// APIGroup returns the apiGroup a TrainJob's runtimeRef names, defaulted.
func APIGroup(job *trainer.TrainJob) string {
	return ptr.Deref(job.Spec.RuntimeRef.APIGroup, trainer.GroupVersion.Group)
}

// SupportedKinds are the kinds a runtimeRef may name.
var SupportedKinds = []string{trainer.ClusterTrainingRuntimeKind, trainer.TrainingRuntimeKind}

// Validate checks that a TrainJob's runtimeRef names a supported group and
// kind. The webhook reports its errors; Resolve fails with them.
func Validate(job *trainer.TrainJob) field.ErrorList {
	var errs field.ErrorList
	ref := field.NewPath("spec", "runtimeRef")
	if g := APIGroup(job); g != trainer.GroupVersion.Group {
		errs = append(errs, field.NotSupported(ref.Child("apiGroup"), g, []string{trainer.GroupVersion.Group}))
	}
	if k := Kind(job); !slices.Contains(SupportedKinds, k) {
		errs = append(errs, field.NotSupported(ref.Child("kind"), k, SupportedKinds))
	}
	return errs
}

// Object is what a Get reads into: client.Object's methods.
type Object interface {
	metav1.Object
	runtime.Object
}

// Get reads the object key names into obj, as a controller-runtime
// client.Reader's Get does (wrap one in a func). A function rather than
// client.Reader keeps this package, and the admission rules built on it
// (internal/validation), free of controller-runtime's client and client-go,
// which their fuzz targets' instrumented build would compile again.
type Get func(ctx context.Context, key types.NamespacedName, obj Object) error

// Resolve reads the runtime a TrainJob references with get and returns a
// snapshot of it. A missing runtime is get's error (NotFound from a
// client); an unsupported apiGroup or kind is an error naming the field
// (Validate).
func Resolve(ctx context.Context, get Get, job *trainer.TrainJob) (*trainer.RuntimeSnapshot, error) {
	if errs := Validate(job); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	ref := job.Spec.RuntimeRef
	snap := &trainer.RuntimeSnapshot{APIGroup: APIGroup(job), Kind: Kind(job), Name: ref.Name}
	if snap.Kind == trainer.ClusterTrainingRuntimeKind {
		rt := &trainer.ClusterTrainingRuntime{}
		if err := get(ctx, types.NamespacedName{Name: ref.Name}, rt); err != nil {
			return nil, err
		}
		snap.Generation, snap.Spec = rt.Generation, rt.Spec
		return snap, nil
	}
	rt := &trainer.TrainingRuntime{}
	if err := get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: ref.Name}, rt); err != nil {
		return nil, err
	}
	snap.Generation, snap.Spec = rt.Generation, rt.Spec
	return snap, nil
}

// CheckSnapshot checks that the snapshot in a TrainJob's status is of the
// runtime its spec.runtimeRef names. runtimeRef is immutable and the
// controller writes the snapshot once, so only a hand-edited status fails.
func CheckSnapshot(job *trainer.TrainJob) error {
	snap := job.Status.RuntimeSnapshot
	if snap == nil {
		return nil
	}
	if snap.APIGroup == APIGroup(job) && snap.Kind == Kind(job) && snap.Name == job.Spec.RuntimeRef.Name {
		return nil
	}
	return field.Invalid(field.NewPath("status", "runtimeSnapshot"), snap.Kind+"/"+snap.Name,
		fmt.Sprintf("the snapshot is of %s, but spec.runtimeRef names %s; remove status.runtimeSnapshot "+
			"(kubectl edit trainjob %s --subresource=status) so that the controller takes a new snapshot of the runtime spec.runtimeRef names, or recreate the TrainJob",
			describe(snap.APIGroup, snap.Kind, snap.Name), describe(APIGroup(job), Kind(job), job.Spec.RuntimeRef.Name), job.Name))
}

func describe(group, kind, name string) string {
	return fmt.Sprintf("%s %q (apiGroup %s)", kind, name, group)
}

// MaxSpecBytes bounds the JSON size of a runtime's spec. Every TrainJob of
// the runtime carries a copy in status.runtimeSnapshot, and etcd refuses an
// object above 1.5 MiB: the bound leaves half a MiB for the rest of the
// TrainJob.
const MaxSpecBytes = 1 << 20

// CheckSize checks that a runtime's spec is small enough to be snapshotted
// into a TrainJob, with an error naming the field at path that says what
// to do.
func CheckSize(path *field.Path, spec *trainer.TrainingRuntimeSpec) *field.Error {
	data, err := json.Marshal(spec)
	if err != nil {
		return field.Invalid(path, "", fmt.Sprintf("cannot be encoded: %v", err))
	}
	if len(data) <= MaxSpecBytes {
		return nil
	}
	return field.Invalid(path, fmt.Sprintf("%d bytes", len(data)), fmt.Sprintf("must be at most %d bytes of JSON: "+
		"every TrainJob of the runtime carries a copy in status.runtimeSnapshot and must fit in etcd (1.5 MiB); "+
		"move large data, such as scripts or configuration files, into a ConfigMap that the pods mount", MaxSpecBytes))
}

// WithoutSnapshot returns a shallow copy of a TrainJob without its
// snapshot, for plugins: they get the runtime through Info, and an
// external plugin would otherwise receive the whole runtime spec a second
// time in every call.
func WithoutSnapshot(job *trainer.TrainJob) *trainer.TrainJob {
	if job == nil || job.Status.RuntimeSnapshot == nil {
		return job
	}
	c := *job
	c.Status.RuntimeSnapshot = nil
	return &c
}
