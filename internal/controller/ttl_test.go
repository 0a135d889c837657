package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// finishedJob is a TrainJob that finished (condition typ) ago before now,
// with the runtime default runtimeTTL in its snapshot and its own ttl.
func finishedJob(typ string, now time.Time, ago time.Duration, ttl, runtimeTTL *int32) *trainer.TrainJob {
	job := trainJobOf("job", "plain")
	job.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))
	job.Spec.TTLSecondsAfterFinished = ttl
	snap := &trainer.RuntimeSnapshot{APIGroup: trainer.GroupVersion.Group, Kind: trainer.ClusterTrainingRuntimeKind, Name: "plain"}
	if runtimeTTL != nil {
		snap.Spec.RunPolicy = &trainer.RunPolicy{TTLSecondsAfterFinished: runtimeTTL}
	}
	job.Status.RuntimeSnapshot = snap
	job.Status.Conditions = []metav1.Condition{
		{Type: trainer.TrainJobCreated, Status: metav1.ConditionTrue, Reason: trainer.TrainJobJobsCreatedReason, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))},
		{Type: typ, Status: metav1.ConditionTrue, Reason: typ, LastTransitionTime: metav1.NewTime(now.Add(-ago))},
	}
	return job
}

func TestFinishedTrainJobIsDeletedAfterItsTTL(t *testing.T) {
	for _, tc := range []struct {
		name        string
		condition   string
		ttl         *int32
		runtimeTTL  *int32
		wantRequeue time.Duration
	}{
		{name: "own TTL of a completed job", condition: trainer.TrainJobComplete, ttl: ptr.To[int32](60), wantRequeue: 20 * time.Second},
		{name: "own TTL of a failed job", condition: trainer.TrainJobFailed, ttl: ptr.To[int32](60), wantRequeue: 20 * time.Second},
		{name: "the runtime's default", condition: trainer.TrainJobComplete, runtimeTTL: ptr.To[int32](50), wantRequeue: 10 * time.Second},
		{name: "the TrainJob's own wins over the runtime's", condition: trainer.TrainJobComplete, ttl: ptr.To[int32](100), runtimeTTL: ptr.To[int32](50), wantRequeue: time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil))
			now := f.clock.Now()
			if err := f.client.Create(context.Background(), finishedJob(tc.condition, now, 40*time.Second, tc.ttl, tc.runtimeTTL)); err != nil {
				t.Fatal(err)
			}
			res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "job"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter != tc.wantRequeue {
				t.Errorf("RequeueAfter = %v, want %v: the time left, counted from the condition", res.RequeueAfter, tc.wantRequeue)
			}
			f.job(t, "job") // still there

			f.clock.SetTime(now.Add(tc.wantRequeue))
			if err := f.reconcile(t, "job"); err != nil {
				t.Fatal(err)
			}
			err = f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, &trainer.TrainJob{})
			if !apierrors.IsNotFound(err) {
				t.Fatalf("get after the TTL = %v, want not found", err)
			}
			if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Normal TTLExpired") {
				t.Errorf("events = %q, want one Normal TTLExpired", ev)
			}
		})
	}
}

func TestFinishedTrainJobWithoutTTLIsKept(t *testing.T) {
	f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil))
	if err := f.client.Create(context.Background(), finishedJob(trainer.TrainJobComplete, f.clock.Now(), 24*time.Hour, nil, nil)); err != nil {
		t.Fatal(err)
	}
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "job"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != 0 {
		t.Errorf("RequeueAfter = %v, want none", res.RequeueAfter)
	}
	f.job(t, "job")
}

func TestZeroTTLDeletesTheTrainJobInTheReconcileThatFinishesIt(t *testing.T) {
	f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil))
	job := trainJobOf("job", "plain")
	job.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
	job.CreationTimestamp = metav1.NewTime(f.clock.Now().Add(-time.Minute))
	if err := f.client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	// The deadline has passed: this reconcile fails the job, and with a
	// TTL of 0 deletes it at once. The Failed condition is stamped with
	// the real time, to the second: the clock must not be behind it.
	f.clock.SetTime(time.Now().Add(time.Second))
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, &trainer.TrainJob{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get = %v, want not found", err)
	}
}

func TestUnfinishedTrainJobIsNotDeletedByItsTTL(t *testing.T) {
	f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil))
	job := trainJobOf("job", "plain")
	job.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	if err := f.client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	f.job(t, "job")
}
