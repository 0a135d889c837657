package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	// TrainJobKind is the kind of a TrainJob.
	TrainJobKind = "TrainJob"

	// TrainJobControllerName is the managedBy value of TrainJobs that this
	// controller reconciles (an empty managedBy means the same).
	TrainJobControllerName = "trainer.kubeflow.org/trainjob-controller"
)

// Condition types of a TrainJob.
const (
	// TrainJobCreated is True once the objects that run the job have been
	// applied, and False with a reason while they cannot be (for example the
	// runtime does not exist yet, or a plugin failed).
	TrainJobCreated = "Created"
	// TrainJobRunning is True while the TrainJob's pods run: its JobSet is
	// neither suspended nor finished, and at least one of its Jobs has all
	// its pods running (or has succeeded). It is False with reason
	// PodsPending before that (pods waiting to be scheduled, for example
	// for their gang), and Suspended, Completed or Failed after. Kubeflow
	// Trainer has no such condition; it is a superset.
	TrainJobRunning = "Running"
	// TrainJobSuspended is True while the TrainJob is suspended.
	TrainJobSuspended = "Suspended"
	// TrainJobComplete is True once the job has completed.
	TrainJobComplete = "Complete"
	// TrainJobFailed is True once the job has failed.
	TrainJobFailed = "Failed"
)

// Condition reasons of a TrainJob.
const (
	TrainJobJobsCreatedReason      = "JobsCreated"
	TrainJobRuntimeNotFoundReason  = "RuntimeNotFound"
	TrainJobBuildFailedReason      = "JobsBuildFailed"
	TrainJobSuspendedReason        = "Suspended"
	TrainJobResumedReason          = "Resumed"
	TrainJobDeadlineExceededReason = "DeadlineExceeded"

	// TrainJobTTLExpiredReason is the reason of the Event recorded when
	// the controller deletes a finished TrainJob whose
	// ttlSecondsAfterFinished has passed.
	TrainJobTTLExpiredReason = "TTLExpired"

	// Reasons of the Running condition.
	TrainJobPodsRunningReason = "PodsRunning"
	TrainJobPodsPendingReason = "PodsPending"
	TrainJobCompletedReason   = "Completed"
	TrainJobFailedReason      = "Failed"

	// TrainJobRuntimeSnapshotMismatchReason: status.runtimeSnapshot is not
	// of the runtime spec.runtimeRef names (only a hand-edited status).
	TrainJobRuntimeSnapshotMismatchReason = "RuntimeSnapshotMismatch"
	// TrainJobInvalidReason: the TrainJob cannot run as it is, with the
	// runtime it was created with; it is not retried until it changes.
	TrainJobInvalidReason = "InvalidTrainJob"

	// TrainJobResized is the condition of an elastic TrainJob's last
	// resize: True with reason Resized once the workload took the new
	// size, False with reason ResizeRefused while it refuses it (a JobSet
	// controller without the ElasticJobSet feature gate); the job keeps
	// running at its old size meanwhile.
	TrainJobResized             = "Resized"
	TrainJobResizedReason       = "Resized"
	TrainJobResizeRefusedReason = "ResizeRefused"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.trainer.numNodes,statuspath=.status.nodes.current,selectorpath=.status.nodes.selector
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=trainforge
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.spec.runtimeRef.name`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].type`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes.current`,description="Trainer pods the job's workload is sized for now; spec.trainer.numNodes is the size asked for"
// +kubebuilder:printcolumn:name="Progress",type=integer,JSONPath=`.status.trainerStatus.progressPercentage`,description="Percent of the training done, as the training code last reported it"
// +kubebuilder:printcolumn:name="Seconds Left",type=integer,JSONPath=`.status.trainerStatus.estimatedRemainingSeconds`,description="Seconds of training left, as the training code last estimated them"
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts.count`,priority=1
// +kubebuilder:printcolumn:name="Last Restart",type=string,JSONPath=`.status.restarts.lastReason`,priority=1
// +kubebuilder:printcolumn:name="Checkpoint",type=integer,JSONPath=`.status.lastCheckpoint.step`,priority=1,description="Step of the last checkpoint the training code reported"
// +kubebuilder:printcolumn:name="Goodput",type=integer,JSONPath=`.status.goodput.percent`,priority=1,description="Percent of the time since creation spent on training that was kept; empty until the training code reports progress"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')", message="metadata.name must match RFC 1035 DNS label format"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63", message="metadata.name must be no more than 63 characters"
// +kubebuilder:validation:XValidation:rule="(has(self.spec.trainer) && has(self.spec.trainer.numNodes) ? self.spec.trainer.numNodes : 0) == (has(oldSelf.spec.trainer) && has(oldSelf.spec.trainer.numNodes) ? oldSelf.spec.trainer.numNodes : 0) || (has(self.status) && has(self.status.nodes) && has(self.status.nodes.minNodes) && has(self.status.nodes.maxNodes) && has(self.spec.trainer) && has(self.spec.trainer.numNodes) && self.spec.trainer.numNodes >= self.status.nodes.minNodes && self.spec.trainer.numNodes <= self.status.nodes.maxNodes)", messageExpression="has(self.status) && has(self.status.nodes) && has(self.status.nodes.range) ? 'must be within ' + self.status.nodes.range + ' (minNodes:maxNodes of mlPolicy.torch.elasticPolicy in the runtime)' : 'field is immutable: only a TrainJob whose runtime sets mlPolicy.torch.elasticPolicy can be resized, once the controller has recorded its bounds in status.nodes'", reason=FieldValueInvalid, fieldPath=".spec.trainer.numNodes"

// TrainJob is a training job: a reference to a runtime plus the values that
// override it for this job.
type TrainJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TrainJobSpec   `json:"spec,omitempty"`
	Status TrainJobStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TrainJobList is a list of TrainJobs.
type TrainJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrainJob `json:"items"`
}

