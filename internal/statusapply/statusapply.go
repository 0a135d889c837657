// Package statusapply writes one field of a TrainJob's status with a field
// manager of its own (server-side apply, forced): the status endpoint's
// progress and checkpoints and the goodput account each own their field,
// so that none of them races the conditions the TrainJob controller writes.
package statusapply

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// Field applies status.<field> = value on the TrainJob of job's UID only
// (a TrainJob deleted and created again under its name is a conflict), as
// manager, and returns the TrainJob as the API server stored it (nil when
// its answer cannot be read: the field is applied all the same). A member
// of value that marshals as null is left out: apply would read it as
// "remove", and the API server's validation names a required one.
func Field(ctx context.Context, c client.Client, job *trainer.TrainJob, field string, value any, manager string) (*trainer.TrainJob, error) {
	data, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	fields := map[string]any{}
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	for k, v := range fields {
		if v == nil {
			delete(fields, k)
		}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{field: fields}}}
	obj.SetGroupVersionKind(trainer.GroupVersion.WithKind(trainer.TrainJobKind))
	obj.SetNamespace(job.Namespace)
	obj.SetName(job.Name)
	obj.SetUID(job.UID)
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return nil, err
	}
	out := &trainer.TrainJob{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, out); err != nil {
		return nil, nil //nolint:nilerr // applied; only the answer is unreadable
	}
	return out, nil
}
