package jobset

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// obj decodes an object as the API server returns it.
func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	return u
}

func jobsStatus(name string, ready, succeeded, failed, active, suspended int32) trainer.JobStatus {
	return trainer.JobStatus{
		Name:      name,
		Ready:     ptr.To(ready),
		Succeeded: ptr.To(succeeded),
		Failed:    ptr.To(failed),
		Active:    ptr.To(active),
		Suspended: ptr.To(suspended),
	}
}

// runningCond is the Running condition Status reports.
func runningCond(status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: trainer.TrainJobRunning, Status: status, ObservedGeneration: 3, Reason: reason, Message: message}
}

var (
	runningTrue = runningCond(metav1.ConditionTrue, trainer.TrainJobPodsRunningReason, "The TrainJob's pods are running")
	pending     = runningCond(metav1.ConditionFalse, trainer.TrainJobPodsPendingReason, "No Job of the TrainJob has all its pods running yet")
	suspended   = runningCond(metav1.ConditionFalse, trainer.TrainJobSuspendedReason, "The TrainJob is suspended")
	completed   = runningCond(metav1.ConditionFalse, trainer.TrainJobCompletedReason, "The TrainJob has completed")
	failed      = runningCond(metav1.ConditionFalse, trainer.TrainJobFailedReason, "The TrainJob has failed")
)

