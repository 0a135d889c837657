package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// refusingClient answers every write of a JobSet with err, as the API
// server answers an object its validation refuses.
func refusingClient(c client.Client, err error) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if obj.GetObjectKind().GroupVersionKind().Kind == "JobSet" {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			return err
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*unstructured.Unstructured); ok {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
	})
}

var jobSetGK = jobSetGVK.GroupKind()

// The API server's 422 on a built object is the TrainJob's to fix: the
// reconcile's error is terminal (no retry with backoff for ever), and the
// Created condition and its Warning Event carry the API server's message,
// which names the object and the field.
func TestAnObjectTheAPIServerRefusesIsNotRetried(t *testing.T) {
	f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	refusal := apierrors.NewInvalid(jobSetGK, "job", field.ErrorList{
		field.Invalid(field.NewPath("spec", "replicatedJobs").Index(0).Child("replicas"), -1, "must be greater than or equal to 0"),
	})
	f.r.Client = refusingClient(f.client, refusal)

	err := f.reconcile(t, "job")
	if !errors.Is(err, reconcile.TerminalError(nil)) || !apierrors.IsInvalid(err) {
		t.Fatalf("reconcile error = %v, want a terminal error with the API server's 422", err)
	}
	c := meta.FindStatusCondition(f.job(t, "job").Status.Conditions, trainer.TrainJobCreated)
	const want = `plugin FakeBuilder: applying JobSet job: JobSet.jobset.x-k8s.io "job" is invalid: spec.replicatedJobs[0].replicas: Invalid value: -1: must be greater than or equal to 0; not retried`
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != trainer.TrainJobInvalidReason || !strings.HasPrefix(c.Message, want) {
		t.Errorf("Created condition = %+v, want False, %s, starting %q", c, trainer.TrainJobInvalidReason, want)
	}
	if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+trainer.TrainJobInvalidReason) || !strings.Contains(ev[0], "spec.replicatedJobs[0].replicas") {
		t.Errorf("events = %q, want one Warning %s naming the field", ev, trainer.TrainJobInvalidReason)
	}
}

// Any other failure of a write stays retried with backoff.
func TestAFailedWriteIsRetried(t *testing.T) {
	f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	f.r.Client = refusingClient(f.client, apierrors.NewServiceUnavailable("etcd is slow"))

	err := f.reconcile(t, "job")
	if err == nil || errors.Is(err, reconcile.TerminalError(nil)) {
		t.Fatalf("reconcile error = %v, want a retried (non-terminal) error", err)
	}
	if c := meta.FindStatusCondition(f.job(t, "job").Status.Conditions, trainer.TrainJobCreated); c == nil || c.Reason != trainer.TrainJobBuildFailedReason {
		t.Errorf("Created condition = %+v, want reason %s", c, trainer.TrainJobBuildFailedReason)
	}
}

// busyPlugin builds and reports status like fakeBuilder, and takes no
// call while busy (a wasm module in its backoff, or without a free
// instance).
type busyPlugin struct {
	fakeBuilder
	busyBuild, busyStatus bool
}

func (*busyPlugin) Describe() framework.Description {
	return framework.Description{Name: "Busy", MLPolicyKeys: []string{framework.NoPolicyKey}, Builds: []schema.GroupVersionKind{jobSetGVK}}
}

var errBusy = &framework.UnavailableError{Err: errors.New("no instance of the wasm plugin was free within 1s")}

func (b *busyPlugin) Build(ctx context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	if b.busyBuild {
		return nil, errBusy
	}
	return b.fakeBuilder.Build(ctx, info, job)
}

func (b *busyPlugin) Status(context.Context, *framework.Info, *trainer.TrainJob, []*unstructured.Unstructured) (*framework.StatusReport, error) {
	if b.busyStatus {
		return nil, errBusy
	}
	return nil, nil
}

// A plugin that takes no call says nothing of the TrainJob: the reconcile
// is tried again after a short fixed delay, with no error (so no
// exponential per-item backoff), and the Created condition is left as it
// is, True for a job that runs, with no Event.
func TestAnUnavailablePluginIsRetriedSoonAndLeavesCreated(t *testing.T) {
	p := &busyPlugin{}
	f := newFixtureOf(t, p, runtimeOf("plain", nil), trainJobOf("job", "plain"), trainJobOf("new", "plain"))
	reconcileNow := func(name string) (ctrl.Result, error) {
		return f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: name}})
	}
	if _, err := reconcileNow("job"); err != nil {
		t.Fatal(err)
	}
	f.events()
	wantRetry := func(t *testing.T, name string) {
		t.Helper()
		res, err := reconcileNow(name)
		if err != nil || res.RequeueAfter < unavailableRetry || res.RequeueAfter > unavailableRetry*3/2 {
			t.Errorf("reconcile = %+v, %v; want no error and a requeue after %s to %s", res, err, unavailableRetry, unavailableRetry*3/2)
		}
	}

	for _, tc := range []struct {
		name                  string
		busyBuild, busyStatus bool
	}{{"Build", true, false}, {"Status", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p.busyBuild, p.busyStatus = tc.busyBuild, tc.busyStatus
			f.relabel(t, "job", tc.name) // a change: the plugins run again
			wantRetry(t, "job")
			if c := meta.FindStatusCondition(f.job(t, "job").Status.Conditions, trainer.TrainJobCreated); c == nil || c.Status != metav1.ConditionTrue {
				t.Errorf("Created condition of a running job = %+v, want it left True", c)
			}
			// A new job gets no Created condition while it waits.
			wantRetry(t, "new")
			if c := meta.FindStatusCondition(f.job(t, "new").Status.Conditions, trainer.TrainJobCreated); c != nil && c.Status == metav1.ConditionFalse {
				t.Errorf("Created condition of a new job = %+v, want none while the plugin is unavailable", c)
			}
			if ev := f.events(); len(ev) != 0 {
				t.Errorf("events = %q, want none", ev)
			}
		})
	}

	p.busyBuild, p.busyStatus = false, false
	if res, err := reconcileNow("new"); err != nil || res.RequeueAfter != 0 {
		t.Fatalf("reconcile once the plugin is back = %+v, %v", res, err)
	}
	if c := meta.FindStatusCondition(f.job(t, "new").Status.Conditions, trainer.TrainJobCreated); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Created condition once the plugin is back = %+v, want True", c)
	}
}
