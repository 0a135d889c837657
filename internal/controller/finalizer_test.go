package controller

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin/jobset"
	"github.com/trainforge/trainforge/builtin/plainml"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// finishCounts sums trainforge_trainjob_completions_total and
// trainforge_trainjob_failures_total over every series.
func finishCounts() float64 {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(completions, failures)
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	var sum float64
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// plainFixture is a fixture with the PlainML and JobSet plugins, whose
// TrainJob "job" has been reconciled once: its JobSet exists.
func plainFixture(t *testing.T) *fixture {
	t.Helper()
	rt := runtimeOf("plain", nil)
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "trainer"}}
	f := newFixtureWith(t, []framework.Plugin{plainml.New(), jobset.New()}, rt, trainJobOf("job", "plain"))
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	return f
}

var jobKey = client.ObjectKey{Namespace: "ns", Name: "job"}

func (f *fixture) jobSet(t *testing.T) *jobsetv1alpha2.JobSet {
	t.Helper()
	js := &jobsetv1alpha2.JobSet{}
	if err := f.client.Get(context.Background(), jobKey, js); err != nil {
		t.Fatal(err)
	}
	return js
}

// restarted gives the fixture a new reconciler on the same API server, as
// a controller that restarted, or another replica that became leader: it
// has seen none of the events the first one saw.
func (f *fixture) restarted() {
	f.recorder = events.NewFakeRecorder(20)
	f.r = &TrainJobReconciler{Client: f.client, Framework: f.r.Framework, Recorder: f.recorder, Clock: f.clock}
}

// A JobSet that finishes and is deleted (ttlSecondsAfterFinished 0) while
// no controller runs: its StatusFinalizer keeps it, finished, until the
// next controller has read it, so the TrainJob finishes, is counted once,
// and its JobSet is not built again.
func TestAFinishedJobSetDeletedWhileNoControllerRunsIsNotBuiltAgain(t *testing.T) {
	f := plainFixture(t)
	js := f.jobSet(t)
	if !controllerutil.ContainsFinalizer(js, StatusFinalizer) {
		t.Fatalf("the JobSet's finalizers are %v, want %s among them", js.Finalizers, StatusFinalizer)
	}
	f.finishedAndDeleted(t, js, f.restarted)
}

