package controller

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The two writes a TrainJob costs in the common case, its JobSet's first
// apply and its status update, are answered by the API server with the
// whole object written. Decoding those answers (a JobSet with its pod
// templates, a TrainJob with its runtime snapshot) was a third of the
// controller's allocations in a burst (docs/benchmarks.md), and the
// controller needs only their metadata: the resourceVersion to read its
// own write back (expectations), the uid and creation time of an object it
// just created. So both writes go through controller-runtime's metadata
// client (a PartialObjectMetadata object), whose requests ask the API
// server to answer with the metadata only; the server then encodes less
// too. Every other write (an apply to an object that exists) decodes its
// whole answer as before.

// createByApply server-side applies obj, an object the cache does not
// hold (so it is most likely created by this apply), and sets its metadata
// from the API server's answer. whole reports whether obj is then what the
// server holds: it is unless someone has written the object's status
// (it existed after all, the cache lagging), which the answer leaves out.
func (r *TrainJobReconciler) createByApply(ctx context.Context, p *pass, obj *unstructured.Unstructured, manager string) (whole bool, err error) {
	gvk, name := obj.GroupVersionKind(), obj.GetName()
	r.expectations.creating(p.job, gvk, name)
	answer, whole, err := r.applyForMetadata(ctx, obj, manager)
	if err != nil {
		r.expectations.createFailed(p.job, gvk, name)
		return false, err
	}
	r.expectations.created(p.job, gvk, name, answer.ResourceVersion, whole)
	return whole, nil
}

// applyForMetadata is createByApply's write.
func (r *TrainJobReconciler) applyForMetadata(ctx context.Context, obj *unstructured.Unstructured, manager string) (answer *metav1.PartialObjectMetadata, whole bool, err error) {
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, false, err
	}
	answer = &metav1.PartialObjectMetadata{}
	answer.SetGroupVersionKind(obj.GroupVersionKind())
	answer.SetNamespace(obj.GetNamespace())
	answer.SetName(obj.GetName())
	if err := r.Client.Patch(ctx, answer, client.RawPatch(types.ApplyPatchType, body), client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return nil, false, err
	}
	for _, m := range answer.ManagedFields {
		if m.Subresource == "status" {
			return answer, false, nil
		}
	}
	// The managed fields are most of the answer and the cache drops
	// them: converting them was 2% of the controller's CPU in a burst.
	answer.ManagedFields = nil
	meta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&answer.ObjectMeta)
	if err != nil {
		return nil, false, err
	}
	obj.Object["metadata"] = meta
	return answer, true, nil
}

// jsonPatchOp is one operation of an RFC 6902 JSON patch: the status
// write's (replaceStatus) and a running object's live fields' (liveChanges).
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// replaceStatus replaces job's status, as a status update would, and sets
// job's resourceVersion from the answer. The patch carries the
// resourceVersion job was read at, so a write from a stale copy fails
// with a conflict, exactly as an update's would.
func (r *TrainJobReconciler) replaceStatus(ctx context.Context, job *trainer.TrainJob) error {
	patch, err := json.Marshal([]jsonPatchOp{
		{Op: "replace", Path: "/metadata/resourceVersion", Value: job.ResourceVersion},
		// add replaces the member when it exists, and creates it when not.
		{Op: "add", Path: "/status", Value: &job.Status},
	})
	if err != nil {
		return fmt.Errorf("encoding the status: %w", err)
	}
	answer := &metav1.PartialObjectMetadata{}
	answer.SetGroupVersionKind(trainer.GroupVersion.WithKind(trainer.TrainJobKind))
	answer.SetNamespace(job.Namespace)
	answer.SetName(job.Name)
	if err := r.Client.Status().Patch(ctx, answer, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return err
	}
	job.ResourceVersion = answer.ResourceVersion
	return nil
}
