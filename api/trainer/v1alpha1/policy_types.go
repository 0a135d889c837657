package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MLPolicy configures the ML framework of a runtime. Besides the keys typed
// here it keeps any other key (for example deepspeed) in Extra, so that a
// vendor plugin can own a key without a change to the CRD.
//
// +kubebuilder:pruning:PreserveUnknownFields
type MLPolicy struct {
	// numNodes is the default number of training nodes.
	// +kubebuilder:validation:Minimum=1
	// +optional
	NumNodes *int32 `json:"numNodes,omitempty"`

	MLPolicySource `json:",inline"`

	// Extra holds the keys that this API does not type, raw.
	Extra map[string]apiextensionsv1.JSON `json:"-"`
}

// MLPolicySource holds the typed ML framework keys. At most one is expected
// per runtime; the plugin that owns a key decides what it means.
type MLPolicySource struct {
	// torch configures PyTorch distributed training (torchrun).
	// +optional
	Torch *TorchMLPolicySource `json:"torch,omitempty"`
	// mpi configures MPI training.
	// +optional
	MPI *MPIMLPolicySource `json:"mpi,omitempty"`
	// jax configures JAX training.
	// +optional
	JAX *JAXMLPolicySource `json:"jax,omitempty"`
	// xgboost configures XGBoost training.
	// +optional
	XGBoost *XGBoostMLPolicySource `json:"xgboost,omitempty"`
	// flux configures a Flux cluster bootstrapped in the trainer pods.
	// +optional
	Flux *FluxMLPolicySource `json:"flux,omitempty"`
}

// TorchMLPolicySource configures torchrun.
type TorchMLPolicySource struct {
	// numProcPerNode is the number of processes per node: an integer, or
	// "auto", "cpu" or "gpu".
	// +kubebuilder:validation:XIntOrString
	// +optional
	NumProcPerNode *intstr.IntOrString `json:"numProcPerNode,omitempty"`

	// elasticPolicy configures elastic training.
	// +optional
	ElasticPolicy *TorchElasticPolicy `json:"elasticPolicy,omitempty"`

	// envInjection names other containers of the runtime that also get
	// the PET_* variables and PET_MASTER_ADDR and PET_MASTER_PORT, for
	// example an init container that waits for the first trainer pod, or
	// a sidecar that reports the node's rank. The trainer's main container
	// always gets them and must not be named. Unset, only the main
	// container gets them.
	// +optional
	EnvInjection *EnvInjection `json:"envInjection,omitempty"`
}

// EnvInjection lists the containers that get a framework's variables
// besides the trainer's main container.
type EnvInjection struct {
	// targets are the replicatedJobs, each with the containers in it that
	// get the variables; a replicatedJob appears at most once.
	// +listType=map
	// +listMapKey=jobName
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Targets []EnvInjectionTarget `json:"targets,omitempty"`
}

// EnvInjectionTarget is one replicatedJob of the runtime and the containers
// in it (containers or initContainers) that get the variables.
type EnvInjectionTarget struct {
	// jobName is the name of the replicatedJob.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	JobName string `json:"jobName,omitempty"`

	// containerNames are the names of the containers or init containers
	// of that replicatedJob's pods. "node", the trainer's main container,
	// always gets the variables and is not allowed here.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!self.exists(c, c == 'node')",message="containerNames must not include the main node container because PET_* envs are always injected into it"
	// +required
	ContainerNames []string `json:"containerNames,omitempty"`
}

