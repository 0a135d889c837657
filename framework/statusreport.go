package framework

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// StatusReport is what a status plugin reports of a TrainJob's status:
// the fields a plugin may set. The others (runtimeSnapshot,
// trainerStatus, lastCheckpoint, goodput, ...) are the host's: the
// controller and the status endpoint write them. On the wire it is a
// TrainJobStatus with these fields only (the JSON names are the same).
type StatusReport struct {
	// Conditions the plugin sets; each replaces the TrainJob's condition
	// of its type. Their lastTransitionTime and observedGeneration are
	// the host's.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// JobsStatus, when set, replaces status.jobsStatus.
	JobsStatus []trainer.JobStatus `json:"jobsStatus,omitempty"`
	// Restarts, when set, replaces status.restarts.
	Restarts *trainer.RestartStatus `json:"restarts,omitempty"`
	// Nodes, when set, replaces status.nodes.
	Nodes *trainer.NodesStatus `json:"nodes,omitempty"`
}

// ApplyTo sets what the reports say on job, in order: a later report's
// condition replaces an earlier one's of the same type, and its other
// fields, when set, replace theirs. A condition's transition time changes
// only when its status does. This is the one merge of status reports.
func ApplyTo(job *trainer.TrainJob, reports ...*StatusReport) {
	for _, r := range reports {
		if r == nil {
			continue
		}
		for _, c := range r.Conditions {
			meta.SetStatusCondition(&job.Status.Conditions, metav1.Condition{
				Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message,
				ObservedGeneration: job.Generation,
			})
		}
		if r.JobsStatus != nil {
			job.Status.JobsStatus = r.JobsStatus
		}
		if r.Restarts != nil {
			job.Status.Restarts = r.Restarts
		}
		if r.Nodes != nil {
			job.Status.Nodes = r.Nodes
		}
	}
}