// TrainJobSpec is the desired state of a TrainJob.
type TrainJobSpec struct {
	// runtimeRef is the reference to the training runtime.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf", message="field is immutable"
	RuntimeRef RuntimeRef `json:"runtimeRef"`

	// initializer configures the dataset and model initializers.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf", message="field is immutable"
	// +optional
	Initializer *Initializer `json:"initializer,omitempty"`

	// trainer overrides the trainer step of the runtime. It is immutable
	// except numNodes, which an elastic job (its runtime sets
	// mlPolicy.torch.elasticPolicy) may change within its bounds, and
	// which is immutable for any other job (a rule on the TrainJob).
	// +kubebuilder:validation:XValidation:rule="has(self.image) == has(oldSelf.image) && (!has(self.image) || self.image == oldSelf.image) && has(self.command) == has(oldSelf.command) && (!has(self.command) || self.command == oldSelf.command) && has(self.args) == has(oldSelf.args) && (!has(self.args) || self.args == oldSelf.args) && has(self.env) == has(oldSelf.env) && (!has(self.env) || self.env == oldSelf.env) && has(self.resourcesPerNode) == has(oldSelf.resourcesPerNode) && (!has(self.resourcesPerNode) || self.resourcesPerNode == oldSelf.resourcesPerNode) && has(self.numProcPerNode) == has(oldSelf.numProcPerNode) && (!has(self.numProcPerNode) || string(self.numProcPerNode) == string(oldSelf.numProcPerNode))", message="field is immutable (except numNodes, for an elastic job)"
	// +optional
	Trainer *Trainer `json:"trainer,omitempty"`

	// labels are added to the objects built for this TrainJob.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are added to the objects built for this TrainJob.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// runtimePatches are strategic-merge patches applied, in order, to the
	// runtime's template for this TrainJob. Each is keyed by the manager
	// that owns it (for example Kueue).
	// +listType=map
	// +listMapKey=manager
	// +kubebuilder:validation:MaxItems=16
	// +optional
	RuntimePatches []RuntimePatch `json:"runtimePatches,omitempty"`

	// suspend suspends the TrainJob: its pods are removed until it is resumed.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// activeDeadlineSeconds is how long, from its start (which resets on
	// resume), the TrainJob may be active before it fails with reason
	// DeadlineExceeded.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf", message="field is immutable"
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// ttlSecondsAfterFinished is how long, in seconds, the TrainJob is kept
	// after it finished (its Complete or Failed condition turned True).
	// Then the controller deletes it, and the garbage collector deletes
	// everything it owns: its JobSet, Jobs, pods, PodGroup. 0 deletes it as
	// soon as it finishes; unset takes the runtime's
	// runPolicy.ttlSecondsAfterFinished, and without one the TrainJob is
	// kept until it is deleted by hand. Mutable, as a Job's: extending it on
	// a finished TrainJob keeps the TrainJob longer. The field Kubeflow
	// Trainer's KEP-2899 proposes, under the same name.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// managedBy names the controller that reconciles this TrainJob. This
	// controller reconciles TrainJobs whose managedBy is empty or
	// trainer.kubeflow.org/trainjob-controller and leaves others alone.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf", message="field is immutable"
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`

	// restartPolicy overrides, field by field, the runtime's
	// spec.restartPolicy for this TrainJob. Trainforge's superset of
	// Kubeflow Trainer's API.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf", message="field is immutable"
	// +optional
	RestartPolicy *RestartPolicy `json:"restartPolicy,omitempty"`
}

// RuntimeRef references a TrainingRuntime or a ClusterTrainingRuntime.
type RuntimeRef struct {
	// name of the runtime. A namespaced TrainingRuntime must be in the
	// TrainJob's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// apiGroup of the runtime.
	// +kubebuilder:default="trainer.kubeflow.org"
	// +kubebuilder:validation:MaxLength=253
	// +optional
	APIGroup *string `json:"apiGroup,omitempty"`

	// kind of the runtime: TrainingRuntime or ClusterTrainingRuntime.
	// +kubebuilder:default="ClusterTrainingRuntime"
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Kind *string `json:"kind,omitempty"`
}

// Initializer configures the steps that prepare the dataset and the model.
type Initializer struct {
	// dataset configures the dataset initializer step.
	// +optional
	Dataset *DatasetInitializer `json:"dataset,omitempty"`

	// model configures the model initializer step.
	// +optional
	Model *ModelInitializer `json:"model,omitempty"`
}

// DatasetInitializer overrides the runtime's dataset-initializer step.
type DatasetInitializer struct {
	// storageUri is the URI of the dataset; it reaches the initializer
	// container as the STORAGE_URI environment variable.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	StorageUri *string `json:"storageUri,omitempty"`

	// env is merged into the dataset initializer container's environment.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// secretRef names a Secret in the TrainJob's namespace whose keys become
	// the initializer container's environment (credentials).
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// ModelInitializer overrides the runtime's model-initializer step.
type ModelInitializer struct {
	// storageUri is the URI of the model; it reaches the initializer
	// container as the STORAGE_URI environment variable.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	StorageUri *string `json:"storageUri,omitempty"`

	// env is merged into the model initializer container's environment.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// secretRef names a Secret in the TrainJob's namespace whose keys become
	// the initializer container's environment (credentials).
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// Trainer overrides the trainer step of the runtime.
type Trainer struct {
	// image of the trainer container.
	// +kubebuilder:validation:MaxLength=500
	// +optional
	Image *string `json:"image,omitempty"`

	// command of the trainer container.
	// +listType=atomic
	// +optional
	Command []string `json:"command,omitempty"`

	// args of the trainer container.
	// +listType=atomic
	// +optional
	Args []string `json:"args,omitempty"`

	// env is merged into the trainer container's environment.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// numNodes is the number of training nodes (pods of the trainer step).
	// For an elastic job it is the desired size, mutable within the
	// runtime's mlPolicy.torch.elasticPolicy [minNodes, maxNodes], also
	// through the TrainJob's scale subresource; otherwise immutable.
	// +kubebuilder:validation:Minimum=1
	// +optional
	NumNodes *int32 `json:"numNodes,omitempty"`

	// resourcesPerNode are the compute resources of each training node.
	// +optional
	ResourcesPerNode *corev1.ResourceRequirements `json:"resourcesPerNode,omitempty"`

	// numProcPerNode is the number of processes on every training node: an
	// integer, or "auto", "cpu" or "gpu".
	// +kubebuilder:validation:XIntOrString
	// +optional
	NumProcPerNode *intstr.IntOrString `json:"numProcPerNode,omitempty"`
}

// RuntimePatch is a patch of the runtime template owned by one manager.
type RuntimePatch struct {
	// manager owns this patch, for example kueue.x-k8s.io/manager.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Manager string `json:"manager"`

	// time is when the patch was last written.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`

	// trainingRuntimeSpec is a strategic-merge patch of the runtime's spec;
	// its template is merged into the runtime's template.
	// +optional
	TrainingRuntimeSpec *TrainingRuntimeSpecPatch `json:"trainingRuntimeSpec,omitempty"`
}

