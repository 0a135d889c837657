package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GoodputStatus is where a TrainJob's time went since it was created: the
// training whose progress was kept, and the time lost by cause. It is an
// account kept by the controller from the TrainJob's own records (its
// conditions, restarts, resizes, and the progress and checkpoints its
// training code reports), closed at each of them: the figures are as of
// updateTime, and the time since then goes to state. A TrainJob whose code
// never reports progress has no goodput: it is unknown, not guessed.
// Trainforge's superset of Kubeflow Trainer's API.
type GoodputStatus struct {
	// percent is productiveSeconds as a percentage of elapsedSeconds,
	// rounded down.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Percent int32 `json:"percent"`

	// elapsedSeconds is the time from the TrainJob's creation to
	// updateTime (to its end, once it has finished).
	// +kubebuilder:validation:Minimum=0
	ElapsedSeconds int64 `json:"elapsedSeconds"`

	// productiveSeconds is the time spent training whose progress was
	// kept: from each first progress report after a start, a restart or
	// a resize, to the next disruption, less the work redone after it.
	// +kubebuilder:validation:Minimum=0
	ProductiveSeconds int64 `json:"productiveSeconds"`

	// lost is the rest of elapsedSeconds, by cause.
	Lost GoodputLoss `json:"lost"`

	// state is what the time since updateTime goes to: Training, or the
	// cause it is lost to while the job does not train (Suspended goes to
	// lost.waitingSeconds, Restarting to restartSeconds, Resizing to
	// resizeSeconds), or nothing once Finished.
	// +kubebuilder:validation:Enum=Training;Suspended;Restarting;Resizing;Finished
	State GoodputState `json:"state"`

	// since is when state began: for Training, the first progress report
	// of the run; otherwise the disruption (a restart, a resize, a
	// suspension) or the resumption that began it.
	Since metav1.Time `json:"since"`

	// updateTime is the time the figures are computed to. The controller
	// updates them at each change of state, and at most a minute apart
	// while the training code reports progress.
	UpdateTime metav1.Time `json:"updateTime"`

	// unsettled is the last training run a disruption ended, until the
	// job trains again (or finishes): then the work done after the last
	// checkpoint reported before it ended moves from productiveSeconds to
	// lost.redoneSeconds. A checkpoint written in the grace period of the
	// disruption (after it began) saves the whole run.
	// +optional
	Unsettled *GoodputRun `json:"unsettled,omitempty"`

	// restarts is the restarts.count this account has counted, and
	// resizeTime the nodes.lastResizeTime: a new one is a disruption.
	// +optional
	Restarts int32 `json:"restarts,omitempty"`
	// +optional
	ResizeTime *metav1.Time `json:"resizeTime,omitempty"`
	// runStartTime is the lastRunStart.time this account has counted: a
	// later one while the job trains is a restart that no other record
	// shows.
	// +optional
	RunStartTime *metav1.Time `json:"runStartTime,omitempty"`
}

// GoodputLoss is the time a TrainJob lost, in seconds, by cause.
type GoodputLoss struct {
	// waitingSeconds: from creation until its pods first ran (waiting to
	// be admitted, scheduled, gang-scheduled, pulled), and the time it
	// spent suspended after it had started (preempted by Kueue, or by
	// its user).
	// +kubebuilder:validation:Minimum=0
	WaitingSeconds int64 `json:"waitingSeconds"`

	// startUpSeconds: from its pods first running until its code's first
	// progress report.
	// +kubebuilder:validation:Minimum=0
	StartUpSeconds int64 `json:"startUpSeconds"`

	// restartSeconds: from each restart (a failure the restart policy
	// retried) or resumption until the first progress report after it.
	// +kubebuilder:validation:Minimum=0
	RestartSeconds int64 `json:"restartSeconds"`

	// resizeSeconds: from each resize of an elastic job until the first
	// progress report after it.
	// +kubebuilder:validation:Minimum=0
	ResizeSeconds int64 `json:"resizeSeconds"`

	// redoneSeconds: training done again because a disruption came after
	// the last checkpoint (all of a run, for a job that reports none).
	// +kubebuilder:validation:Minimum=0
	RedoneSeconds int64 `json:"redoneSeconds"`
}

// GoodputRun is a stretch of training: from its first progress report to
// the disruption that ended it.
type GoodputRun struct {
	Start metav1.Time `json:"start"`
	End   metav1.Time `json:"end"`
}

// GoodputState is what a TrainJob's time goes to now.
type GoodputState string

// The states of GoodputStatus.
const (
	GoodputTraining   GoodputState = "Training"
	GoodputSuspended  GoodputState = "Suspended"
	GoodputRestarting GoodputState = "Restarting"
	GoodputResizing   GoodputState = "Resizing"
	GoodputFinished   GoodputState = "Finished"
)
