package operator

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// snapshotInterner is the cache transform of TrainJobs: besides dropping
// managedFields, it makes the cached TrainJobs that pinned the same runtime
// share one copy of its snapshot (status.runtimeSnapshot.spec).
//
// Why: every TrainJob carries the whole runtime it was created with (the
// runtime's JobSet template with its pod template), and a burst of
// thousands of TrainJobs of one runtime held as many equal copies of it:
// most of a cached TrainJob's size, and of the controller's heap at 5,000.
// The cache's objects are read-only (every read deep-copies them, and the
// few reads that do not only look), so sharing the snapshot's slices and
// pointers between them is safe; the TrainJob a reconcile reads is its own
// copy as before.
//
// A snapshot is shared only when it is equal to the one already kept for
// the same runtime and generation: a status edited by hand differs and
// keeps its own copy.
type snapshotInterner struct {
	mu   sync.Mutex
	kept map[snapshotKey]*trainer.TrainingRuntimeSpec
}

// snapshotKey names a runtime at one generation. namespace is the
// TrainJob's for a TrainingRuntime and empty for a ClusterTrainingRuntime.
type snapshotKey struct {
	namespace, apiGroup, kind, name string
	generation                      int64
}

// maxKeptSnapshots bounds what the interner keeps: one entry per runtime
// generation seen since the controller started, a handful in practice.
// Past the bound it starts again empty, which costs sharing, never
// correctness.
const maxKeptSnapshots = 1024

func newSnapshotInterner() *snapshotInterner {
	return &snapshotInterner{kept: map[snapshotKey]*trainer.TrainingRuntimeSpec{}}
}

// Transform is a cache.TransformFunc for TrainJobs.
func (s *snapshotInterner) Transform(obj any) (any, error) {
	obj, err := cache.TransformStripManagedFields()(obj)
	if err != nil {
		return obj, err
	}
	job, ok := obj.(*trainer.TrainJob)
	if !ok || job.Status.RuntimeSnapshot == nil {
		return obj, nil
	}
	snap := job.Status.RuntimeSnapshot
	key := snapshotKey{apiGroup: snap.APIGroup, kind: snap.Kind, name: snap.Name, generation: snap.Generation}
	if snap.Kind == trainer.TrainingRuntimeKind {
		key.namespace = job.Namespace
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	kept, found := s.kept[key]
	switch {
	case !found:
		if len(s.kept) >= maxKeptSnapshots {
			s.kept = map[snapshotKey]*trainer.TrainingRuntimeSpec{}
		}
		spec := snap.Spec
		s.kept[key] = &spec
	case equality.Semantic.DeepEqual(*kept, snap.Spec):
		// A shallow copy: its slices and pointers are the kept ones, and
		// the decoded ones are garbage from here on.
		snap.Spec = *kept
	}
	return job, nil
}
