// Package v1alpha1 holds the user-facing API of Trainforge: TrainJob,
// TrainingRuntime and ClusterTrainingRuntime in the group
// trainer.kubeflow.org, version v1alpha1.
//
// The field names and JSON shapes are those of Kubeflow Trainer's v1alpha1
// API, so existing manifests, the Kubeflow Python SDK and Kueue's TrainJob
// integration work unchanged. Where Trainforge differs it accepts a superset:
// numProcPerNode is int-or-string, and mlPolicy and podGroupPolicy keep the
// keys they do not type so that a vendor plugin can own a new key.
//
// +kubebuilder:object:generate=true
// +groupName=trainer.kubeflow.org
package v1alpha1
