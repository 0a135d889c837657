package controller

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// expectations holds, per TrainJob, the writes of the controller that its
// informers have not brought back yet, as kube-controller-manager's
// ControllerExpectations hold the pods a ReplicaSet created until their
// watch events come. A write does not wait for the watch; two of them
// would otherwise cost a reconcile each:
//
//   - the last status write. The next reconcile of the same TrainJob (the
//     JobSet just created triggers one at once) may read the TrainJob from
//     the cache as it was before the write; computed from that stale copy,
//     the status differs from it and writing it fails with a conflict, one
//     wasted write and a retry with backoff. The reconcile reads the copy
//     the API server answered instead (startPass).
//   - the objects a reconcile creates and reads its TrainJob's status from
//     (createByApply). Their creation event would reconcile the TrainJob
//     again to learn nothing: the object is as the reconcile that created
//     it saw it, and that reconcile either wrote the status from it or
//     failed and is retried anyway (in a burst it was one reconcile in
//     two). The event is dropped (creationSeen). But it was also the next
//     try of a plugin whose failure that reconcile skipped (failurePolicy
//     Ignore): such a reconcile asks to run again instead (requeue). A
//     later version of the object (its status written by the JobSet
//     controller) is a different event, which reconciles as before. The
//     watch often brings the creation before the create's answer has been
//     read: the event is then held back until the answer says whether it
//     was of the object the reconcile read (same resourceVersion, read
//     whole); if not, the reconcile asks to run again.
//
// A TrainJob's expectations go once the cache has caught up with them, and
// all of them when the TrainJob is deleted. Reconciles of one TrainJob never
// run at once (the workqueue), so a pass's findings are its own.
type expectations struct {
	mu   sync.Mutex
	jobs map[types.NamespacedName]*expected
	// pruned is when creations were last dropped for their age.
	pruned time.Time
}

type expected struct {
	// status is the TrainJob as the API server answered its last status
	// write, until the cache holds that version or a later one.
	status *trainer.TrainJob
	// creations are the objects being created, until their creation
	// event.
	creations map[createdObject]*creation
	// The findings of the running pass: again, a creation event held
	// back for it was news; skipping, the creation event of an object it
	// created will not reconcile the TrainJob.
	again, skipping bool
}

type createdObject struct {
	gvk  schema.GroupVersionKind
	name string
}

type creation struct {
	// rv is the resourceVersion of the create's answer, once read;
	// eventRV that of the creation event held back before it was.
	rv, eventRV string
	at          time.Time
}

// creationTTL is how long a creation is expected: far longer than a watch
// takes to bring it. An object deleted before its creation reached the
// cache has no event to take its entry away.
const creationTTL = time.Minute

// of returns job's expectations, made if make is set; nil otherwise. The
// caller holds mu.
func (e *expectations) of(job types.NamespacedName, make bool) *expected {
	x := e.jobs[job]
	if x == nil && make {
		if e.jobs == nil {
			e.jobs = map[types.NamespacedName]*expected{}
		}
		x = &expected{}
		e.jobs[job] = x
	}
	return x
}

// dropIfEmpty forgets job when nothing of it is expected. The caller holds
// mu.
func (e *expectations) dropIfEmpty(job types.NamespacedName, x *expected) {
	if x.status == nil && len(x.creations) == 0 && !x.again && !x.skipping {
		delete(e.jobs, job)
	}
}

// startPass starts a reconcile of the TrainJob cached, and returns the
// TrainJob it reconciles: a copy of the last status write's answer when
// that is newer than cached, else cached. A written copy that the cache
// has caught up with is dropped, and so are the findings of an earlier
// pass that failed before it could act on them.
func (e *expectations) startPass(cached *trainer.TrainJob) *trainer.TrainJob {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := client.ObjectKeyFromObject(cached)
	x := e.of(key, false)
	if x == nil {
		return cached
	}
	x.again, x.skipping = false, false
	out := cached
	switch {
	case x.status == nil:
	case x.status.UID != cached.UID || !olderThan(cached, x.status):
		x.status = nil
	default:
		out = x.status.DeepCopy()
	}
	e.dropIfEmpty(key, x)
	return out
}

// statusWritten expects the TrainJob as the API server has just answered
// a write of its status.
func (e *expectations) statusWritten(job *trainer.TrainJob) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.of(client.ObjectKeyFromObject(job), true).status = job.DeepCopy()
}

// observed is told of every version of a TrainJob the cache receives:
// a written status it holds now is no longer expected.
func (e *expectations) observed(job *trainer.TrainJob) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := client.ObjectKeyFromObject(job)
	x := e.of(key, false)
	if x == nil || x.status == nil || (x.status.UID == job.UID && olderThan(job, x.status)) {
		return
	}
	x.status = nil
	e.dropIfEmpty(key, x)
}

// forget drops everything expected of a TrainJob: it is gone.
func (e *expectations) forget(job types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.jobs, job)
}

