package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

func fakeReader(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, trainer.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// jobIn is a TrainJob of runtime (a ClusterTrainingRuntime unless kind
// says otherwise) whose conditions types are True.
func jobIn(name, runtime, kind string, types ...string) *trainer.TrainJob {
	job := trainJobOf(name, runtime)
	if kind != "" {
		job.Spec.RuntimeRef.Kind = ptr.To(kind)
	}
	for _, t := range types {
		job.Status.Conditions = append(job.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t})
	}
	return job
}

func TestTrainJobsByStateCountsEveryStateOfEachRuntime(t *testing.T) {
	reader := fakeReader(t,
		jobIn("new", "torch", ""),
		jobIn("built", "torch", "", trainer.TrainJobCreated),
		jobIn("running", "torch", "", trainer.TrainJobCreated, trainer.TrainJobRunning),
		jobIn("running-too", "torch", "", trainer.TrainJobCreated, trainer.TrainJobRunning),
		jobIn("done", "torch", "", trainer.TrainJobCreated, trainer.TrainJobComplete),
		jobIn("queued", "mine", trainer.TrainingRuntimeKind, trainer.TrainJobCreated, trainer.TrainJobSuspended),
		jobIn("broken", "mine", trainer.TrainingRuntimeKind, trainer.TrainJobCreated, trainer.TrainJobRunning, trainer.TrainJobFailed),
	)
	want := `
# HELP trainforge_trainjobs TrainJobs in each state, per runtime, as the controller's cache holds them.
# TYPE trainforge_trainjobs gauge
trainforge_trainjobs{runtime="mine",runtime_kind="TrainingRuntime",state="Complete"} 0
trainforge_trainjobs{runtime="mine",runtime_kind="TrainingRuntime",state="Created"} 0
trainforge_trainjobs{runtime="mine",runtime_kind="TrainingRuntime",state="Failed"} 1
trainforge_trainjobs{runtime="mine",runtime_kind="TrainingRuntime",state="Pending"} 0
trainforge_trainjobs{runtime="mine",runtime_kind="TrainingRuntime",state="Running"} 0
trainforge_trainjobs{runtime="mine",runtime_kind="TrainingRuntime",state="Suspended"} 1
trainforge_trainjobs{runtime="torch",runtime_kind="ClusterTrainingRuntime",state="Complete"} 1
trainforge_trainjobs{runtime="torch",runtime_kind="ClusterTrainingRuntime",state="Created"} 1
trainforge_trainjobs{runtime="torch",runtime_kind="ClusterTrainingRuntime",state="Failed"} 0
trainforge_trainjobs{runtime="torch",runtime_kind="ClusterTrainingRuntime",state="Pending"} 1
trainforge_trainjobs{runtime="torch",runtime_kind="ClusterTrainingRuntime",state="Running"} 2
trainforge_trainjobs{runtime="torch",runtime_kind="ClusterTrainingRuntime",state="Suspended"} 0
`
	c := &trainJobCollector{reader: reader}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c, "trainforge_trainjob_state"); n != 0 {
		t.Errorf("%d per-TrainJob series without perTrainJob, want none", n)
	}
}

func TestPerTrainJobStateOnlyWhenAskedFor(t *testing.T) {
	reader := fakeReader(t, jobIn("running", "torch", "", trainer.TrainJobCreated, trainer.TrainJobRunning), jobIn("new", "torch", ""))
	want := `
# HELP trainforge_trainjob_state 1 for the state each TrainJob is in; served only with the configuration's metrics.perTrainJob, as it has one series per TrainJob.
# TYPE trainforge_trainjob_state gauge
trainforge_trainjob_state{namespace="ns",runtime="torch",runtime_kind="ClusterTrainingRuntime",state="Pending",trainjob="new"} 1
trainforge_trainjob_state{namespace="ns",runtime="torch",runtime_kind="ClusterTrainingRuntime",state="Running",trainjob="running"} 1
`
	if err := testutil.CollectAndCompare(&trainJobCollector{reader: reader, perTrainJob: true}, strings.NewReader(want), "trainforge_trainjob_state"); err != nil {
		t.Error(err)
	}
}

