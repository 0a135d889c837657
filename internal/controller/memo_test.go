package controller

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// countingBuilder is fakeBuilder counting its Builds.
type countingBuilder struct {
	fakeBuilder
	builds int
}

func (b *countingBuilder) Build(ctx context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	b.builds++
	return b.fakeBuilder.Build(ctx, info, job)
}

func TestUnchangedInputsSkipThePlugins(t *testing.T) {
	b := &countingBuilder{}
	f := newFixtureOf(t, b, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	unchanged := objectApplies.WithLabelValues("FakeBuilder", "JobSet", applyResultUnchanged)
	u0 := testutil.ToFloat64(unchanged)
	reconcile := func() {
		t.Helper()
		if err := f.reconcile(t, "job"); err != nil {
			t.Fatal(err)
		}
	}

	reconcile()
	reconcile() // the JobSet's creation, a pod's progress: nothing the plugins read
	reconcile()
	if b.builds != 1 {
		t.Errorf("Build ran %d times for 3 reconciles of an unchanged TrainJob, want 1", b.builds)
	}
	if d := testutil.ToFloat64(unchanged) - u0; d != 2 {
		t.Errorf("result=unchanged grew by %v, want 2: the skipped reconciles still account for their objects", d)
	}
	if c := f.job(t, "job").Status.Conditions; len(c) == 0 || c[0].Message != "Created JobSet job; plugins: FakeBuilder" {
		t.Errorf("conditions = %+v, want Created with the objects' and the plugins' names", c)
	}

	// What the plugins read changed: they run again.
	f.relabel(t, "job", "2")
	reconcile()
	if b.builds != 2 {
		t.Errorf("after a change of the TrainJob, Build ran %d times in all, want 2", b.builds)
	}

	// An object deleted or changed behind the controller's back is built
	// again, though the TrainJob did not change.
	js := &jobsetv1alpha2.JobSet{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, js); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if b.builds != 3 {
		t.Errorf("after the JobSet was deleted, Build ran %d times in all, want 3", b.builds)
	}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, js); err != nil {
		t.Errorf("the deleted JobSet was not made again: %v", err)
	}

	// A reload (a new plugin set) runs the plugins again.
	next, err := frameworkruntime.New(context.Background(), framework.Registry{"FakeBuilder": func(framework.Handle) framework.Plugin { return b }}, []frameworkruntime.PluginSpec{{Name: "FakeBuilder"}})
	if err != nil {
		t.Fatal(err)
	}
	f.r.Framework.Replace(next)
	reconcile()
	if b.builds != 4 {
		t.Errorf("after the plugins were replaced, Build ran %d times in all, want 4", b.builds)
	}
}

// flakyBuilder fails its first Build.
type flakyBuilder struct{ countingBuilder }

func (b *flakyBuilder) Build(ctx context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	if b.builds++; b.builds == 1 {
		return nil, errBoom
	}
	return b.fakeBuilder.Build(ctx, info, job)
}

func TestAFailureIgnoredIsTriedAgain(t *testing.T) {
	b := &flakyBuilder{}
	f := newFixtureOf(t, b, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	fw, err := frameworkruntime.New(context.Background(), framework.Registry{"FakeBuilder": func(framework.Handle) framework.Plugin { return b }},
		[]frameworkruntime.PluginSpec{{Name: "FakeBuilder", FailurePolicy: frameworkruntime.FailurePolicyIgnore}})
	if err != nil {
		t.Fatal(err)
	}
	f.r.Framework = fw
	for range 2 {
		if err := f.reconcile(t, "job"); err != nil {
			t.Fatal(err)
		}
	}
	if b.builds != 2 {
		t.Fatalf("Build ran %d times, want 2: a reconcile whose plugin failure was ignored is not remembered", b.builds)
	}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, &jobsetv1alpha2.JobSet{}); err != nil {
		t.Errorf("the second try built no JobSet: %v", err)
	}
}