// TrainingRuntimeSpecPatch is the part of a runtime spec that a
// RuntimePatch may change.
type TrainingRuntimeSpecPatch struct {
	// template is merged into the runtime's JobSet template.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Template *apiextensionsv1.JSON `json:"template,omitempty"`
}

// TrainJobStatus is the observed state of a TrainJob.
type TrainJobStatus struct {
	// conditions of the TrainJob: Created, Running, Suspended, Complete,
	// Failed. The condition that says the TrainJob's state is kept last,
	// so that the State column (the last condition's type) reads Created,
	// Running, Suspended, Complete or Failed.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// jobsStatus counts the child Jobs of each replicatedJob.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +optional
	JobsStatus []JobStatus `json:"jobsStatus,omitempty"`

	// runtimeSnapshot is the runtime this TrainJob runs with: a copy of the
	// TrainingRuntime or ClusterTrainingRuntime that spec.runtimeRef names,
	// taken by the controller at the TrainJob's first reconcile and never
	// rewritten. Every later reconcile builds the job from it, not from the
	// live runtime, so that editing or deleting a runtime changes no
	// TrainJob that already exists, running or suspended. TrainJobs created
	// before snapshots existed get theirs at their next reconcile, from the
	// runtime as it is then. Written only by the controller; to run with an
	// edited runtime, create a new TrainJob.
	// +optional
	RuntimeSnapshot *RuntimeSnapshot `json:"runtimeSnapshot,omitempty"`

	// restarts counts the job's restarts (each recreated all its Jobs and
	// pods) and says why it last restarted. Absent until the first restart.
	// Trainforge's superset of Kubeflow Trainer's API.
	// +optional
	Restarts *RestartStatus `json:"restarts,omitempty"`

	// trainerStatus is the progress of the trainer step as the training
	// code last reported it to the controller's status endpoint (Kubeflow
	// Trainer's protocol: the TrainJobStatus plugin gives each trainer
	// container the endpoint's URL, its CA and a token). Nil until the
	// training code reports. Written only by the status endpoint, with a
	// field manager of its own, so that it never races the conditions.
	// +optional
	TrainerStatus *TrainerStatus `json:"trainerStatus,omitempty"`

	// lastCheckpoint is the last checkpoint the training code reported to
	// the status endpoint (the checkpoint of a post): its step, path and
	// time. Nil until one is reported; kept across restarts, so that a
	// restarted job's code and its users know which checkpoint to resume
	// from. Written only by the status endpoint, with a field manager of
	// its own (trainforge-status-server-checkpoint), so that a post
	// without a checkpoint leaves it as it is. Trainforge's superset of
	// Kubeflow Trainer's API.
	// +optional
	LastCheckpoint *CheckpointStatus `json:"lastCheckpoint,omitempty"`

	// lastRunStart is the last start of a run the training code reported
	// to the status endpoint (the runStart of a post): the step it
	// started from and when. Nil until one is reported. The goodput
	// account reads it to see the restarts no other record shows.
	// Written only by the status endpoint, with a field manager of its
	// own (trainforge-status-server-run-start). Trainforge's superset of
	// Kubeflow Trainer's API.
	// +optional
	LastRunStart *RunStartStatus `json:"lastRunStart,omitempty"`

	// nodes is the size of the trainer step: what the job's workload is
	// sized for now, the bounds of an elastic job and the selector of the
	// trainer pods (the TrainJob's scale subresource reads current and
	// selector). Trainforge's superset of Kubeflow Trainer's API.
	// +optional
	Nodes *NodesStatus `json:"nodes,omitempty"`

	// goodput is where the job's time went since its creation: training
	// whose progress was kept, and the time lost by cause. Nil until the
	// training code reports progress. Written only by the controller's
	// goodput account, with a field manager of its own
	// (trainforge-goodput). Trainforge's superset of Kubeflow Trainer's
	// API.
	// +optional
	Goodput *GoodputStatus `json:"goodput,omitempty"`
}