// TorchElasticPolicy configures elastic PyTorch training: the job's
// spec.trainer.numNodes may change while it runs, within [minNodes,
// maxNodes] (by an edit, `kubectl scale trainjob/NAME --replicas=N`, or an
// autoscaler through the TrainJob's scale subresource), and the trainer
// Job is resized in place. torchrun runs with --nnodes=minNodes:maxNodes
// and the c10d rendezvous, so the worker group re-forms at each change.
// The names are those of Kubeflow Trainer v2.1 and of its KEP-2903.
// +kubebuilder:validation:XValidation:rule="!has(self.minNodes) || !has(self.maxNodes) || self.minNodes <= self.maxNodes",message="minNodes must not be greater than maxNodes"
type TorchElasticPolicy struct {
	// maxRestarts is how many times torchrun restarts its worker group
	// (PET_MAX_RESTARTS) before the node's process fails.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
	// minNodes is the lower bound of the number of nodes: the job keeps
	// training while at least this many trainer pods run. Unset, the
	// job's numNodes when it starts.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinNodes *int32 `json:"minNodes,omitempty"`
	// maxNodes is the upper bound of the number of nodes. Unset, the
	// job's numNodes when it starts.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxNodes *int32 `json:"maxNodes,omitempty"`
	// metrics, when set, have the controller build a
	// HorizontalPodAutoscaler (autoscaling/v2) named as the TrainJob that
	// scales it between minNodes and maxNodes on these metrics, through
	// the TrainJob's scale subresource.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`
}

// MPIMLPolicySource configures MPI training (served by an external plugin).
type MPIMLPolicySource struct {
	// numProcPerNode is the number of slots per node.
	// +optional
	NumProcPerNode *int32 `json:"numProcPerNode,omitempty"`
	// mpiImplementation is the MPI implementation, for example OpenMPI.
	// +optional
	MPIImplementation *string `json:"mpiImplementation,omitempty"`
	// sshAuthMountPath is where the SSH keys are mounted.
	// +optional
	SSHAuthMountPath *string `json:"sshAuthMountPath,omitempty"`
	// runLauncherAsNode runs the launcher as one of the nodes.
	// +optional
	RunLauncherAsNode *bool `json:"runLauncherAsNode,omitempty"`
}

// JAXMLPolicySource configures JAX training (served by an external plugin).
type JAXMLPolicySource struct{}

// XGBoostMLPolicySource configures XGBoost training (served by an external plugin).
type XGBoostMLPolicySource struct{}

// FluxMLPolicySource configures a Flux cluster in the trainer pods (served
// by an external plugin).
type FluxMLPolicySource struct {
	// numProcPerNode is the number of processes (Flux tasks) per node; 1
	// when unset.
	// +kubebuilder:validation:Minimum=1
	// +optional
	NumProcPerNode *int32 `json:"numProcPerNode,omitempty"`
}

// PodGroupPolicy configures gang scheduling. Like MLPolicy it keeps the keys
// it does not type in Extra.
//
// +kubebuilder:pruning:PreserveUnknownFields
type PodGroupPolicy struct {
	PodGroupPolicySource `json:",inline"`

	// Extra holds the keys that this API does not type, raw.
	Extra map[string]apiextensionsv1.JSON `json:"-"`
}

// PodGroupPolicySource holds the typed gang-scheduling keys.
type PodGroupPolicySource struct {
	// coscheduling uses the scheduler-plugins coscheduling plugin.
	// +optional
	Coscheduling *CoschedulingPodGroupPolicySource `json:"coscheduling,omitempty"`
	// volcano uses the Volcano scheduler (served by an external plugin).
	// +optional
	Volcano *VolcanoPodGroupPolicySource `json:"volcano,omitempty"`
}

