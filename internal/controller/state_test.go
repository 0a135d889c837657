package controller

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin/jobset"
	"github.com/trainforge/trainforge/builtin/plainml"
	"github.com/trainforge/trainforge/framework"
)

func cond(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason}
}

// summary is "Type=Status(Reason)" for each condition, in order.
func summary(conds []metav1.Condition) []string {
	out := make([]string, 0, len(conds))
	for _, c := range conds {
		out = append(out, c.Type+"="+string(c.Status)+"("+c.Reason+")")
	}
	return out
}

func TestSettleState(t *testing.T) {
	const (
		yes = metav1.ConditionTrue
		no  = metav1.ConditionFalse
	)
	created := cond(trainer.TrainJobCreated, yes, trainer.TrainJobJobsCreatedReason)
	cases := []struct {
		name string
		in   []metav1.Condition
		want []string
	}{
		{
			name: "pods pending: Created says the state",
			in:   []metav1.Condition{created, cond(trainer.TrainJobRunning, no, trainer.TrainJobPodsPendingReason)},
			want: []string{"Running=False(PodsPending)", "Created=True(JobsCreated)"},
		},
		{
			name: "running",
			in:   []metav1.Condition{cond(trainer.TrainJobRunning, yes, trainer.TrainJobPodsRunningReason), created},
			want: []string{"Created=True(JobsCreated)", "Running=True(PodsRunning)"},
		},
		{
			name: "resumed, pods not back yet: Created, not the Suspended=False that came last",
			in: []metav1.Condition{
				created,
				cond(trainer.TrainJobRunning, no, trainer.TrainJobPodsPendingReason),
				cond(trainer.TrainJobSuspended, no, trainer.TrainJobResumedReason),
			},
			want: []string{"Running=False(PodsPending)", "Suspended=False(Resumed)", "Created=True(JobsCreated)"},
		},
		{
			name: "suspended while its pods still show as running: Suspended wins, Running turns False",
			in: []metav1.Condition{
				created,
				cond(trainer.TrainJobSuspended, yes, trainer.TrainJobSuspendedReason),
				cond(trainer.TrainJobRunning, yes, trainer.TrainJobPodsRunningReason),
			},
			want: []string{"Created=True(JobsCreated)", "Running=False(Suspended)", "Suspended=True(Suspended)"},
		},
		{
			name: "failed past its deadline while running: Running turns False in the same write",
			in: []metav1.Condition{
				created,
				cond(trainer.TrainJobRunning, yes, trainer.TrainJobPodsRunningReason),
				cond(trainer.TrainJobSuspended, yes, trainer.TrainJobSuspendedReason),
				cond(trainer.TrainJobFailed, yes, trainer.TrainJobDeadlineExceededReason),
			},
			want: []string{"Created=True(JobsCreated)", "Running=False(Failed)", "Suspended=True(Suspended)", "Failed=True(DeadlineExceeded)"},
		},
		{
			name: "complete",
			in: []metav1.Condition{
				cond(trainer.TrainJobComplete, yes, "AllJobsCompleted"),
				created,
				cond(trainer.TrainJobRunning, yes, trainer.TrainJobPodsRunningReason),
			},
			want: []string{"Created=True(JobsCreated)", "Running=False(Completed)", "Complete=True(AllJobsCompleted)"},
		},
		{
			name: "the runtime is missing: Created=False is the state",
			in:   []metav1.Condition{cond(trainer.TrainJobCreated, no, trainer.TrainJobRuntimeNotFoundReason)},
			want: []string{"Created=False(RuntimeNotFound)"},
		},
		{
			name: "no condition yet",
			want: []string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := &trainer.TrainJob{Status: trainer.TrainJobStatus{Conditions: tc.in}}
			settleState(job)
			if diff := cmp.Diff(tc.want, summary(job.Status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

// The State column (the last condition's type) follows a TrainJob through
// its life, as the real JobSet plugin reports it from its JobSet.
func TestStateFollowsTheJobSet(t *testing.T) {
	rt := runtimeOf("plain", nil)
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "trainer"}}
	f := newFixtureWith(t, []framework.Plugin{plainml.New(), jobset.New()}, rt, trainJobOf("job", "plain"))
	ctx := context.Background()
	setJobSet := func(status jobsetv1alpha2.JobSetStatus) {
		t.Helper()
		js := &jobsetv1alpha2.JobSet{}
		if err := f.client.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "job"}, js); err != nil {
			t.Fatal(err)
		}
		js.Status = status
		if err := f.client.Update(ctx, js); err != nil {
			t.Fatal(err)
		}
	}
	setSuspend := func(suspend bool) {
		t.Helper()
		job := f.job(t, "job")
		job.Spec.Suspend = ptr.To(suspend)
		if err := f.client.Update(ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	nodes := func(ready, succeeded, active int32) []jobsetv1alpha2.ReplicatedJobStatus {
		return []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Ready: ready, Succeeded: succeeded, Active: active}}
	}
	steps := []struct {
		name   string
		change func()
		state  string
		reason string // of Running
	}{
		{"created, pods pending", func() {}, trainer.TrainJobCreated, trainer.TrainJobPodsPendingReason},
		{"pods ready", func() { setJobSet(jobsetv1alpha2.JobSetStatus{ReplicatedJobsStatus: nodes(1, 0, 1)}) },
			trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason},
		{"suspended", func() { setSuspend(true) }, trainer.TrainJobSuspended, trainer.TrainJobSuspendedReason},
		{"resumed, pods not back yet", func() {
			setJobSet(jobsetv1alpha2.JobSetStatus{ReplicatedJobsStatus: nodes(0, 0, 1)})
			setSuspend(false)
		}, trainer.TrainJobCreated, trainer.TrainJobPodsPendingReason},
		{"running again", func() { setJobSet(jobsetv1alpha2.JobSetStatus{ReplicatedJobsStatus: nodes(1, 0, 1)}) },
			trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason},
		{"complete", func() {
			setJobSet(jobsetv1alpha2.JobSetStatus{
				Conditions: []metav1.Condition{{
					Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue, Reason: "AllJobsCompleted",
					Message: "jobset completed successfully", LastTransitionTime: metav1.Now(),
				}},
				ReplicatedJobsStatus: nodes(0, 1, 0),
			})
		}, trainer.TrainJobComplete, trainer.TrainJobCompletedReason},
	}
	for _, s := range steps {
		s.change()
		if err := f.reconcile(t, "job"); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		conds := f.job(t, "job").Status.Conditions
		if got := conds[len(conds)-1].Type; got != s.state {
			t.Errorf("%s: State column reads %s, want %s; conditions %v", s.name, got, s.state, summary(conds))
		}
		for _, c := range conds {
			if c.Type == trainer.TrainJobRunning && c.Reason != s.reason {
				t.Errorf("%s: Running reason %s, want %s", s.name, c.Reason, s.reason)
			}
		}
	}
	job := f.job(t, "job")
	if diff := cmp.Diff([]trainer.JobStatus{{Name: "node", Ready: ptr.To[int32](0), Succeeded: ptr.To[int32](1),
		Failed: ptr.To[int32](0), Active: ptr.To[int32](0), Suspended: ptr.To[int32](0)}}, job.Status.JobsStatus); diff != "" {
		t.Errorf("jobsStatus (-want +got):\n%s", diff)
	}
}

func TestCreatedNamesTheObjectsAndThePlugins(t *testing.T) {
	f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	const want = "Created JobSet job; plugins: FakeBuilder"
	for _, c := range f.job(t, "job").Status.Conditions {
		if c.Type == trainer.TrainJobCreated && c.Message != want {
			t.Errorf("Created message %q, want %q", c.Message, want)
		}
	}
}

// A JobSet deletes the Jobs still active when it finishes (an MPI job's
// workers): the finished TrainJob's jobsStatus follows, its conditions
// stay.
func TestFinishedJobsStatusFollowsTheJobSet(t *testing.T) {
	rt := runtimeOf("plain", nil)
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "trainer"}}
	f := newFixtureWith(t, []framework.Plugin{plainml.New(), jobset.New()}, rt, trainJobOf("job", "plain"))
	ctx := context.Background()
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	setStatus := func(active int32) {
		t.Helper()
		js := &jobsetv1alpha2.JobSet{}
		if err := f.client.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "job"}, js); err != nil {
			t.Fatal(err)
		}
		js.Status = jobsetv1alpha2.JobSetStatus{
			Conditions: []metav1.Condition{{
				Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue, Reason: "AllJobsCompleted",
				Message: "jobset completed successfully", LastTransitionTime: metav1.Now(),
			}},
			ReplicatedJobsStatus: []jobsetv1alpha2.ReplicatedJobStatus{
				{Name: "node", Active: active},
				{Name: "launcher", Succeeded: 1},
			},
		}
		if err := f.client.Update(ctx, js); err != nil {
			t.Fatal(err)
		}
	}
	setStatus(1)
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	finished := f.job(t, "job").Status.Conditions

	setStatus(0) // the workers' Job deleted
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	job := f.job(t, "job")
	if got := *job.Status.JobsStatus[0].Active; got != 0 {
		t.Errorf("jobsStatus node active = %d after its Job was deleted, want 0", got)
	}
	if diff := cmp.Diff(finished, job.Status.Conditions); diff != "" {
		t.Errorf("a finished TrainJob's conditions changed (-before +after):\n%s", diff)
	}
}

// Only a job that starts running gets an Event for it; one whose objects
// were created at the first try gets none for that.
func TestRunningEventsOnlyWhenPodsRun(t *testing.T) {
	rt := runtimeOf("plain", nil)
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "trainer"}}
	f := newFixtureWith(t, []framework.Plugin{plainml.New(), jobset.New()}, rt, trainJobOf("job", "plain"))
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	// Created=True at the first try records no Event: the condition says it.
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("events of a created job = %q, want none", ev)
	}
	js := &jobsetv1alpha2.JobSet{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, js); err != nil {
		t.Fatal(err)
	}
	js.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Ready: 1, Active: 1}}
	if err := f.client.Update(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Normal PodsRunning") {
		t.Errorf("events of a job whose pods run = %q, want PodsRunning", ev)
	}
}