// NodesStatus is the size of a TrainJob's trainer step.
type NodesStatus struct {
	// current is the number of trainer pods the job's workload (its
	// trainer Job's parallelism) is sized for now. It follows
	// spec.trainer.numNodes once a resize is accepted; while one is
	// refused it stays at the old size, and the Resized condition says
	// why.
	// +optional
	Current int32 `json:"current"`

	// selector is the label selector of the trainer pods, in the string
	// form of `kubectl get pods -l`: HorizontalPodAutoscalers and KEDA
	// read the pods' metrics through it.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Selector string `json:"selector,omitempty"`

	// minNodes and maxNodes are the bounds of an elastic job, from its
	// runtime's mlPolicy.torch.elasticPolicy; absent for a job that
	// cannot be resized.
	// +optional
	MinNodes *int32 `json:"minNodes,omitempty"`
	// +optional
	MaxNodes *int32 `json:"maxNodes,omitempty"`

	// range is minNodes:maxNodes as one string (torchrun's --nnodes
	// form), for the message of a resize out of bounds.
	// +kubebuilder:validation:MaxLength=24
	// +optional
	Range string `json:"range,omitempty"`

	// lastResizeTime is when the workload last accepted a new size.
	// +optional
	LastResizeTime *metav1.Time `json:"lastResizeTime,omitempty"`
}