// CoschedulingPodGroupPolicySource configures the PodGroup of the gang.
type CoschedulingPodGroupPolicySource struct {
	// scheduleTimeoutSeconds is how long the gang may wait to be scheduled;
	// 60 when unset or 0.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// VolcanoPodGroupPolicySource configures a Volcano PodGroup.
type VolcanoPodGroupPolicySource struct {
	// networkTopology constrains the placement of the gang.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	NetworkTopology *apiextensionsv1.JSON `json:"networkTopology,omitempty"`
}

// Policy keys this API types; any other key lands in Extra.
var (
	mlPolicyTypedKeys       = []string{"numNodes", "torch", "mpi", "jax", "xgboost", "flux"}
	podGroupPolicyTypedKeys = []string{"coscheduling", "volcano"}
)

// Keys returns the framework keys set in the policy (typed and extra, not
// numNodes), sorted.
func (p *MLPolicy) Keys() []string {
	if p == nil {
		return nil
	}
	var keys []string
	if p.Torch != nil {
		keys = append(keys, "torch")
	}
	if p.MPI != nil {
		keys = append(keys, "mpi")
	}
	if p.JAX != nil {
		keys = append(keys, "jax")
	}
	if p.XGBoost != nil {
		keys = append(keys, "xgboost")
	}
	if p.Flux != nil {
		keys = append(keys, "flux")
	}
	return sortedWithExtra(keys, p.Extra)
}

// Keys returns the gang-scheduling keys set in the policy, sorted.
func (p *PodGroupPolicy) Keys() []string {
	if p == nil {
		return nil
	}
	var keys []string
	if p.Coscheduling != nil {
		keys = append(keys, "coscheduling")
	}
	if p.Volcano != nil {
		keys = append(keys, "volcano")
	}
	return sortedWithExtra(keys, p.Extra)
}

func sortedWithExtra(keys []string, extra map[string]apiextensionsv1.JSON) []string {
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The JSON methods below round-trip the keys that the Go types do not know:
// without them a typed decode would drop a vendor's policy on the floor.

// MarshalJSON encodes the typed keys and the extra keys in one object.
func (p MLPolicy) MarshalJSON() ([]byte, error) {
	type typed MLPolicy
	return marshalWithExtra(typed(p), p.Extra, mlPolicyTypedKeys)
}

// UnmarshalJSON decodes the typed keys and keeps the others in Extra.
func (p *MLPolicy) UnmarshalJSON(data []byte) error {
	type typed MLPolicy
	var t typed
	extra, err := unmarshalWithExtra(data, &t, mlPolicyTypedKeys)
	if err != nil {
		return err
	}
	*p = MLPolicy(t)
	p.Extra = extra
	return nil
}

// MarshalJSON encodes the typed keys and the extra keys in one object.
func (p PodGroupPolicy) MarshalJSON() ([]byte, error) {
	type typed PodGroupPolicy
	return marshalWithExtra(typed(p), p.Extra, podGroupPolicyTypedKeys)
}

// UnmarshalJSON decodes the typed keys and keeps the others in Extra.
func (p *PodGroupPolicy) UnmarshalJSON(data []byte) error {
	type typed PodGroupPolicy
	var t typed
	extra, err := unmarshalWithExtra(data, &t, podGroupPolicyTypedKeys)
	if err != nil {
		return err
	}
	*p = PodGroupPolicy(t)
	p.Extra = extra
	return nil
}

func marshalWithExtra(typed any, extra map[string]apiextensionsv1.JSON, typedKeys []string) ([]byte, error) {
	data, err := json.Marshal(typed)
	if err != nil || len(extra) == 0 {
		return data, err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if slices.Contains(typedKeys, k) {
			return nil, fmt.Errorf("extra policy key %q shadows a typed key", k)
		}
		raw := v.Raw
		if len(raw) == 0 {
			raw = []byte("null")
		}
		fields[k] = raw
	}
	// encoding/json sorts map keys, so the output is deterministic.
	return json.Marshal(fields)
}

func unmarshalWithExtra(data []byte, typed any, typedKeys []string) (map[string]apiextensionsv1.JSON, error) {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, nil
	}
	if err := json.Unmarshal(data, typed); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	var extra map[string]apiextensionsv1.JSON
	for k, v := range fields {
		if slices.Contains(typedKeys, k) {
			continue
		}
		if extra == nil {
			extra = map[string]apiextensionsv1.JSON{}
		}
		extra[k] = apiextensionsv1.JSON{Raw: append([]byte(nil), v...)}
	}
	return extra, nil
}