// withCondition returns a copy of job with condition typ set to status at
// time at.
func withCondition(job *trainer.TrainJob, typ string, status metav1.ConditionStatus, reason string, at time.Time) *trainer.TrainJob {
	out := job.DeepCopy()
	c := metav1.Condition{Type: typ, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(at)}
	for i := range out.Status.Conditions {
		if out.Status.Conditions[i].Type == typ {
			out.Status.Conditions[i] = c
			return out
		}
	}
	out.Status.Conditions = append(out.Status.Conditions, c)
	return out
}

func resetLifecycleMetrics() {
	for _, v := range []interface{ Reset() }{creationToCreated, creationToRunning, runDuration, completions, failures, restarts} {
		v.Reset()
	}
}

func TestLifecycleDurationsAreObservedOncePerTrainJob(t *testing.T) {
	resetLifecycleMetrics()
	r := &TrainJobReconciler{}
	t0 := time.Now().Truncate(time.Second)
	job := trainJobOf("job", "torch")
	job.CreationTimestamp = metav1.NewTime(t0)

	created := withCondition(job, trainer.TrainJobCreated, metav1.ConditionTrue, trainer.TrainJobJobsCreatedReason, t0.Add(2*time.Second))
	r.observeLifecycle(job, created)
	running := withCondition(created, trainer.TrainJobRunning, metav1.ConditionTrue, trainer.TrainJobPodsRunningReason, t0.Add(60*time.Second))
	r.observeLifecycle(created, running)

	// A plugin fails and recovers, the job is suspended and resumed:
	// neither duration is observed again.
	failing := withCondition(running, trainer.TrainJobCreated, metav1.ConditionFalse, trainer.TrainJobBuildFailedReason, t0.Add(70*time.Second))
	r.observeLifecycle(running, failing)
	recovered := withCondition(failing, trainer.TrainJobCreated, metav1.ConditionTrue, trainer.TrainJobJobsCreatedReason, t0.Add(80*time.Second))
	r.observeLifecycle(failing, recovered)
	suspended := withCondition(recovered, trainer.TrainJobRunning, metav1.ConditionFalse, trainer.TrainJobSuspendedReason, t0.Add(90*time.Second))
	r.observeLifecycle(recovered, suspended)
	resumed := withCondition(suspended, trainer.TrainJobRunning, metav1.ConditionTrue, trainer.TrainJobPodsRunningReason, t0.Add(100*time.Second))
	r.observeLifecycle(suspended, resumed)

	// It fails 300s after it last started running.
	failed := withCondition(resumed, trainer.TrainJobFailed, metav1.ConditionTrue, "FailedJobs", t0.Add(400*time.Second))
	failed = withCondition(failed, trainer.TrainJobRunning, metav1.ConditionFalse, trainer.TrainJobFailedReason, t0.Add(400*time.Second))
	r.observeLifecycle(resumed, failed)

	want := `
# HELP trainforge_trainjob_creation_to_created_seconds Time from a TrainJob's creation to its objects being created (Created turned True), per runtime.
# TYPE trainforge_trainjob_creation_to_created_seconds histogram
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="0.5"} 0
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="1"} 0
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="2"} 1
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="5"} 1
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="10"} 1
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="30"} 1
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="60"} 1
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="120"} 1
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="300"} 1
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="600"} 1
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="1800"} 1
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="3600"} 1
trainforge_trainjob_creation_to_created_seconds_bucket{runtime="torch",runtime_kind="ClusterTrainingRuntime",le="+Inf"} 1
trainforge_trainjob_creation_to_created_seconds_sum{runtime="torch",runtime_kind="ClusterTrainingRuntime"} 2
trainforge_trainjob_creation_to_created_seconds_count{runtime="torch",runtime_kind="ClusterTrainingRuntime"} 1
`
	if err := testutil.CollectAndCompare(creationToCreated, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		h        prometheus.Collector
		name     string
		wantSum  float64
		wantSeen int
	}{
		{creationToRunning, "trainforge_trainjob_creation_to_running_seconds", 60, 1},
		{runDuration, "trainforge_trainjob_run_duration_seconds", 300, 1},
	} {
		if n := testutil.CollectAndCount(tc.h, tc.name); n != tc.wantSeen {
			t.Errorf("%s: %d series, want %d", tc.name, n, tc.wantSeen)
		}
		if got := histogramSum(t, tc.h); got != tc.wantSum {
			t.Errorf("%s: sum %v, want %v", tc.name, got, tc.wantSum)
		}
	}
	if got := testutil.ToFloat64(failures.WithLabelValues(trainer.ClusterTrainingRuntimeKind, "torch", "FailedJobs")); got != 1 {
		t.Errorf("failures{reason=FailedJobs} = %v, want 1", got)
	}
	if n := testutil.CollectAndCount(completions); n != 0 {
		t.Errorf("%d completion series, want none", n)
	}
}

