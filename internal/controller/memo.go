package controller

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// buildMemo remembers, per TrainJob, what its last reconcile built and
// what the objects carried afterwards, under a digest of everything the
// plugins read: the TrainJob as plugins see it, its runtime snapshot and
// the plugin set. Most reconciles of a TrainJob change none of that (the
// JobSet it has just created, a pod's progress, a status update): their
// objects come out the same, and the memo skips NewInfo and every Enforce
// and Build call, the part of a reconcile that costs CPU and, for external
// plugins, round trips. A reconcile still reads each object from the
// cache: a changed or deleted one means a full rebuild.
//
// It keeps no objects, only their identity and desired-state hash, and
// the Info they were built from, which the status plugins read on every
// reconcile: about 1.8 KB of heap per TrainJob for a Torch job of 4 nodes
// on the runtime of examples/runtimes/torch-distributed.yaml (9 MB for
// 5,000 TrainJobs), more for larger runtimes. A reconcile in which a plugin
// under Ignore failed is not remembered, so that the plugin is tried
// again.
type buildMemo struct {
	mu sync.Mutex
	m  map[types.NamespacedName]memoEntry
}

type memoEntry struct {
	uid     types.UID
	key     [sha256.Size]byte
	objects []memoObject
	message string // the Created condition's message
	// keys are the runtime's policy keys, by which the status plugins
	// that take part are chosen.
	keys framework.PolicyKeys
	// info is the Info the objects were built from, as Build received
	// it: the status plugins read it (framework.StatusReporter).
	info *framework.Info
}

// memoObject is one built object as the reconcile left it.
type memoObject struct {
	plugin     string
	gvk        schema.GroupVersionKind
	key        client.ObjectKey
	createOnce bool
	// hash is the desired-state hash the object carries (its own, when a
	// running object was left as it was).
	hash string
}

// memoKey digests the inputs of the plugins for a reconcile: desired, the
// TrainJob as the plugins see it (a passed deadline sets its suspend),
// whose runtime is the snapshot of job, and the plugin set of fw. ok is
// false when the job has no snapshot yet, so its runtime is read live.
func memoKey(job, desired *trainer.TrainJob, plugins *frameworkruntime.PluginSet) (key [sha256.Size]byte, ok bool) {
	snap := job.Status.RuntimeSnapshot
	if snap == nil {
		return key, false
	}
	data, err := json.Marshal(struct {
		UID                 types.UID
		Spec                trainer.TrainJobSpec
		Labels, Annotations map[string]string
		Group, Kind, Name   string
		RuntimeGeneration   int64
		PluginSet           uint64
	}{desired.UID, desired.Spec, desired.Labels, desired.Annotations, snap.APIGroup, snap.Kind, snap.Name, snap.Generation, plugins.ID()})
	if err != nil {
		return key, false
	}
	return sha256.Sum256(data), true
}

// lookup returns the memo of job when its key matches and every object is
// still as the reconcile left it.
func (r *TrainJobReconciler) lookupMemo(ctx context.Context, job *trainer.TrainJob, key [sha256.Size]byte) (memoEntry, bool) {
	r.memo.mu.Lock()
	e, ok := r.memo.m[client.ObjectKeyFromObject(job)]
	r.memo.mu.Unlock()
	if !ok || e.uid != job.UID || e.key != key {
		return memoEntry{}, false
	}
	for _, o := range e.objects {
		current := newBuiltObject(r.Client.Scheme(), o.gvk)
		err := r.Client.Get(ctx, o.key, current)
		switch {
		case apierrors.IsNotFound(err):
			return memoEntry{}, false
		case err != nil:
			return memoEntry{}, false
		case !o.createOnce && current.GetAnnotations()[DesiredHashAnnotation] != o.hash:
			return memoEntry{}, false
		}
	}
	return e, true
}

func (r *TrainJobReconciler) rememberBuild(job *trainer.TrainJob, e memoEntry) {
	r.memo.mu.Lock()
	defer r.memo.mu.Unlock()
	if r.memo.m == nil {
		r.memo.m = map[types.NamespacedName]memoEntry{}
	}
	e.uid = job.UID
	r.memo.m[client.ObjectKeyFromObject(job)] = e
}

func (r *TrainJobReconciler) forgetBuild(key types.NamespacedName) {
	r.memo.mu.Lock()
	defer r.memo.mu.Unlock()
	delete(r.memo.m, key)
}
