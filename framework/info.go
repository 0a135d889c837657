package framework

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// InfoVersion is the version of the Info document. It changes only when a
// field changes meaning; new fields are added without a change.
const InfoVersion = "v1"

// Info is the one document that flows through the phases of a reconcile.
// It is plain data with JSON tags, the same in-process and on the wire, so
// that a plugin works from Info alone. Plugins change it; maps are merged,
// never replaced.
type Info struct {
	// Version is InfoVersion.
	Version string `json:"version"`

	// Labels and Annotations are set on every object built for the job.
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`

	// RuntimePolicy holds the runtime's policies as raw JSON, vendor keys
	// included.
	RuntimePolicy RuntimePolicy `json:"runtimePolicy"`

	// PodSets has one entry per replicatedJob of the template, in order.
	PodSets []PodSet `json:"podSets"`

	// RestartPolicy is the policy the job runs with: the runtime's
	// spec.restartPolicy with the TrainJob's spec.restartPolicy over it;
	// nil when neither sets one. The builder of the job's workload
	// translates it (the JobSet plugin, into failurePolicy and
	// podFailurePolicy). It is the user's: plugins read it, never change it.
	RestartPolicy *trainer.RestartPolicy `json:"restartPolicy,omitempty"`

	// Template is the runtime's JobSet template (a JobSetTemplateSpec)
	// after the TrainJob's runtimePatches, as raw JSON.
	Template json.RawMessage `json:"template,omitempty"`
}

// RuntimePolicy holds the runtime's mlPolicy and podGroupPolicy.
type RuntimePolicy struct {
	MLPolicy       json.RawMessage `json:"mlPolicy,omitempty"`
	PodGroupPolicy json.RawMessage `json:"podGroupPolicy,omitempty"`
}

// PodSet describes the pods of one replicatedJob.
type PodSet struct {
	// Name is the replicatedJob's name.
	Name string `json:"name"`
	// AncestorStep is the trainjob-ancestor-step of the replicatedJob
	// (trainer, dataset-initializer, model-initializer), or empty.
	AncestorStep string `json:"ancestorStep,omitempty"`
	// Replicas is the replicatedJob's replicas.
	Replicas int32 `json:"replicas"`
	// Count is the number of pods of one replica (the Job's parallelism
	// and completions).
	Count int32 `json:"count"`
	// InitContainers and Containers of the pod template.
	InitContainers []Container `json:"initContainers,omitempty"`
	Containers     []Container `json:"containers,omitempty"`
	// Volumes of the pod template.
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// Endpoints are the stable DNS names of the pods, in rank order.
	Endpoints []string `json:"endpoints,omitempty"`
	// RuntimeClassName is the pods' RuntimeClass, when the template names one.
	RuntimeClassName string `json:"runtimeClassName,omitempty"`
	// Overhead is the per-pod overhead: the template's, else its
	// RuntimeClass's (which admission would set on every pod).
	Overhead corev1.ResourceList `json:"overhead,omitempty"`
	// SinglePodRequests are the resources one pod requests, counted the way
	// the scheduler counts them (init containers, sidecars, overhead).
	SinglePodRequests corev1.ResourceList `json:"singlePodRequests,omitempty"`
	// PodLabels and PodAnnotations are added to this PodSet's pod template
	// (for example a scheduler's pod-group label).
	PodLabels      map[string]string `json:"podLabels,omitempty"`
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
	// SchedulerName, when set, is the scheduler of this PodSet's pods.
	SchedulerName string `json:"schedulerName,omitempty"`
	// Elastic, when set, says that Count may change while the job runs,
	// within [Min, Max]: the ML plugin that owns the job's policy sets it
	// on a step whose processes re-form their group when pods come and go
	// (Torch, for mlPolicy.torch.elasticPolicy). The workload's builder
	// then lets that count change in place (the JobSet plugin, through
	// the trainer Job's parallelism and completions) instead of
	// rebuilding the workload; no other plugin may vary the pods with it.
	Elastic *CountRange `json:"elastic,omitempty"`
}

// CountRange is the range of an elastic PodSet's Count.
type CountRange struct {
	Min int32 `json:"min"`
	Max int32 `json:"max"`
}

// Container is the part of a container that plugins read and change.
type Container struct {
	Name         string                      `json:"name"`
	Image        string                      `json:"image,omitempty"`
	Command      []string                    `json:"command,omitempty"`
	Args         []string                    `json:"args,omitempty"`
	Env          []corev1.EnvVar             `json:"env,omitempty"`
	EnvFrom      []corev1.EnvFromSource      `json:"envFrom,omitempty"`
	Ports        []corev1.ContainerPort      `json:"ports,omitempty"`
	VolumeMounts []corev1.VolumeMount        `json:"volumeMounts,omitempty"`
	Resources    corev1.ResourceRequirements `json:"resources,omitempty"`
}

// PodSet returns the PodSet with the given name, or nil.
func (i *Info) PodSet(name string) *PodSet {
	for k := range i.PodSets {
		if i.PodSets[k].Name == name {
			return &i.PodSets[k]
		}
	}
	return nil
}

// Copy returns a deep copy of Info.
func (i *Info) Copy() (*Info, error) {
	data, err := json.Marshal(i)
	if err != nil {
		return nil, err
	}
	out := &Info{}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, err
	}
	return out, nil
}