// histogramSum returns the sum of the only histogram series of c.
func histogramSum(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || len(families[0].Metric) != 1 {
		t.Fatalf("gathering: %v, %d families", err, len(families))
	}
	return families[0].Metric[0].GetHistogram().GetSampleSum()
}

func TestCompletionsAndDeadlineFailuresAreCountedByReason(t *testing.T) {
	resetLifecycleMetrics()
	f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil))
	job := trainJobOf("late", "plain")
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
	job.CreationTimestamp = metav1.NewTime(f.clock.Now().Add(-time.Minute))
	if err := f.client.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t, "late"); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(failures.WithLabelValues(trainer.ClusterTrainingRuntimeKind, "plain", trainer.TrainJobDeadlineExceededReason)); got != 1 {
		t.Errorf("failures{reason=DeadlineExceeded} = %v, want 1", got)
	}
	if n := testutil.CollectAndCount(creationToCreated); n != 1 {
		t.Errorf("creation to Created: %d series, want 1", n)
	}
	// A finished TrainJob is not counted again by later reconciles.
	if err := f.reconcile(t, "late"); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(failures.WithLabelValues(trainer.ClusterTrainingRuntimeKind, "plain", trainer.TrainJobDeadlineExceededReason)); got != 1 {
		t.Errorf("failures{reason=DeadlineExceeded} = %v after a second reconcile, want 1", got)
	}
}

func TestRestartsAreCountedFromTheTrainJobsStatus(t *testing.T) {
	resetLifecycleMetrics()
	r := &TrainJobReconciler{}
	job := trainJobOf("job", "torch")
	withRestarts := func(from *trainer.TrainJob, count, counted int32) *trainer.TrainJob {
		out := from.DeepCopy()
		out.Status.Restarts = &trainer.RestartStatus{Count: count, CountedTowardsMax: counted, LastReason: "JobFailed"}
		return out
	}
	first := withRestarts(job, 1, 1)
	r.observeLifecycle(job, first) // the first restart, which spent the budget
	third := withRestarts(first, 3, 1)
	r.observeLifecycle(first, third) // two that did not (a node failure, a preemption)
	other := withCondition(third, trainer.TrainJobRunning, metav1.ConditionTrue, trainer.TrainJobPodsRunningReason, time.Now())
	r.observeLifecycle(third, other) // another status change: no restart
	// A status that a write replaced whole (a reset of the count by a
	// recreated workload) counts nothing.
	r.observeLifecycle(other, withRestarts(other, 0, 0))
	want := `
# HELP trainforge_trainjob_restarts_total Restarts of TrainJobs (the growth of status.restarts.count), per runtime, and whether they spent the restart budget (status.restarts.countedTowardsMax).
# TYPE trainforge_trainjob_restarts_total counter
trainforge_trainjob_restarts_total{counts_toward_max="false",runtime="torch",runtime_kind="ClusterTrainingRuntime"} 2
trainforge_trainjob_restarts_total{counts_toward_max="true",runtime="torch",runtime_kind="ClusterTrainingRuntime"} 1
`
	if err := testutil.CollectAndCompare(restarts, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
