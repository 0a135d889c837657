package jobset

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// restartRuntime has two replicatedJobs; templateExtra is appended to the
// JobSet spec, nodeJobExtra to the node Job's spec and policy to the
// runtime's spec.
func restartRuntime(policy, templateExtra, nodeJobExtra, podRestartPolicy string) string {
	return `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: torch
  namespace: default
spec:
` + policy + `
  mlPolicy:
    numNodes: 2
    torch: {}
  template:
    spec:
` + templateExtra + `
      replicatedJobs:
        - name: init
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: init
                      image: busybox
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
` + nodeJobExtra + `
              template:
                spec:
` + podRestartPolicy + `
                  containers:
                    - name: node
                      image: pytorch
`
}

const restartJob = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: train
  namespace: default
spec:
  runtimeRef:
    name: torch
    kind: TrainingRuntime
`

const fullPolicy = `
  restartPolicy:
    maxRestarts: 3
    restartStrategy: BlockingRecreate
    exitCodes:
      - action: Fail
        values: [3, 1]
      - action: Restart
        values: [134]
        containerName: node
      - action: Fail
        values: [42]
`

func buildJobSet(t *testing.T, runtime, job string) (*jobsetv1alpha2.JobSet, error) {
	t.Helper()
	spec, tj := load(t, "", runtime, job)
	info := newInfo(t, tj, spec, nil)
	return NewJobSet(info, tj)
}

func TestRestartPolicyTranslation(t *testing.T) {
	// The podFailurePolicy rules of the full policy, from index offset on.
	ours := `
      - action: FailJob
        onExitCodes: {operator: In, values: [1, 3]}
      - action: FailJob
        onExitCodes: {containerName: node, operator: In, values: [134]}
      - action: FailJob
        onExitCodes: {operator: In, values: [42]}
      - action: FailJob
        onPodConditions: [{type: DisruptionTarget, status: "True"}]`
	cases := []struct {
		name                       string
		runtime, job               string
		wantFailurePolicy          string
		wantInitPFP, wantNodePFP   string
		wantInitRestart, wantNodeR string
	}{{
		name:    "the full policy on a runtime without failure policies",
		runtime: restartRuntime(fullPolicy, "", "", ""),
		job:     restartJob,
		wantFailurePolicy: `
maxRestarts: 3
restartStrategy: BlockingRecreate
rules:
  - name: TrainforgeFailOnExitCode
    action: FailJobSet
    onJobFailureReasons: [PodFailurePolicy]
    onJobFailureMessagePatterns: ['matching FailJob rule at index (0|2)$']
  - name: TrainforgeRestartOnExitCode
    action: RestartJobSet
    onJobFailureReasons: [PodFailurePolicy]
    onJobFailureMessagePatterns: ['matching FailJob rule at index (1)$']
  - name: TrainforgeRestartOnPodDisruption
    action: RestartJobSetAndIgnoreMaxRestarts
    onJobFailureReasons: [PodFailurePolicy]
    onJobFailureMessagePatterns: ['matching FailJob rule at index (3)$']
`,
		wantInitPFP: "rules:" + ours, wantNodePFP: "rules:" + ours,
		wantInitRestart: "Never", wantNodeR: "Never",
	}, {
		name:    "the TrainJob overrides the budget and the exit codes; disruptions count",
		runtime: restartRuntime(fullPolicy, "", "", ""),
		job: restartJob + `
  restartPolicy:
    maxRestarts: 1
    onPodDisruption: Count
    exitCodes:
      - action: Restart
        values: [7]
`,
		wantFailurePolicy: `
maxRestarts: 1
restartStrategy: BlockingRecreate
rules:
  - name: TrainforgeRestartOnExitCode
    action: RestartJobSet
    onJobFailureReasons: [PodFailurePolicy]
    onJobFailureMessagePatterns: ['matching FailJob rule at index (0)$']
`,
		wantInitPFP: `
rules:
  - action: FailJob
    onExitCodes: {operator: In, values: [7]}`,
		wantNodePFP: `
rules:
  - action: FailJob
    onExitCodes: {operator: In, values: [7]}`,
		wantInitRestart: "Never", wantNodeR: "Never",
	}, {
		name: "only a budget: no podFailurePolicy, the pods' restartPolicy untouched",
		runtime: restartRuntime(`
  restartPolicy:
    maxRestarts: 2
    onPodDisruption: Count
