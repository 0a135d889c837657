package controller

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ownCreations holds the objects a reconcile is creating, and reads its
// TrainJob's status from (createByApply), until the watch brings their
// creation.
//
// That event would reconcile the TrainJob again, to learn nothing: the
// object is as the reconcile that created it saw it, and that reconcile
// either wrote the status from it or failed and is retried anyway. In a
// burst it was one reconcile in two. But it was also the next try of a
// plugin whose failure that reconcile skipped (failurePolicy Ignore): such
// a reconcile asks to run again instead (Reconcile, skipsCreations). A later version of the object (its
// status written by the JobSet controller) is a different event, which
// reconciles as before.
//
// The watch often brings the creation before the create's answer has
// been read. The event is then held back until the answer says whether it
// was the object the reconcile read (same resourceVersion, and read
// whole); if not, the reconcile asks to run again (answered).
type ownCreations struct {
	mu sync.Mutex
	m  map[ownCreation]*creation
	// pruned is when entries were last dropped for their age.
	pruned time.Time
}

type ownCreation struct {
	gvk schema.GroupVersionKind
	key types.NamespacedName
}

type creation struct {
	// rv is the resourceVersion of the create's answer, once read;
	// eventRV that of the creation event held back before it was.
	rv, eventRV string
	at          time.Time
}

// ownCreationsTTL is how long a creation is remembered: far longer than a
// watch takes to bring it. An object deleted before its creation reached
// the cache has no event to take its entry away.
const ownCreationsTTL = time.Minute

// creating records that a reconcile is about to create the object.
func (o *ownCreations) creating(gvk schema.GroupVersionKind, key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if o.m == nil {
		o.m = map[ownCreation]*creation{}
	}
	if now.Sub(o.pruned) > ownCreationsTTL {
		for k, c := range o.m {
			if now.Sub(c.at) > ownCreationsTTL {
				delete(o.m, k)
			}
		}
		o.pruned = now
	}
	o.m[ownCreation{gvk, key}] = &creation{at: now}
}

// answered records the create's answer: the object is at resourceVersion
// rv, and whole says whether the reconcile reads the status from it. It
// reports whether the TrainJob must be reconciled again: its creation
// event was held back, and was not of the object the reconcile read.
func (o *ownCreations) answered(gvk schema.GroupVersionKind, key types.NamespacedName, rv string, whole bool) (again bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := ownCreation{gvk, key}
	c, ok := o.m[k]
	if !ok {
		return false
	}
	if c.eventRV != "" {
		delete(o.m, k)
		return !whole || c.eventRV != rv
	}
	if !whole {
		delete(o.m, k)
		return false
	}
	c.rv = rv
	return false
}

// seen reports whether the creation event of an object need not
// reconcile its TrainJob: it is the object a reconcile created and read,
// or one being created, whose answer decides (answered).
func (o *ownCreations) seen(gvk schema.GroupVersionKind, key types.NamespacedName, rv string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := ownCreation{gvk, key}
	c, ok := o.m[k]
	switch {
	case !ok:
		return false
	case c.rv == "" && c.eventRV == "":
		c.eventRV = rv
		return true
	default:
		delete(o.m, k)
		return c.rv == rv
	}
}

// forget drops what is remembered of an object: it was deleted, or its
// create failed (the reconcile's error retries it, held-back event or not).
func (o *ownCreations) forget(gvk schema.GroupVersionKind, key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, ownCreation{gvk, key})
}

// skipOwnCreations is an owner-mapped watch's handler that does not
// reconcile a TrainJob for the creation of an object its own reconcile
// created and read (ownCreations).
type skipOwnCreations struct {
	handler.EventHandler
	gvk     schema.GroupVersionKind
	created *ownCreations
}

func (h skipOwnCreations) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if h.created.seen(h.gvk, types.NamespacedName{Namespace: e.Object.GetNamespace(), Name: e.Object.GetName()}, e.Object.GetResourceVersion()) {
		return
	}
	h.EventHandler.Create(ctx, e, q)
}

func (h skipOwnCreations) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.created.forget(h.gvk, types.NamespacedName{Namespace: e.Object.GetNamespace(), Name: e.Object.GetName()})
	h.EventHandler.Delete(ctx, e, q)
}
