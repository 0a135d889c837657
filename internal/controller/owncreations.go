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

// ownCreations holds the objects a reconcile has just created and read
// its TrainJob's status from (createByApply), with the resourceVersion the
// create was answered with, until the watch brings their creation.
//
// That event would reconcile the TrainJob again, to learn nothing: the
// object is as the reconcile that created it saw it, and that reconcile
// either wrote the status from it or failed and is retried anyway. In a
// burst it was one reconcile in two. A later version of the object (its
// status written by the JobSet controller) is a different event, which
// reconciles as before.
//
// The watch may bring the creation before the create's answer has been
// read; then the event reconciles as before, and the entry, remembered
// after its event, is dropped once it is older than ownCreationsTTL.
type ownCreations struct {
	mu sync.Mutex
	m  map[ownCreation]createdAt
	// pruned is when entries were last dropped for their age.
	pruned time.Time
}

type createdAt struct {
	rv string
	at time.Time
}

// ownCreationsTTL is how long a creation is remembered: far longer than a
// watch takes to bring it.
const ownCreationsTTL = time.Minute

type ownCreation struct {
	gvk schema.GroupVersionKind
	key types.NamespacedName
}

// remember records that the controller created the object at
// resourceVersion rv.
func (o *ownCreations) remember(gvk schema.GroupVersionKind, key types.NamespacedName, rv string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if o.m == nil {
		o.m = map[ownCreation]createdAt{}
	}
	if now.Sub(o.pruned) > ownCreationsTTL {
		for k, c := range o.m {
			if now.Sub(c.at) > ownCreationsTTL {
				delete(o.m, k)
			}
		}
		o.pruned = now
	}
	o.m[ownCreation{gvk, key}] = createdAt{rv: rv, at: now}
}

// seen reports whether an object that the watch says was created is the
// one the controller created, as it created it; either way it is no
// longer remembered.
func (o *ownCreations) seen(gvk schema.GroupVersionKind, key types.NamespacedName, rv string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := ownCreation{gvk, key}
	want, ok := o.m[k]
	delete(o.m, k)
	return ok && want.rv == rv
}

// forget drops what is remembered of an object (it was deleted).
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