`, "", "", "                  restartPolicy: OnFailure"),
		job:               restartJob,
		wantFailurePolicy: "maxRestarts: 2",
		wantNodeR:         "OnFailure",
	}, {
		name: "the template's own rules are kept: ours first in the JobSet, after the template's in each Job, targeted per group",
		runtime: restartRuntime(`
  restartPolicy:
    exitCodes:
      - action: Fail
        values: [3]
`, `
      failurePolicy:
        maxRestarts: 5
        rules:
          - name: own
            action: FailJobSet
            onJobFailureReasons: [DeadlineExceeded]
`, `
              podFailurePolicy:
                rules:
                  - action: Ignore
                    onExitCodes: {operator: In, values: [9]}
`, "                  restartPolicy: Never"),
		job: restartJob,
		wantFailurePolicy: `
maxRestarts: 5
rules:
  - name: TrainforgeFailOnExitCode_0
    action: FailJobSet
    onJobFailureReasons: [PodFailurePolicy]
    onJobFailureMessagePatterns: ['matching FailJob rule at index (0)$']
    targetReplicatedJobs: [init]
  - name: TrainforgeRestartOnPodDisruption_0
    action: RestartJobSetAndIgnoreMaxRestarts
    onJobFailureReasons: [PodFailurePolicy]
    onJobFailureMessagePatterns: ['matching FailJob rule at index (1)$']
    targetReplicatedJobs: [init]
  - name: TrainforgeFailOnExitCode_1
    action: FailJobSet
    onJobFailureReasons: [PodFailurePolicy]
    onJobFailureMessagePatterns: ['matching FailJob rule at index (1)$']
    targetReplicatedJobs: [node]
  - name: TrainforgeRestartOnPodDisruption_1
    action: RestartJobSetAndIgnoreMaxRestarts
    onJobFailureReasons: [PodFailurePolicy]
    onJobFailureMessagePatterns: ['matching FailJob rule at index (2)$']
    targetReplicatedJobs: [node]
  - name: own
    action: FailJobSet
    onJobFailureReasons: [DeadlineExceeded]
`,
		wantInitPFP: `
rules:
  - action: FailJob
    onExitCodes: {operator: In, values: [3]}
  - action: FailJob
    onPodConditions: [{type: DisruptionTarget, status: "True"}]`,
		wantNodePFP: `
rules:
  - action: Ignore
    onExitCodes: {operator: In, values: [9]}
  - action: FailJob
    onExitCodes: {operator: In, values: [3]}
  - action: FailJob
    onPodConditions: [{type: DisruptionTarget, status: "True"}]`,
		wantInitRestart: "Never", wantNodeR: "Never",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			js, err := buildJobSet(t, tc.runtime, tc.job)
			if err != nil {
				t.Fatalf("NewJobSet: %v", err)
			}
			if diff := cmp.Diff(jsonMap(t, tc.wantFailurePolicy), jsonMap(t, js.Spec.FailurePolicy)); diff != "" {
				t.Errorf("failurePolicy (-want +got):\n%s", diff)
			}
			for i, want := range []struct{ pfp, restart string }{{tc.wantInitPFP, tc.wantInitRestart}, {tc.wantNodePFP, tc.wantNodeR}} {
				job := js.Spec.ReplicatedJobs[i].Template.Spec
				if want.pfp == "" {
					if job.PodFailurePolicy != nil {
						t.Errorf("replicatedJob %d: podFailurePolicy %s, want none", i, mustJSON(t, job.PodFailurePolicy))
					}
				} else if diff := cmp.Diff(jsonMap(t, want.pfp), jsonMap(t, job.PodFailurePolicy)); diff != "" {
					t.Errorf("replicatedJob %d podFailurePolicy (-want +got):\n%s", i, diff)
				}
				if got := string(job.Template.Spec.RestartPolicy); got != want.restart {
					t.Errorf("replicatedJob %d: pod restartPolicy %q, want %q", i, got, want.restart)
				}
			}
		})
	}
}

func TestRestartPolicyConflicts(t *testing.T) {
	failOn3 := `
  restartPolicy:
    exitCodes:
      - action: Fail
        values: [3]
`
	cases := []struct {
		name         string
		runtime, job string
		// want are the field paths of the errors, each with a piece of its
		// message.
		want map[string]string
	}{{
		name: "budget set twice",
		runtime: restartRuntime("", `
      failurePolicy:
        maxRestarts: 5
`, "", ""),
		job: restartJob + `
  restartPolicy:
    maxRestarts: 2
