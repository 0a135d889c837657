package controller

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// staleReader serves the TrainJobs as they were when frozen, as an
// informer cache that has not seen the controller's own writes yet.
type staleReader struct {
	client.Client
	frozen map[client.ObjectKey]*trainer.TrainJob
}

func (s *staleReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if job, ok := obj.(*trainer.TrainJob); ok {
		if f, ok := s.frozen[key]; ok {
			f.DeepCopyInto(job)
			return nil
		}
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

func TestAStaleCacheCausesNoConflict(t *testing.T) {
	f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	stale := &staleReader{Client: f.client, frozen: map[client.ObjectKey]*trainer.TrainJob{
		{Namespace: "ns", Name: "job"}: f.job(t, "job"),
	}}
	f.r.Client = stale
	// The first reconcile writes the status; the second, which the new
	// JobSet triggers, still reads the TrainJob without it.
	for i := range 2 {
		if err := f.reconcile(t, "job"); err != nil {
			t.Fatalf("reconcile %d: %v", i+1, err)
		}
	}
	if !meta.IsStatusConditionTrue(f.job(t, "job").Status.Conditions, trainer.TrainJobCreated) {
		t.Error("the TrainJob is not Created")
	}
	if n := f.r.recent.len(); n != 1 {
		t.Errorf("%d TrainJobs remembered, want 1 while the cache lags", n)
	}
	// Once the cache has the update, the copy goes.
	f.r.recent.observe(f.job(t, "job"))
	if n := f.r.recent.len(); n != 0 {
		t.Errorf("%d TrainJobs remembered after the cache caught up, want 0", n)
	}
}

func TestRecentWrites(t *testing.T) {
	var w recentWrites
	old := trainJobOf("job", "rt")
	old.ResourceVersion = "9"
	written := old.DeepCopy()
	written.ResourceVersion = "10"
	written.Status.Conditions = nil
	w.remember(written)

	if got := w.fresher(old); got.ResourceVersion != "10" {
		t.Errorf("fresher(rv 9) = rv %s, want the remembered rv 10", got.ResourceVersion)
	}
	if got := w.fresher(old); got == w.m[client.ObjectKeyFromObject(old)] {
		t.Error("fresher returned the remembered object itself, not a copy")
	}
	newer := old.DeepCopy()
	newer.ResourceVersion = "11"
	if got := w.fresher(newer); got.ResourceVersion != "11" || w.len() != 0 {
		t.Errorf("fresher(rv 11) = rv %s with %d remembered, want the cache's and none", got.ResourceVersion, w.len())
	}

	// A TrainJob deleted and created again under the same name is another.
	w.remember(written)
	other := old.DeepCopy()
	other.UID = "another"
	if got := w.fresher(other); got.UID != "another" || w.len() != 0 {
		t.Errorf("fresher of a new TrainJob with the same name = uid %s, want its own", got.UID)
	}

	w.remember(written)
	w.forget(client.ObjectKeyFromObject(written))
	if w.len() != 0 {
		t.Error("forget left the TrainJob")
	}
}
