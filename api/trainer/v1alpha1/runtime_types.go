package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

const (
	// TrainingRuntimeKind is the kind of a namespaced runtime.
	TrainingRuntimeKind = "TrainingRuntime"
	// ClusterTrainingRuntimeKind is the kind of a cluster-scoped runtime.
	ClusterTrainingRuntimeKind = "ClusterTrainingRuntime"
)

// Labels that mark the steps of a runtime template.
const (
	// AncestorStepLabel marks a replicatedJob with the step it runs.
	AncestorStepLabel = "trainer.kubeflow.org/trainjob-ancestor-step"
	// TrainerStep is the AncestorStepLabel value of the trainer step.
	TrainerStep = "trainer"
	// DatasetInitializerStep is the AncestorStepLabel value of the dataset initializer.
	DatasetInitializerStep = "dataset-initializer"
	// ModelInitializerStep is the AncestorStepLabel value of the model initializer.
	ModelInitializerStep = "model-initializer"
	// TrainerContainerName is the name of the trainer step's main container.
	TrainerContainerName = "node"
)

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,categories=trainforge
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterTrainingRuntime is a runtime that TrainJobs of every namespace can use.
type ClusterTrainingRuntime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TrainingRuntimeSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterTrainingRuntimeList is a list of ClusterTrainingRuntimes.
type ClusterTrainingRuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterTrainingRuntime `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=trainforge
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// TrainingRuntime is a runtime that TrainJobs of its own namespace can use.
type TrainingRuntime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TrainingRuntimeSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// TrainingRuntimeList is a list of TrainingRuntimes.
type TrainingRuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrainingRuntime `json:"items"`
}

// TrainingRuntimeSpec is a reusable template for TrainJobs.
type TrainingRuntimeSpec struct {
	// mlPolicy configures the ML framework of the runtime.
	// +optional
	MLPolicy *MLPolicy `json:"mlPolicy,omitempty"`

	// podGroupPolicy configures gang scheduling.
	// +optional
	PodGroupPolicy *PodGroupPolicy `json:"podGroupPolicy,omitempty"`

	// restartPolicy says when the runtime's jobs restart and when they
	// fail: their restart budget, pod disruptions that restart without
	// counting, exit codes that fail or restart at once. A TrainJob's
	// spec.restartPolicy overrides it field by field. Trainforge's superset
	// of Kubeflow Trainer's API.
	// +optional
	RestartPolicy *RestartPolicy `json:"restartPolicy,omitempty"`

	// runPolicy holds the defaults of the TrainJobs that use this runtime
	// for their lifecycle; a TrainJob's own field of the same name wins.
	// +optional
	RunPolicy *RunPolicy `json:"runPolicy,omitempty"`

	// template is the JobSet that runs the job.
	Template JobSetTemplateSpec `json:"template"`
}

// RunPolicy is a runtime's defaults for the lifecycle of its TrainJobs, as
// Kubeflow Trainer's KEP-2899 proposes it (of which only
// ttlSecondsAfterFinished is implemented here).
type RunPolicy struct {
	// ttlSecondsAfterFinished is how long, in seconds, a finished TrainJob
	// of this runtime is kept before it is deleted, unless the TrainJob
	// sets spec.ttlSecondsAfterFinished. A TrainJob reads it from its
	// runtime snapshot: editing it changes the TrainJobs created after the
	// edit only.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// JobSetTemplateSpec is the template of the JobSet built for a TrainJob.
type JobSetTemplateSpec struct {
	// metadata of the JobSet: its labels and annotations.
	// +optional
	ObjectMeta metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the JobSet.
	// +optional
	Spec jobsetv1alpha2.JobSetSpec `json:"spec,omitempty"`
}