`,
		want: map[string]string{"spec.restartPolicy.maxRestarts": "spec.template.spec.failurePolicy.maxRestarts (5)"},
	}, {
		name: "restart strategy set twice",
		runtime: restartRuntime(`
  restartPolicy:
    restartStrategy: BlockingRecreate
`, `
      failurePolicy:
        restartStrategy: Recreate
`, "", ""),
		job:  restartJob,
		want: map[string]string{"spec.restartPolicy.restartStrategy": "spec.template.spec.failurePolicy.restartStrategy (Recreate)"},
	}, {
		name:    "pods restarted in place",
		runtime: restartRuntime(failOn3, "", "", "                  restartPolicy: OnFailure"),
		job:     restartJob,
		want:    map[string]string{"spec.template.spec.replicatedJobs[1].template.spec.template.spec.restartPolicy": "spec.restartPolicy needs pods that are not restarted in place"},
	}, {
		name: "the template decides exit code 3 and disruptions too",
		runtime: restartRuntime(failOn3, "", `
              podFailurePolicy:
                rules:
                  - action: Ignore
                    onPodConditions: [{type: DisruptionTarget}]
                  - action: Count
                    onExitCodes: {operator: NotIn, values: [0]}
`, "                  restartPolicy: Never"),
		job: restartJob,
		want: map[string]string{
			"spec.template.spec.replicatedJobs[1].template.spec.podFailurePolicy.rules[0].onPodConditions": "conflicts with spec.restartPolicy.onPodDisruption",
			"spec.template.spec.replicatedJobs[1].template.spec.podFailurePolicy.rules[1].onExitCodes":     "conflicts with spec.restartPolicy.exitCodes[0], which decides exit code 3",
		},
	}, {
		name: "too many podFailurePolicy rules for a Job",
		runtime: restartRuntime(`
  restartPolicy:
    exitCodes:
      - {action: Fail, values: [1]}
      - {action: Fail, values: [2]}
      - {action: Fail, values: [3]}
      - {action: Fail, values: [4]}
      - {action: Fail, values: [5]}
      - {action: Fail, values: [6]}
      - {action: Fail, values: [7]}
      - {action: Fail, values: [8]}
      - {action: Fail, values: [9]}
      - {action: Fail, values: [10]}
      - {action: Fail, values: [11]}
      - {action: Fail, values: [12]}
      - {action: Fail, values: [13]}
      - {action: Fail, values: [14]}
      - {action: Fail, values: [15]}
      - {action: Fail, values: [16]}
`, "", `
              podFailurePolicy:
                rules:
                  - {action: Ignore, onExitCodes: {operator: In, values: [100]}}
                  - {action: Ignore, onExitCodes: {operator: In, values: [101]}}
                  - {action: Ignore, onExitCodes: {operator: In, values: [102]}}
                  - {action: Ignore, onExitCodes: {operator: In, values: [103]}}
`, "                  restartPolicy: Never"),
		job: restartJob,
		want: map[string]string{
			"spec.template.spec.replicatedJobs[1].template.spec.podFailurePolicy.rules": "the template's 4 rules and the 17 that spec.restartPolicy adds make 21",
		},
	}, {
		name: "an exit code in two rules, and out of range",
		runtime: restartRuntime(`
  restartPolicy:
    exitCodes:
      - action: Fail
        values: [3]
      - action: Restart
        values: [3, 0]
        containerName: node
