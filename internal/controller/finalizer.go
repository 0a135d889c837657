package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// StatusFinalizer is the finalizer the controller puts on every workload
// it applies (isWorkload), so that a finished workload outlives its
// deletion until the TrainJob's status has been written from it.
//
// Whether a TrainJob whose JobSet is gone has finished, or must be built
// again, is told only by the JobSet's last state. A JobSet deleted the
// moment it finishes (ttlSecondsAfterFinished 0, a garbage collector, a
// hand) may go before any reconcile saw it finished, and without its last
// state the job would be built again and run again. With the finalizer,
// the deleted JobSet stays in the API server, its last state readable by
// whichever replica reconciles next, and the
// finalizer is removed only after a status write that read it (or when its
// TrainJob is finished, being deleted, or gone), like the Job controller's
// batch.kubernetes.io/job-tracking finalizer on pods.
const StatusFinalizer = "trainforge.dev/trainjob-status"

// withStatusFinalizer adds StatusFinalizer to a workload about to be
// applied.
func withStatusFinalizer(obj *unstructured.Unstructured) {
	if isWorkload(obj) {
		controllerutil.AddFinalizer(obj, StatusFinalizer)
	}
}

// keepStatusFinalizer puts StatusFinalizer on current, the object o was
// built as, when it is a workload without it: one applied before the
// controller put the finalizer on, and left running since (a running
// workload is not applied again), or one whose finalizer was taken off by
// hand. From then on its last state outlives its deletion as any other's.
func (r *TrainJobReconciler) keepStatusFinalizer(ctx context.Context, o frameworkruntime.BuiltObject, current client.Object) error {
	if !isWorkload(o.Object) || controllerutil.ContainsFinalizer(current, StatusFinalizer) {
		return nil
	}
	if err := r.patchStatusFinalizer(ctx, current, true); err != nil {
		return fmt.Errorf("plugin %s: adding the finalizer %s to %s %s: %w", o.Plugin, StatusFinalizer, o.Object.GetKind(), current.GetName(), err)
	}
	return nil
}

// patchStatusFinalizer adds StatusFinalizer to obj (add) or removes it, by
// a merge patch of its finalizers that carries its resourceVersion, so
// that a copy gone stale meanwhile is refused instead of dropping another
// controller's finalizer.
func (r *TrainJobReconciler) patchStatusFinalizer(ctx context.Context, obj client.Object, add bool) error {
	before := obj.DeepCopyObject().(client.Object)
	after := obj.DeepCopyObject().(client.Object)
	if add {
		controllerutil.AddFinalizer(after, StatusFinalizer)
	} else {
		controllerutil.RemoveFinalizer(after, StatusFinalizer)
	}
	return r.Client.Patch(ctx, after, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// statusReads records which objects the status plugins of one reconcile
// read, at which resourceVersion, per kind.
type statusReads struct {
	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]map[types.UID]string
}

func (s *statusReads) listed(gvk schema.GroupVersionKind, objs []*unstructured.Unstructured) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kinds == nil {
		s.kinds = map[schema.GroupVersionKind]map[types.UID]string{}
	}
	seen := s.kinds[gvk]
	if seen == nil {
		seen = map[types.UID]string{}
		s.kinds[gvk] = seen
	}
	for _, o := range objs {
		seen[o.GetUID()] = o.GetResourceVersion()
	}
}

// recorded reports whether the status written from these reads holds the
// last state of obj, of kind gvk: the status plugins read obj as it is,
// or read no object of its kind (the status depends on none).
func (s *statusReads) recorded(gvk schema.GroupVersionKind, obj client.Object) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen, ok := s.kinds[gvk]
	if !ok {
		return true
	}
	rv, ok := seen[obj.GetUID()]
	return ok && rv == obj.GetResourceVersion()
}

// releaseDeleted removes StatusFinalizer from the deleted objects (those
// with a deletionTimestamp) controlled by a TrainJob named job.Name, of
// every kind a plugin builds, for which done says that nothing waits for
// them any more. It is called after the status write that read them.
func (r *TrainJobReconciler) releaseDeleted(ctx context.Context, job types.NamespacedName, done func(schema.GroupVersionKind, client.Object) bool) error {
	var errs []error
	for _, gvk := range r.builtKinds() {
		// Read only: most reconciles find nothing deleted.
		objs, err := r.listControlledBy(ctx, job, gvk, client.UnsafeDisableDeepCopy)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, o := range objs {
			if o.GetDeletionTimestamp().IsZero() || !controllerutil.ContainsFinalizer(o, StatusFinalizer) || !done(gvk, o) {
				continue
			}
			if err := r.patchStatusFinalizer(ctx, o, false); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("removing the finalizer %s from %s %s: %w", StatusFinalizer, gvk.Kind, o.GetName(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// releaseAll is releaseDeleted's done for a TrainJob that is finished,
// being deleted or gone: its status no longer depends on its objects.
func releaseAll(schema.GroupVersionKind, client.Object) bool { return true }

// builtKinds returns the kinds the plugins of the current set build.
func (r *TrainJobReconciler) builtKinds() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	seen := map[schema.GroupVersionKind]bool{}
	for _, d := range r.Framework.Current().Descriptions() {
		for _, gvk := range d.Builds {
			if !seen[gvk] {
				seen[gvk] = true
				out = append(out, gvk)
			}
		}
	}
	return out
}

// listControlledBy lists, from the cache, the objects of a kind whose
// controller is a TrainJob named job.Name in its namespace, whatever its
// UID (one deleted and created again under the same name leaves the
// objects of the first).
func (r *TrainJobReconciler) listControlledBy(ctx context.Context, job types.NamespacedName, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]client.Object, error) {
	list := newBuiltList(r.Client.Scheme(), gvk)
	// The index finds the job's objects directly; a label selector
	// would test every object of the namespace.
	var match client.ListOption = client.MatchingLabels{framework.TrainJobNameLabel: job.Name}
	if _, ok := r.indexed.Load(gvk); ok {
		match = client.MatchingFields{ownerIndex: job.Name}
	}
	if err := r.Client.List(ctx, list, append([]client.ListOption{client.InNamespace(job.Namespace), match}, opts...)...); err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	out := make([]client.Object, 0, len(items))
	for _, item := range items {
		o, ok := item.(client.Object)
		if !ok {
			continue
		}
		if names := indexByOwner(o); len(names) != 1 || names[0] != job.Name {
			continue
		}
		out = append(out, o)
	}
	return out, nil
}
