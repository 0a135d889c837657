package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RunStartReport is the optional runStart of a post to the status
// endpoint: the training code has started a run, a group of training
// processes that begins from a checkpoint (or from nothing), and reports
// it before its first step. Each start of a job's workers is one: the
// job's first, after a restart or a resumption, and the restarts that no
// record of the cluster shows, such as an elastic job whose workers
// re-form their group after a node was lost, or a launcher that restarts
// its workers in place (torchrun's --max-restarts). The goodput account
// ends the run before it there. Trainforge's superset of Kubeflow
// Trainer's protocol.
type RunStartReport struct {
	// fromStep is the training step the run starts from: the step of the
	// checkpoint it resumed, 0 when it starts from nothing.
	FromStep int64 `json:"fromStep"`
	// time is when the run started (RFC 3339); the time the endpoint
	// received the post when left out.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
}

// RunStartStatus is the last run start the training code reported.
type RunStartStatus struct {
	// fromStep is the training step the run started from.
	// +kubebuilder:validation:Minimum=0
	// +required
	FromStep int64 `json:"fromStep"`

	// time is when the run started, as reported, else when the status
	// endpoint received the report.
	// +required
	Time metav1.Time `json:"time"`
}