// creating expects the creation of an object that a reconcile of job is
// about to create.
func (e *expectations) creating(job types.NamespacedName, gvk schema.GroupVersionKind, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	if now.Sub(e.pruned) > creationTTL {
		for key, x := range e.jobs {
			for o, c := range x.creations {
				if now.Sub(c.at) > creationTTL {
					delete(x.creations, o)
				}
			}
			e.dropIfEmpty(key, x)
		}
		e.pruned = now
	}
	x := e.of(job, true)
	if x.creations == nil {
		x.creations = map[createdObject]*creation{}
	}
	x.creations[createdObject{gvk, name}] = &creation{at: now}
}

// createFailed stops expecting a creation whose create failed: the
// reconcile's error retries it, held-back event or not.
func (e *expectations) createFailed(job types.NamespacedName, gvk schema.GroupVersionKind, name string) {
	e.deleted(job, gvk, name)
}

// created records the create's answer: the object is at resourceVersion
// rv, and whole says whether the reconcile reads the status from it. When
// its creation event was held back and was not of that object, the pass
// must run again; when it will be dropped, the pass skips it (requeue).
func (e *expectations) created(job types.NamespacedName, gvk schema.GroupVersionKind, name, rv string, whole bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.of(job, false)
	if x == nil {
		return
	}
	o := createdObject{gvk, name}
	c, ok := x.creations[o]
	switch {
	case !ok:
	case c.eventRV != "":
		delete(x.creations, o)
		if !whole || c.eventRV != rv {
			x.again = true
		} else {
			x.skipping = true
		}
	case !whole:
		delete(x.creations, o)
	default:
		c.rv = rv
		x.skipping = true
	}
	e.dropIfEmpty(job, x)
}

// creationSeen reports whether the creation event of an object, at
// resourceVersion rv, need not reconcile job: it is the object a
// reconcile created and read, or one being created, whose answer decides
// (created).
func (e *expectations) creationSeen(job types.NamespacedName, gvk schema.GroupVersionKind, name, rv string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.of(job, false)
	if x == nil {
		return false
	}
	o := createdObject{gvk, name}
	c, ok := x.creations[o]
	switch {
	case !ok:
		return false
	case c.rv == "" && c.eventRV == "":
		c.eventRV = rv
		return true
	default:
		delete(x.creations, o)
		e.dropIfEmpty(job, x)
		return c.rv == rv
	}
}

// deleted stops expecting the creation of an object that was deleted.
func (e *expectations) deleted(job types.NamespacedName, gvk schema.GroupVersionKind, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x := e.of(job, false); x != nil {
		delete(x.creations, createdObject{gvk, name})
		e.dropIfEmpty(job, x)
	}
}

// requeue ends job's pass and reports whether it must run again, in place
// of a creation event that does not reconcile: one held back for it was
// news, or it skipped a plugin's failure (skipped) and one of its
// creations will not bring the TrainJob back, which was the next try of
// the plugin for a new TrainJob.
func (e *expectations) requeue(job types.NamespacedName, skipped bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.of(job, false)
	if x == nil {
		return false
	}
	again := x.again || (x.skipping && skipped)
	x.again, x.skipping = false, false
	e.dropIfEmpty(job, x)
	return again
}

// endPass drops the findings of job's pass when it does not act on them
// (it failed, or finished the TrainJob).
func (e *expectations) endPass(job types.NamespacedName) { e.requeue(job, false) }

// len is the number of TrainJobs something is expected of.
func (e *expectations) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.jobs)
}

// olderThan reports whether a's resourceVersion is before b's. Resource
// versions that do not compare (not integers) are taken as not older: the
// cache is trusted, as without expectations.
func olderThan(a, b *trainer.TrainJob) bool {
	c, err := resourceversion.CompareResourceVersion(a.ResourceVersion, b.ResourceVersion)
	return err == nil && c < 0
}

// expectCreations is an owner-mapped watch's handler that does not
// reconcile a TrainJob for the creation of an object its own reconcile
// created and read (expectations.creationSeen).
type expectCreations struct {
	handler.EventHandler
	gvk          schema.GroupVersionKind
	expectations *expectations
}

func (h expectCreations) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if job, ok := controllingTrainJob(e.Object); ok && h.expectations.creationSeen(job, h.gvk, e.Object.GetName(), e.Object.GetResourceVersion()) {
		return
	}
	h.EventHandler.Create(ctx, e, q)
}

func (h expectCreations) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if job, ok := controllingTrainJob(e.Object); ok {
		h.expectations.deleted(job, h.gvk, e.Object.GetName())
	}
	h.EventHandler.Delete(ctx, e, q)
}

// controllingTrainJob is the TrainJob that controls obj, if one does, by
// the rule of the owner index (indexByOwner).
func controllingTrainJob(obj client.Object) (types.NamespacedName, bool) {
	names := indexByOwner(obj)
	if len(names) != 1 {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: names[0]}, true
}
