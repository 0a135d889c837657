package v1alpha1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RestartPolicy says when a TrainJob restarts (all its Jobs and pods are
// recreated) and when it fails. It is Trainforge's, not Kubeflow
// Trainer's: a runtime's spec.restartPolicy, overridden field by field by
// a TrainJob's spec.restartPolicy. The JobSet plugin writes it into the
// JobSet's failurePolicy and the Jobs' podFailurePolicy.
type RestartPolicy struct {
	// maxRestarts is the job's restart budget: how many restarts that count
	// it may make before the next failure fails it (with reason
	// ReachedMaxRestarts). Restarts for a pod disruption do not count (see
	// onPodDisruption). Unset keeps the runtime template's
	// failurePolicy.maxRestarts (0 when it has none).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`

	// onPodDisruption is what a pod lost to its node (a node failure or
	// drain), a preemption or an eviction does — a pod that fails with the
	// DisruptionTarget condition. RestartWithoutCounting (the default)
	// restarts the job without spending maxRestarts; Count treats it as any
	// other failure.
	// +kubebuilder:validation:Enum=RestartWithoutCounting;Count
	// +optional
	OnPodDisruption *PodDisruptionAction `json:"onPodDisruption,omitempty"`

	// exitCodes says what some exit codes of a container mean: Fail (a bug:
	// the job fails at once, whatever its budget) or Restart (a known
	// transient error, such as an NCCL timeout: the job restarts at once,
	// spending one restart of its budget). An exit code may appear in one
	// rule only. Other exit codes are left to the Job's backoffLimit, then
	// restart the job within its budget.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ExitCodes []ExitCodeRule `json:"exitCodes,omitempty"`

	// restartStrategy is how the job's Jobs are recreated on a restart:
	// Recreate (the default: each Job as soon as its old pods are gone) or
	// BlockingRecreate (no new Job until every old pod is gone). Unset keeps
	// the runtime template's failurePolicy.restartStrategy.
	// +kubebuilder:validation:Enum=Recreate;BlockingRecreate
	// +optional
	RestartStrategy *RestartStrategy `json:"restartStrategy,omitempty"`
}

// PodDisruptionAction is what a pod disruption does to a TrainJob.
type PodDisruptionAction string

const (
	// RestartWithoutCounting restarts the job without spending its budget.
	RestartWithoutCounting PodDisruptionAction = "RestartWithoutCounting"
	// CountDisruption treats a disruption as any other pod failure.
	CountDisruption PodDisruptionAction = "Count"
)

// RestartStrategy is JobSet's restart strategy, limited to those that need
// no feature gate or agent in the pods.
type RestartStrategy string

const (
	// RecreateStrategy recreates each Job as soon as its old pods are gone.
	RecreateStrategy RestartStrategy = "Recreate"
	// BlockingRecreateStrategy creates no new Job until every old pod is gone.
	BlockingRecreateStrategy RestartStrategy = "BlockingRecreate"
)

// ExitCodeRule gives exit codes of a container an action.
type ExitCodeRule struct {
	// action is Fail (the job fails at once) or Restart (the job restarts,
	// spending one restart of its budget).
	// +kubebuilder:validation:Enum=Fail;Restart
	Action ExitCodeAction `json:"action"`

	// values are the exit codes, from 1 to 255.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=255
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=255
	Values []int32 `json:"values"`

	// containerName restricts the rule to the exit codes of the container
	// of this name; unset, any container of the job's pods.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ContainerName *string `json:"containerName,omitempty"`
}

// ExitCodeAction is what an exit code does to a TrainJob.
type ExitCodeAction string

const (
	// FailOnExitCode fails the job at once.
	FailOnExitCode ExitCodeAction = "Fail"
	// RestartOnExitCode restarts the job, spending one restart.
	RestartOnExitCode ExitCodeAction = "Restart"
)

// WithOverride returns the policy that runs a TrainJob: p (the runtime's)
// with each field that o (the TrainJob's) sets replaced by o's. exitCodes
// is replaced whole. Either may be nil; the result is nil when both are,
// and never aliases either.
func (p *RestartPolicy) WithOverride(o *RestartPolicy) *RestartPolicy {
	if p == nil && o == nil {
		return nil
	}
	out := &RestartPolicy{}
	if p != nil {
		out = p.DeepCopy()
	}
	if o == nil {
		return out
	}
	o = o.DeepCopy()
	if o.MaxRestarts != nil {
		out.MaxRestarts = o.MaxRestarts
	}
	if o.OnPodDisruption != nil {
		out.OnPodDisruption = o.OnPodDisruption
	}
	if o.ExitCodes != nil {
		out.ExitCodes = o.ExitCodes
	}
	if o.RestartStrategy != nil {
		out.RestartStrategy = o.RestartStrategy
	}
	return out
}

// RestartsDisruptionsFree reports whether a pod disruption restarts the job
// without spending its budget (the default).
func (p *RestartPolicy) RestartsDisruptionsFree() bool {
	return p.OnPodDisruption == nil || *p.OnPodDisruption == RestartWithoutCounting
}

// CodesOf returns the exit codes of the rules with action a, sorted, each
// once.
func (p *RestartPolicy) CodesOf(a ExitCodeAction) []int32 {
	var out []int32
	for _, r := range p.ExitCodes {
		if r.Action == a {
			out = append(out, r.Values...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// RestartStatus is what a TrainJob's restarts have been so far.
type RestartStatus struct {
	// count is how many times the job has restarted, for any reason.
	Count int32 `json:"count"`

	// countedTowardsMax is how many of them spent the budget
	// (spec.restartPolicy.maxRestarts); restarts for a pod disruption do
	// not.
	// +optional
	CountedTowardsMax int32 `json:"countedTowardsMax,omitempty"`

	// lastReason is why the job last restarted: PodDisruption,
	// RetryableExitCode, JobFailed, or the JobSet's reason for a restart
	// that a runtime's own failurePolicy rule made.
	// +kubebuilder:validation:MaxLength=316
	// +optional
	LastReason string `json:"lastReason,omitempty"`

	// lastMessage says more of the last restart, in the JobSet's words
	// (which name the first Job that failed).
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	LastMessage string `json:"lastMessage,omitempty"`

	// lastTime is when the last restart was seen.
	// +optional
	LastTime *metav1.Time `json:"lastTime,omitempty"`
}

// Reasons of a restart, in status.restarts.lastReason and the Restarted
// Event.
const (
	// RestartPodDisruptionReason: a pod was lost to its node, a preemption
	// or an eviction; the restart did not count.
	RestartPodDisruptionReason = "PodDisruption"
	// RestartRetryableExitCodeReason: a container exited with a code of a
	// Restart rule.
	RestartRetryableExitCodeReason = "RetryableExitCode"
	// RestartJobFailedReason: a Job failed for another reason (its
	// backoffLimit was exceeded, for example).
	RestartJobFailedReason = "JobFailed"
	// RestartInPlaceReason: the job's workers restarted in their pods,
	// on their nodes (a runtime whose JobSet restarts in place: JobSet's
	// failurePolicy.restartStrategy InPlaceRestart); it counted.
	RestartInPlaceReason = "RestartedInPlace"
	// RestartUncountedReason: a restart that did not count, by a rule that
	// is not the restart policy's, which ended before the controller saw
	// its reason.
	RestartUncountedReason = "UncountedRestart"
)

// Reasons of the Failed condition that the restart policy gives.
const (
	// TrainJobFailedExitCodeReason: a container exited with a code of a
	// Fail rule.
	TrainJobFailedExitCodeReason = "NonRetryableExitCode"
	// TrainJobReachedMaxRestartsReason: the job failed again once its
	// restart budget was spent.
	TrainJobReachedMaxRestartsReason = "ReachedMaxRestarts"
)

// RestartedEventReason is the reason of the Event recorded at each restart.
const RestartedEventReason = "Restarted"