// TrainerStatus is the progress of a TrainJob's trainer step, as Kubeflow
// Trainer defines it.
// +kubebuilder:validation:XValidation:rule="has(self.lastUpdatedTime)",message="lastUpdatedTime is required when trainerStatus is present"
type TrainerStatus struct {
	// progressPercentage estimates how much of the training is done, from
	// 0 to 100; empty when unknown.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ProgressPercentage *int32 `json:"progressPercentage,omitempty"`

	// estimatedRemainingSeconds estimates the seconds of training left;
	// empty when unknown.
	// +kubebuilder:validation:Minimum=0
	// +optional
	EstimatedRemainingSeconds *int32 `json:"estimatedRemainingSeconds,omitempty"`

	// metrics are the training's current metrics (loss, accuracy, ...),
	// as name/value strings.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Metrics []Metric `json:"metrics,omitempty"`

	// lastUpdatedTime is when the training code observed this status.
	// Required whenever trainerStatus is set.
	// +optional
	LastUpdatedTime metav1.Time `json:"lastUpdatedTime,omitempty"`
}

// Metric is one metric of the training, by name.
type Metric struct {
	// name of the metric, for example "loss" or "eval_accuracy".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +required
	Name string `json:"name,omitempty"`

	// value of the metric, as a string.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +required
	Value string `json:"value,omitempty"`
}

// UpdateTrainJobStatusRequest is the body of a POST to the status
// endpoint, as Kubeflow Trainer defines it.
type UpdateTrainJobStatusRequest struct {
	// trainerStatus is the trainer step's progress; a request without it
	// changes nothing.
	// +optional
	TrainerStatus *TrainerStatus `json:"trainerStatus,omitempty"`

	// checkpoint reports a checkpoint the training code has completed;
	// the endpoint records it in status.lastCheckpoint. Trainforge's
	// superset: Kubeflow Trainer has no such field, and a post without it
	// is Kubeflow's.
	// +optional
	Checkpoint *CheckpointReport `json:"checkpoint,omitempty"`

	// runStart reports that the training code started a run; the
	// endpoint records it in status.lastRunStart. Trainforge's superset,
	// as checkpoint.
	// +optional
	RunStart *RunStartReport `json:"runStart,omitempty"`
}

// RuntimeSnapshot is a copy of a runtime as a TrainJob first saw it.
type RuntimeSnapshot struct {
	// apiGroup of the runtime, as spec.runtimeRef.apiGroup.
	// +kubebuilder:validation:MaxLength=253
	APIGroup string `json:"apiGroup"`

	// kind of the runtime, as spec.runtimeRef.kind.
	// +kubebuilder:validation:MaxLength=253
	Kind string `json:"kind"`

	// name of the runtime, as spec.runtimeRef.name.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// generation is the runtime's metadata.generation when the snapshot was
	// taken: compare it with the runtime's current one to see whether the
	// runtime has been edited since.
	// +optional
	Generation int64 `json:"generation,omitempty"`

	// spec is the runtime's spec when the snapshot was taken. It is kept
	// without a schema: the runtime's own schema (a whole JobSet spec) would
	// add hundreds of kilobytes to the TrainJob CRD, and the runtime's API
	// server validation has already checked it.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Spec TrainingRuntimeSpec `json:"spec"`
}

// JobStatus counts the child Jobs of one replicatedJob.
type JobStatus struct {
	// name of the replicatedJob.
	Name string `json:"name"`
	// ready is the number of Jobs whose pods are all ready or completed.
	Ready *int32 `json:"ready,omitempty"`
	// succeeded is the number of Jobs that succeeded.
	Succeeded *int32 `json:"succeeded,omitempty"`
	// failed is the number of Jobs that failed.
	Failed *int32 `json:"failed,omitempty"`
	// active is the number of Jobs with a pod running or pending.
	Active *int32 `json:"active,omitempty"`
	// suspended is the number of suspended Jobs.
	Suspended *int32 `json:"suspended,omitempty"`
}

// IsSuspended reports whether the TrainJob asks to be suspended.
func (j *TrainJob) IsSuspended() bool {
	return j.Spec.Suspend != nil && *j.Spec.Suspend
}

// IsManagedByUs reports whether this controller reconciles the TrainJob.
func (j *TrainJob) IsManagedByUs() bool {
	return j.Spec.ManagedBy == nil || *j.Spec.ManagedBy == "" || *j.Spec.ManagedBy == TrainJobControllerName
}
