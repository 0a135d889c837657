package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// The checkpoint contract, Trainforge's superset of Kubeflow Trainer's
// API: a runtime opts in by naming, in this annotation of its JobSet
// template (spec.template.metadata.annotations), a volume of its trainer
// step that outlives the pods (a persistentVolumeClaim or an nfs volume).
// A TrainJob may set the annotation in its spec.annotations, which wins.
// The TrainJobStatus plugin then tells every trainer container that mounts
// that volume where to write checkpoints and how long it has to write one
// after SIGTERM; the training code reports each checkpoint it completes to
// the status endpoint (UpdateTrainJobStatusRequest.Checkpoint), which
// records the last one in status.lastCheckpoint.
const (
	// CheckpointVolumeAnnotation names the trainer step's volume where
	// checkpoints are written.
	CheckpointVolumeAnnotation = "trainforge.dev/checkpoint-volume"

	// CheckpointDirEnv is the directory, in the training container, where
	// it writes its checkpoints: the mount path of the checkpoint volume.
	CheckpointDirEnv = "TRAINFORGE_CHECKPOINT_DIR"
	// CheckpointGraceSecondsEnv is the number of seconds the container
	// has between SIGTERM and SIGKILL: the pod's
	// terminationGracePeriodSeconds (30 when the template sets none).
	CheckpointGraceSecondsEnv = "TRAINFORGE_CHECKPOINT_GRACE_SECONDS"

	// MaxCheckpointPathLength bounds a reported checkpoint's path (the
	// Linux PATH_MAX).
	MaxCheckpointPathLength = 4096
)

// CheckpointReport is the optional checkpoint of a post to the status
// endpoint: a checkpoint the training code has completed. Trainforge's
// superset of Kubeflow Trainer's protocol.
type CheckpointReport struct {
	// step is the training step the checkpoint holds, 0 or more.
	Step int64 `json:"step"`
	// path is where the checkpoint was written, for example a directory
	// under TRAINFORGE_CHECKPOINT_DIR.
	// +optional
	Path string `json:"path,omitempty"`
	// time is when the checkpoint was completed (RFC 3339); the time the
	// endpoint received the post when left out.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
}

// CheckpointStatus is the last checkpoint the training code reported.
type CheckpointStatus struct {
	// step is the training step the checkpoint holds.
	// +kubebuilder:validation:Minimum=0
	// +required
	Step int64 `json:"step"`

	// path is where the checkpoint was written, as reported.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Path string `json:"path,omitempty"`

	// time is when the checkpoint was completed, as reported, else when
	// the status endpoint received the report.
	// +required
	Time metav1.Time `json:"time"`
}