// A JobSet without StatusFinalizer (applied before the controller put it
// on, and running since, so never applied again) gets it from the next
// controller's first reconcile: deleted the moment it finishes, it then
// stays until the TrainJob's status is written from it, and the job
// finishes instead of being built again and run again.
func TestAJobSetWithoutTheFinalizerGetsItAndIsNotBuiltAgain(t *testing.T) {
	f := plainFixture(t)
	js := f.jobSet(t)
	controllerutil.RemoveFinalizer(js, StatusFinalizer)
	if err := f.client.Update(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	f.restarted()
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	js = f.jobSet(t)
	if !controllerutil.ContainsFinalizer(js, StatusFinalizer) {
		t.Fatalf("the running JobSet's finalizers are %v after a reconcile, want %s among them", js.Finalizers, StatusFinalizer)
	}
	f.finishedAndDeleted(t, js, func() {})
}

// finishedAndDeleted completes js and deletes it, runs between (a
// controller's restart, or nothing), and checks that the next reconciles
// finish the TrainJob from it, count the finish once and build no JobSet
// again.
func (f *fixture) finishedAndDeleted(t *testing.T, js *jobsetv1alpha2.JobSet, between func()) {
	t.Helper()
	ctx := context.Background()
	js.Status.Conditions = []metav1.Condition{{Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "jobset completed successfully", LastTransitionTime: metav1.Now()}}
	if err := f.client.Update(ctx, js); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(ctx, js); err != nil {
		t.Fatal(err)
	}
	counted := finishCounts()

	between()
	for range 2 {
		if err := f.reconcile(t, "job"); err != nil {
			t.Fatal(err)
		}
	}
	conds := f.job(t, "job").Status.Conditions
	if got := conds[len(conds)-1].Type; got != trainer.TrainJobComplete {
		t.Errorf("State column reads %s, want Complete; conditions %v", got, summary(conds))
	}
	if err := f.client.Get(ctx, jobKey, &jobsetv1alpha2.JobSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("the JobSet is still there or built again (get: %v)", err)
	}
	if got := finishCounts() - counted; got != 1 {
		t.Errorf("completions and failures counted %v times, want once", got)
	}
}

// A JobSet deleted while it ran is kept until a status write read it, then
// released, and built again once it is gone.
func TestARunningJobSetDeletedIsReleasedAndBuiltAgain(t *testing.T) {
	f := plainFixture(t)
	ctx := context.Background()
	if err := f.client.Delete(ctx, f.jobSet(t)); err != nil {
		t.Fatal(err)
	}
	f.restarted()
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	// The delete event of the released JobSet brings the TrainJob back.
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	rebuilt := f.jobSet(t)
	// A deletionTimestamp is never unset: one without is another JobSet.
	if !rebuilt.DeletionTimestamp.IsZero() {
		t.Errorf("the JobSet was not built again: it is the deleted one (deletionTimestamp %v)", rebuilt.DeletionTimestamp)
	}
	if isFinished(f.job(t, "job")) {
		t.Error("the TrainJob finished")
	}
}

// The objects of a TrainJob that is being deleted, or gone, are released:
// nothing will read their last state.
func TestTheObjectsOfADeletedTrainJobAreReleased(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delete func(*testing.T, *fixture)
	}{
		{"being deleted", func(t *testing.T, f *fixture) {
			job := f.job(t, "job")
			job.Finalizers = []string{metav1.FinalizerDeleteDependents}
			if err := f.client.Update(context.Background(), job); err != nil {
				t.Fatal(err)
			}
			if err := f.client.Delete(context.Background(), job); err != nil {
				t.Fatal(err)
			}
		}},
		{"gone", func(t *testing.T, f *fixture) {
			if err := f.client.Delete(context.Background(), f.job(t, "job")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := plainFixture(t)
			ctx := context.Background()
			tc.delete(t, f)
			// The garbage collector deletes the TrainJob's JobSet.
			if err := f.client.Delete(ctx, f.jobSet(t)); err != nil {
				t.Fatal(err)
			}
			if err := f.reconcile(t, "job"); err != nil {
				t.Fatal(err)
			}
			if err := f.client.Get(ctx, jobKey, &jobsetv1alpha2.JobSet{}); !apierrors.IsNotFound(err) {
				t.Errorf("the JobSet is still there (get: %v)", err)
			}
		})
	}
}

// A finished TrainJob's JobSet deleted later (its own TTL) is released.
func TestTheJobSetOfAFinishedTrainJobIsReleased(t *testing.T) {
	f := plainFixture(t)
	ctx := context.Background()
	js := f.jobSet(t)
	js.Status.Conditions = []metav1.Condition{{Type: string(jobsetv1alpha2.JobSetFailed), Status: metav1.ConditionTrue, Reason: "FailedJobs", Message: "jobset failed", LastTransitionTime: metav1.Now()}}
	if err := f.client.Update(ctx, js); err != nil {
		t.Fatal(err)
	}
	counted := finishCounts()
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if !isFinished(f.job(t, "job")) {
		t.Fatalf("the TrainJob did not finish: %v", summary(f.job(t, "job").Status.Conditions))
	}
	if err := f.client.Delete(ctx, f.jobSet(t)); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Get(ctx, jobKey, &jobsetv1alpha2.JobSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("the JobSet is still there (get: %v)", err)
	}
	if got := finishCounts() - counted; got != 1 {
		t.Errorf("completions and failures counted %v times, want once", got)
	}
}

// flakyStatus is a status plugin that fails, under failurePolicy Ignore.
type flakyStatus struct{ fail bool }

func (*flakyStatus) Describe() framework.Description {
	return framework.Description{Name: "FlakyStatus", MLPolicyKeys: []string{framework.NoPolicyKey}}
}

func (s *flakyStatus) Status(context.Context, *framework.Info, *trainer.TrainJob, []*unstructured.Unstructured) (*framework.StatusReport, error) {
	if s.fail {
		return nil, errBoom
	}
	return nil, nil
}

// A status plugin whose failure was skipped read nothing: a deleted
// workload waits for a reconcile in which every status plugin answered.
func TestADeletedJobSetWaitsForEveryStatusPlugin(t *testing.T) {
	rt := runtimeOf("plain", nil)
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "trainer"}}
	f := newFixtureWith(t, []framework.Plugin{plainml.New(), jobset.New()}, rt, trainJobOf("job", "plain"))
	flaky := &flakyStatus{fail: true}
	fw, err := frameworkruntime.New(context.Background(), framework.Registry{}, []frameworkruntime.PluginSpec{
		{Name: "PlainML", Plugin: plainml.New()}, {Name: "JobSet", Plugin: jobset.New()},
		{Name: "FlakyStatus", Plugin: flaky, FailurePolicy: frameworkruntime.FailurePolicyIgnore},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.r.Framework = fw
	ctx := context.Background()
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(ctx, f.jobSet(t)); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if js := f.jobSet(t); js.DeletionTimestamp.IsZero() {
		t.Fatal("the JobSet is not the deleted one")
	}
	flaky.fail = false
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Get(ctx, jobKey, &jobsetv1alpha2.JobSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("the JobSet is still there once every status plugin answered (get: %v)", err)
	}
}
