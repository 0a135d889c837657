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
	written := func() bool {
		x := f.r.expectations.jobs[client.ObjectKey{Namespace: "ns", Name: "job"}]
		return x != nil && x.status != nil
	}
	if !written() {
		t.Error("the status write is not expected while the cache lags")
	}
	// Once the cache has the update, the copy goes.
	f.r.expectations.observed(f.job(t, "job"))
	if written() {
		t.Error("the status write is still expected after the cache caught up")
	}
}

func TestExpectedStatusWrites(t *testing.T) {
	var e expectations
	old := trainJobOf("job", "rt")
	old.ResourceVersion = "9"
	written := old.DeepCopy()
	written.ResourceVersion = "10"
	written.Status.Conditions = nil
	e.statusWritten(written)

	if got := e.startPass(old); got.ResourceVersion != "10" {
		t.Errorf("startPass(rv 9) = rv %s, want the written rv 10", got.ResourceVersion)
	}
	if got := e.startPass(old); got == e.jobs[client.ObjectKeyFromObject(old)].status {
		t.Error("startPass returned the expected object itself, not a copy")
	}
	newer := old.DeepCopy()
	newer.ResourceVersion = "11"
	if got := e.startPass(newer); got.ResourceVersion != "11" || e.len() != 0 {
		t.Errorf("startPass(rv 11) = rv %s with %d expected, want the cache's and none", got.ResourceVersion, e.len())
	}

	// A TrainJob deleted and created again under the same name is another.
	e.statusWritten(written)
	other := old.DeepCopy()
	other.UID = "another"
	if got := e.startPass(other); got.UID != "another" || e.len() != 0 {
		t.Errorf("startPass of a new TrainJob with the same name = uid %s, want its own", got.UID)
	}

	// The cache's older version keeps the write expected; its own
	// version lets it go.
	e.statusWritten(written)
	e.observed(old)
	if e.len() != 1 {
		t.Error("the cache's older version let the written status go")
	}
	e.observed(written)
	if e.len() != 0 {
		t.Error("the cache's version of the write did not let it go")
	}

	e.statusWritten(written)
	e.forget(client.ObjectKeyFromObject(written))
	if e.len() != 0 {
		t.Error("forget left the TrainJob")
	}
}