`, "", "", ""),
		job: restartJob,
		want: map[string]string{
			"spec.restartPolicy.exitCodes[1].values[0]": "Duplicate value: 3",
			"spec.restartPolicy.exitCodes[1].values[1]": "from 1 to 255",
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, tj := load(t, "", tc.runtime, tc.job)
			info := newInfo(t, tj, spec, nil)
			_, errs, _ := New().(framework.Validator).Validate(context.Background(), framework.ValidateRequest{Info: info, NewJob: tj})
			got := map[string]string{}
			for _, e := range errs {
				got[e.Field] = e.Error()
			}
			if len(got) != len(tc.want) {
				t.Errorf("errors %v, want one per field of %v", errs, tc.want)
			}
			for f, piece := range tc.want {
				if !strings.Contains(got[f], piece) {
					t.Errorf("error on %s: %q, want it to contain %q (all: %v)", f, got[f], piece, errs)
				}
			}
			// Build refuses the same job, with the same errors.
			if _, err := NewJobSet(info, tj); err == nil || !strings.Contains(err.Error(), errs.ToAggregate().Error()) {
				t.Errorf("NewJobSet: %v, want the Validate errors", err)
			}
		})
	}
}

func TestValidateWithoutRestartPolicy(t *testing.T) {
	spec, tj := load(t, frameworktest.SeedPlainML, "", "")
	info := newInfo(t, tj, spec, nil)
	if _, errs, _ := New().(framework.Validator).Validate(context.Background(), framework.ValidateRequest{Info: info, NewJob: tj}); len(errs) != 0 {
		t.Errorf("Validate without a restart policy: %v", errs)
	}
}

func TestRestartStatus(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	restarting := func(reason string) []metav1.Condition {
		return []metav1.Condition{{Type: "RestartingJobSet", Status: metav1.ConditionTrue, Reason: reason,
			Message: "applying RestartJobSet failure policy action (first failed job: train-node-0)", LastTransitionTime: at}}
	}
	cases := []struct {
		name    string
		rules   []jobsetv1alpha2.FailurePolicyRule
		inPlace bool
		status  jobsetv1alpha2.JobSetStatus
		before  *trainer.RestartStatus
		want    *trainer.RestartStatus
	}{{
		name: "never restarted",
		want: nil,
	}, {
		name:   "a retryable exit code, seen while restarting",
		status: jobsetv1alpha2.JobSetStatus{Restarts: 1, RestartsCountTowardsMax: 1, Conditions: restarting("FailurePolicy_TrainforgeRestartOnExitCode")},
		want: &trainer.RestartStatus{Count: 1, CountedTowardsMax: 1, LastReason: "RetryableExitCode",
			LastMessage: "applying RestartJobSet failure policy action (first failed job: train-node-0)", LastTime: &at},
	}, {
		name:   "a disruption of a group, seen while restarting",
		status: jobsetv1alpha2.JobSetStatus{Restarts: 2, RestartsCountTowardsMax: 1, Conditions: restarting("FailurePolicy_TrainforgeRestartOnPodDisruption_1")},
		before: &trainer.RestartStatus{Count: 1, CountedTowardsMax: 1, LastReason: "RetryableExitCode"},
		want: &trainer.RestartStatus{Count: 2, CountedTowardsMax: 1, LastReason: "PodDisruption",
			LastMessage: "applying RestartJobSet failure policy action (first failed job: train-node-0)", LastTime: &at},
	}, {
		name:   "no rule matched",
		status: jobsetv1alpha2.JobSetStatus{Restarts: 1, RestartsCountTowardsMax: 1, Conditions: restarting("DefaultFailurePolicy")},
		want: &trainer.RestartStatus{Count: 1, CountedTowardsMax: 1, LastReason: "JobFailed",
			LastMessage: "applying RestartJobSet failure policy action (first failed job: train-node-0)", LastTime: &at},
	}, {
		name:   "a runtime's own rule",
		status: jobsetv1alpha2.JobSetStatus{Restarts: 1, Conditions: restarting("FailurePolicy_own")},
		want: &trainer.RestartStatus{Count: 1, LastReason: "FailurePolicy_own",
			LastMessage: "applying RestartJobSet failure policy action (first failed job: train-node-0)", LastTime: &at},
	}, {
		name:   "over before it was seen, not counted, no disruption rule",
		status: jobsetv1alpha2.JobSetStatus{Restarts: 2, RestartsCountTowardsMax: 1},
		before: &trainer.RestartStatus{Count: 1, CountedTowardsMax: 1, LastReason: "RetryableExitCode"},
		want:   &trainer.RestartStatus{Count: 2, CountedTowardsMax: 1, LastReason: "UncountedRestart"},
	}, {
		name:   "over before it was seen, not counted, with the disruption rule",
		rules:  []jobsetv1alpha2.FailurePolicyRule{{Name: "TrainforgeRestartOnPodDisruption"}},
		status: jobsetv1alpha2.JobSetStatus{Restarts: 2, RestartsCountTowardsMax: 1},
		before: &trainer.RestartStatus{Count: 1, CountedTowardsMax: 1, LastReason: "RetryableExitCode"},
		want:   &trainer.RestartStatus{Count: 2, CountedTowardsMax: 1, LastReason: "PodDisruption"},
	}, {
		name:   "over before it was seen, counted",
		status: jobsetv1alpha2.JobSetStatus{Restarts: 1, RestartsCountTowardsMax: 1},
		want:   &trainer.RestartStatus{Count: 1, CountedTowardsMax: 1, LastReason: "JobFailed"},
	}, {
		name:    "a restart in place: the attempt every pod's agent is at",
		inPlace: true,
		status:  jobsetv1alpha2.JobSetStatus{CurrentInPlaceRestartAttempt: ptr.To[int32](1)},
		want:    &trainer.RestartStatus{Count: 1, CountedTowardsMax: 1, LastReason: "RestartedInPlace"},
	}, {
		name:    "the first attempt of a JobSet that restarts in place is no restart",
		inPlace: true,
		status:  jobsetv1alpha2.JobSetStatus{CurrentInPlaceRestartAttempt: ptr.To[int32](0)},
		want:    nil,
	}, {
		name:    "a restart in place after a recreation",
		inPlace: true,
		status:  jobsetv1alpha2.JobSetStatus{Restarts: 1, RestartsCountTowardsMax: 1, CurrentInPlaceRestartAttempt: ptr.To[int32](2)},
		before:  &trainer.RestartStatus{Count: 2, CountedTowardsMax: 2, LastReason: "RestartedInPlace"},
		want:    &trainer.RestartStatus{Count: 3, CountedTowardsMax: 3, LastReason: "RestartedInPlace"},
	}, {
		name:   "an attempt of a JobSet that does not restart in place is no restart",
		status: jobsetv1alpha2.JobSetStatus{CurrentInPlaceRestartAttempt: ptr.To[int32](1)},
		want:   nil,
	}, {
		name:   "no new restart keeps what was said",
		status: jobsetv1alpha2.JobSetStatus{Restarts: 1, RestartsCountTowardsMax: 1, Conditions: restarting("DefaultFailurePolicy")},
		before: &trainer.RestartStatus{Count: 1, CountedTowardsMax: 1, LastReason: "RetryableExitCode"},
		want:   &trainer.RestartStatus{Count: 1, CountedTowardsMax: 1, LastReason: "RetryableExitCode"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			js := &jobsetv1alpha2.JobSet{Status: tc.status}
			if tc.rules != nil || tc.inPlace {
				js.Spec.FailurePolicy = &jobsetv1alpha2.FailurePolicy{Rules: tc.rules}
			}
			if tc.inPlace {
				js.Spec.FailurePolicy.RestartStrategy = jobsetv1alpha2.InPlaceRestart
			}
			got := restartStatus(js, tc.before)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("restartStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusReportsRestartsAndPolicyFailures(t *testing.T) {
	js, err := buildJobSet(t, restartRuntime(fullPolicy, "", "", ""), restartJob)
	if err != nil {
		t.Fatal(err)
	}
	job := frameworktest.TrainJob(t, restartJob)
	status := func(st jobsetv1alpha2.JobSetStatus) *framework.StatusReport {
		t.Helper()
		js := js.DeepCopy()
		js.Status = st
		u, err := framework.ToUnstructured(js, GVK)
		if err != nil {
			t.Fatal(err)
		}
		out, err := New().(framework.StatusReporter).Status(context.Background(), nil, job, []*unstructured.Unstructured{u})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	failed := func(reason, message string) jobsetv1alpha2.JobSetStatus {
		return jobsetv1alpha2.JobSetStatus{Restarts: 3, RestartsCountTowardsMax: 3, Conditions: []metav1.Condition{{
			Type: "Failed", Status: metav1.ConditionTrue, Reason: reason, Message: message}}}
	}

	st := status(failed("FailJobSetFailurePolicyAction", "applying FailJobSet failure policy action (first failed job: train-node-0)"))
	c := findCondition(st, trainer.TrainJobFailed)
	if c.Reason != "NonRetryableExitCode" || !strings.Contains(c.Message, "spec.restartPolicy.exitCodes") || !strings.Contains(c.Message, "first failed job: train-node-0") {
		t.Errorf("Failed by an exit code of a Fail rule: %s: %s", c.Reason, c.Message)
	}
	if diff := cmp.Diff(&trainer.RestartStatus{Count: 3, CountedTowardsMax: 3, LastReason: "JobFailed"}, st.Restarts); diff != "" {
		t.Errorf("restarts (-want +got):\n%s", diff)
	}

	c = findCondition(status(failed("ReachedMaxRestarts", "jobset failed due to reaching max number of restarts (first failed job: train-node-0)")), trainer.TrainJobFailed)
	if c.Reason != "ReachedMaxRestarts" || !strings.Contains(c.Message, "after 3 restarts that count (maxRestarts 3)") {
		t.Errorf("Failed past the budget: %s: %s", c.Reason, c.Message)
	}
}

func findCondition(st *framework.StatusReport, typ string) metav1.Condition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}
