package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// recentWrites holds, per TrainJob, the object as the API server returned
// it after the controller's last status update, until the cache has caught
// up with it.
//
// A status update does not wait for the watch, so the next reconcile of the
// same TrainJob (the JobSet it just created triggers one at once) may read
// the TrainJob as it was before the update. Computed from that stale copy,
// the status differs from it, and writing it fails with a conflict: one
// wasted write, and a retry with backoff. Reading the fresher copy instead
// gives the reconcile what the cache will say a moment later.
type recentWrites struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*trainer.TrainJob
}

// remember keeps a copy of a TrainJob the API server has just returned.
func (w *recentWrites) remember(job *trainer.TrainJob) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[types.NamespacedName]*trainer.TrainJob{}
	}
	w.m[types.NamespacedName{Namespace: job.Namespace, Name: job.Name}] = job.DeepCopy()
}

// fresher returns a copy of the remembered TrainJob when it is newer than
// cached, else cached; a remembered copy that the cache has caught up with
// is dropped.
func (w *recentWrites) fresher(cached *trainer.TrainJob) *trainer.TrainJob {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := types.NamespacedName{Namespace: cached.Namespace, Name: cached.Name}
	recent, ok := w.m[key]
	if !ok {
		return cached
	}
	if recent.UID != cached.UID || !olderThan(cached, recent) {
		delete(w.m, key)
		return cached
	}
	return recent.DeepCopy()
}

// observe drops the remembered copy of a TrainJob that the cache has
// caught up with; the TrainJob informer calls it on every event.
func (w *recentWrites) observe(job *trainer.TrainJob) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := types.NamespacedName{Namespace: job.Namespace, Name: job.Name}
	if recent, ok := w.m[key]; ok && (recent.UID != job.UID || !olderThan(job, recent)) {
		delete(w.m, key)
	}
}

// forget drops what is remembered of a TrainJob (it is gone).
func (w *recentWrites) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}

// len is the number of TrainJobs remembered.
func (w *recentWrites) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}

// olderThan reports whether a's resourceVersion is before b's. Resource
// versions that do not compare (not integers) are taken as not older: the
// cache is trusted, as without this.
func olderThan(a, b *trainer.TrainJob) bool {
	c, err := resourceversion.CompareResourceVersion(a.ResourceVersion, b.ResourceVersion)
	return err == nil && c < 0
}
