package controller

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/internal/runtimeref"
)

// goneObjects holds, per TrainJob, the last state of the objects it
// controlled that were deleted, as the delete events carried them, until
// the TrainJob's next reconcile.
//
// A JobSet deleted the moment it finished (ttlSecondsAfterFinished: 0, a
// garbage collector, a hand) may be gone from the cache before a reconcile
// saw it finished: the TrainJob would then look unfinished and its JobSet
// would be built again, and the job would run again. The delete event still
// carries the finished JobSet; the status plugins read it from here.
//
// It lives in one process's memory, so it is only the fallback for objects
// without StatusFinalizer (built before the controller put it on, and
// running since): the finalizer keeps a deleted workload in the API server
// for whichever replica reconciles next (finalizer.go).
type goneObjects struct {
	mu sync.Mutex
	m  map[types.NamespacedName][]goneObject
}

type goneObject struct {
	gvk schema.GroupVersionKind
	obj client.Object
}

func (g *goneObjects) remember(job types.NamespacedName, gvk schema.GroupVersionKind, obj client.Object) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[types.NamespacedName][]goneObject{}
	}
	g.m[job] = append(g.m[job], goneObject{gvk: gvk, obj: obj.DeepCopyObject().(client.Object)})
}

// take returns and forgets what was remembered for a TrainJob.
func (g *goneObjects) take(job types.NamespacedName) []goneObject {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.m[job]
	delete(g.m, job)
	return out
}

// restore puts back what take returned, for a reconcile that failed.
func (g *goneObjects) restore(job types.NamespacedName, objs []goneObject) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[types.NamespacedName][]goneObject{}
	}
	g.m[job] = append(objs, g.m[job]...)
}

// rememberDeleted is an owner-mapped watch's handler that also remembers
// each deleted object under the TrainJob that controlled it.
type rememberDeleted struct {
	handler.EventHandler
	gvk  schema.GroupVersionKind
	gone *goneObjects
}

func (h rememberDeleted) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if owner := metav1.GetControllerOfNoCopy(e.Object); owner != nil && owner.Kind == trainer.TrainJobKind && owner.APIVersion == trainer.GroupVersion.String() {
		h.gone.remember(types.NamespacedName{Namespace: e.Object.GetNamespace(), Name: owner.Name}, h.gvk, e.Object)
	}
	h.EventHandler.Delete(ctx, e, q)
}

// finishedWhenGone reports whether the status plugins, given the last state
// of the job's deleted objects, say that the job had finished; then it has
// written the TrainJob's status as they say, and the job must not be
// built again. A job whose objects were deleted while it ran is not
// finished: they are built again.
func (r *TrainJobReconciler) finishedWhenGone(ctx context.Context, job *trainer.TrainJob, gone []goneObject) (bool, error) {
	uid := job.UID
	lister := func(_ context.Context, gvk schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
		var out []*unstructured.Unstructured
		for _, g := range gone {
			owner := metav1.GetControllerOfNoCopy(g.obj)
			if g.gvk != gvk || owner == nil || owner.UID != uid {
				continue
			}
			u, err := asUnstructured(g.obj, gvk)
			if err != nil {
				return nil, err
			}
			out = append(out, u)
		}
		return out, nil
	}
	cycle := r.Framework.Current().NewCycleWithoutRuntime(runtimeref.WithoutSnapshot(job))
	// No Info: nothing is built for a job whose objects are gone, and
	// only whether they finished is read.
	st, ignored, err := cycle.Status(ctx, nil, lister)
	r.recordIgnored(job, ignored)
	if err != nil || st == nil {
		return false, err
	}
	if !meta.IsStatusConditionTrue(st.Conditions, trainer.TrainJobComplete) && !meta.IsStatusConditionTrue(st.Conditions, trainer.TrainJobFailed) {
		return false, nil
	}
	original := job.DeepCopy()
	mergeStatus(job, st)
	if _, err := r.writeStatus(ctx, original, job); err != nil {
		return true, fmt.Errorf("updating the status of a TrainJob whose objects finished and were deleted: %w", err)
	}
	return true, nil
}