func TestStatus(t *testing.T) {
	transition := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "llm", Namespace: "team-a", Generation: 3}}

	const podGroup = `
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: llm
  namespace: team-a
status:
  phase: Running
`
	const running = `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
spec:
  replicatedJobs: []
status:
  conditions:
  - type: StartupPolicyInProgress
    status: "True"
    reason: InOrderStartupPolicyInProgress
    message: in order startup policy is in progress
    lastTransitionTime: "2026-01-02T03:00:00Z"
  - type: Suspended
    status: "False"
    reason: ResumeJobs
    message: jobset is resumed
    lastTransitionTime: "2026-01-02T03:00:00Z"
  - type: Completed
    status: "False"
    reason: NotYet
    message: not yet
    lastTransitionTime: "2026-01-02T03:00:00Z"
  - type: Failed
    status: "False"
    reason: NotYet
    message: not yet
    lastTransitionTime: "2026-01-02T03:00:00Z"
  replicatedJobsStatus:
  - name: dataset-initializer
    ready: 0
    succeeded: 1
    failed: 0
    active: 0
    suspended: 0
  - name: model-initializer
    ready: 1
    succeeded: 0
    failed: 0
    active: 1
    suspended: 0
  - name: node
    ready: 0
    succeeded: 0
    failed: 0
    active: 0
    suspended: 1
`

	cases := []struct {
		name  string
		owned []string
		want  *framework.StatusReport
	}{
		{
			name:  "no JobSet yet",
			owned: nil,
		},
		{
			name: "only other kinds, or JobSets of other TrainJobs",
			owned: []string{podGroup, `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: other
  namespace: team-a
status:
  conditions:
  - type: Completed
    status: "True"
    reason: AllJobsCompleted
    message: jobset completed successfully
    lastTransitionTime: "2026-01-02T03:04:05Z"
`, `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-b
status:
  conditions:
  - type: Failed
    status: "True"
    reason: FailedJobs
    message: failed
    lastTransitionTime: "2026-01-02T03:04:05Z"
`},
		},
		{
			name: "just created, suspended: not running",
			owned: []string{`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
spec:
  suspend: true
`},
			want: &framework.StatusReport{Conditions: []metav1.Condition{suspended}},
		},
		{
			name: "just created, resumed: pods pending",
			owned: []string{`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
spec:
  suspend: false
`},
			want: &framework.StatusReport{Conditions: []metav1.Condition{pending}},
		},
		{
			name: "a gang waiting to be scheduled: its Job is active, none ready",
			owned: []string{`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
status:
  replicatedJobsStatus:
  - name: node
    ready: 0
    succeeded: 0
    failed: 0
    active: 1
    suspended: 0
`},
			want: &framework.StatusReport{
				Conditions: []metav1.Condition{pending},
				JobsStatus: []trainer.JobStatus{jobsStatus("node", 0, 0, 0, 1, 0)},
			},
		},
		{
			name: "suspended by its Suspended condition while spec.suspend is not yet seen",
			owned: []string{`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
status:
  conditions:
  - type: Suspended
    status: "True"
    reason: SuspendedJobs
    message: jobset is suspended
    lastTransitionTime: "2026-01-02T03:00:00Z"
  replicatedJobsStatus:
  - name: node
    ready: 1
    succeeded: 0
    failed: 0
    active: 1
    suspended: 1
`},
			want: &framework.StatusReport{
				Conditions: []metav1.Condition{suspended},
				JobsStatus: []trainer.JobStatus{jobsStatus("node", 1, 0, 0, 1, 1)},
			},
		},
		{
			name: "an initializer succeeded while the trainer starts: still running",
			owned: []string{`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
status:
  replicatedJobsStatus:
  - name: dataset-initializer
    ready: 0
    succeeded: 1
    failed: 0
    active: 0
    suspended: 0
  - name: node
    ready: 0
    succeeded: 0
    failed: 0
    active: 1
    suspended: 0
`},
			want: &framework.StatusReport{
				Conditions: []metav1.Condition{runningTrue},
				JobsStatus: []trainer.JobStatus{
					jobsStatus("dataset-initializer", 0, 1, 0, 0, 0),
					jobsStatus("node", 0, 0, 0, 1, 0),
				},
			},
		},
		{
			name:  "running: false JobSet conditions ignored",
			owned: []string{podGroup, running},
			want: &framework.StatusReport{
				Conditions: []metav1.Condition{runningTrue},
				JobsStatus: []trainer.JobStatus{
					jobsStatus("dataset-initializer", 0, 1, 0, 0, 0),
					jobsStatus("model-initializer", 1, 0, 0, 1, 0),
					jobsStatus("node", 0, 0, 0, 0, 1),
				},
			},
		},
		{
			name: "completed",
			owned: []string{podGroup, `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
status:
  terminalState: Completed
  conditions:
  - type: StartupPolicyCompleted
    status: "True"
    reason: InOrderStartupPolicyCompleted
    message: in order startup policy has completed
    lastTransitionTime: "2026-01-02T03:00:00Z"
  - type: Completed
    status: "True"
    reason: AllJobsCompleted
    message: jobset completed successfully
    lastTransitionTime: "2026-01-02T03:04:05Z"
  replicatedJobsStatus:
  - name: node
    ready: 0
    succeeded: 2
    failed: 0
    active: 0
    suspended: 0
`},
			want: &framework.StatusReport{
				Conditions: []metav1.Condition{{
					Type:               trainer.TrainJobComplete,
					Status:             metav1.ConditionTrue,
					ObservedGeneration: 3,
					LastTransitionTime: transition,
					Reason:             "AllJobsCompleted",
					Message:            "jobset completed successfully",
				}, completed},
				JobsStatus: []trainer.JobStatus{jobsStatus("node", 0, 2, 0, 0, 0)},
			},
		},
		{
			name: "completed without a reason",
			owned: []string{`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
status:
  conditions:
  - type: Completed
    status: "True"
    reason: ""
    message: ""
    lastTransitionTime: "2026-01-02T03:04:05Z"
`},
			want: &framework.StatusReport{
				Conditions: []metav1.Condition{{
					Type:               trainer.TrainJobComplete,
					Status:             metav1.ConditionTrue,
					ObservedGeneration: 3,
					LastTransitionTime: transition,
					Reason:             "JobSetCompleted",
				}, completed},
			},
		},
		{
			name: "failed",
			owned: []string{`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
status:
  terminalState: Failed
  restarts: 3
  conditions:
  - type: Failed
    status: "True"
    reason: FailedJobs
    message: 'jobset failed due to one or more job failures'
    lastTransitionTime: "2026-01-02T03:04:05Z"
  replicatedJobsStatus:
  - name: node
    ready: 0
    succeeded: 1
    failed: 1
    active: 0
    suspended: 0
`},
			want: &framework.StatusReport{
				Conditions: []metav1.Condition{{
					Type:               trainer.TrainJobFailed,
					Status:             metav1.ConditionTrue,
					ObservedGeneration: 3,
					LastTransitionTime: transition,
					Reason:             "FailedJobs",
					Message:            "jobset failed due to one or more job failures",
				}, failed},
				JobsStatus: []trainer.JobStatus{jobsStatus("node", 0, 1, 1, 0, 0)},
				// restarts 3 that did not count, by no rule of a restart
				// policy: the reason is not known.
				Restarts: &trainer.RestartStatus{Count: 3, LastReason: trainer.RestartUncountedReason},
			},
		},
		{
			name: "failed without a reason",
			owned: []string{`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
status:
  conditions:
  - type: Failed
    status: "True"
    reason: ""
    message: boom
    lastTransitionTime: "2026-01-02T03:04:05Z"
`},
			want: &framework.StatusReport{
				Conditions: []metav1.Condition{{
					Type:               trainer.TrainJobFailed,
					Status:             metav1.ConditionTrue,
					ObservedGeneration: 3,
					LastTransitionTime: transition,
					Reason:             "JobSetFailed",
					Message:            "boom",
				}, failed},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var owned []*unstructured.Unstructured
			for _, d := range tc.owned {
				owned = append(owned, obj(t, d))
			}
			got, err := New().(framework.StatusReporter).Status(context.Background(), nil, job, owned)
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusUndecodableJobSet(t *testing.T) {
	job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "llm", Namespace: "team-a"}}
	bad := obj(t, `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
status:
  replicatedJobsStatus: "not a list"
`)
	if _, err := New().(framework.StatusReporter).Status(context.Background(), nil, job, []*unstructured.Unstructured{bad}); err == nil {
		t.Fatal("Status accepted an undecodable JobSet")
	}
}

// Build's output, read back by Status as if the API server had returned it,
// names the same JobSet.
func TestStatusFindsBuiltJobSet(t *testing.T) {
	spec, job := load(t, "", stepsRuntime, llmJob)
	info := newInfo(t, job, spec, nil)
	objs, err := New().(framework.Builder).Build(context.Background(), info, job)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	got, err := New().(framework.StatusReporter).Status(context.Background(), nil, job, framework.UnstructuredOf(objs))
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	want := &framework.StatusReport{Conditions: []metav1.Condition{pending}}
	want.Conditions[0].ObservedGeneration = job.Generation
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}
