package torch

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// Field paths of the TrainJob that Validate names.
var (
	runtimeNamePath      = field.NewPath("spec", "runtimeRef", "name")
	trainJobNumNodesPath = field.NewPath("spec", "trainer", "numNodes")
	trainJobArgsPath     = field.NewPath("spec", "trainer", "args")
	trainJobResPath      = field.NewPath("spec", "trainer", "resourcesPerNode")
)

// Validate rejects a TrainJob that sets a PET_* variable in
// spec.trainer.env or an invalid spec.trainer.numProcPerNode, a runtime
// whose envInjection names a replicatedJob or container it does not have,
// and a torchtune TrainJob (spec.trainer.command ["tune", "run"]) that
// torchtune cannot run (validateTorchTune).
//
// The runtime's mlPolicy.torch.numProcPerNode is checked too, with the
// path spec.mlPolicy.torch.numProcPerNode, whenever it is the value in
// effect: when newJob is nil or the runtime's stand-in (a runtime is
// validated) or sets no numProcPerNode. A runtime value
// that the TrainJob overrides cannot break the job, so it does not block
// it. When info is given, a runtime whose trainer step or trainer
// container is missing is reported on spec.runtimeRef of a TrainJob, or on
// spec.template of the runtime itself. The stand-in sets no command, so
// the torchtune checks, which are about what the TrainJob asks for, never
// run for a runtime alone. info and newJob may be nil.
func (*plugin) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	info, newJob := req.Info, req.NewJob
	var errs field.ErrorList
	var t *trainer.Trainer
	if newJob != nil {
		t = newJob.Spec.Trainer
	}
	if t != nil {
		envPath := field.NewPath("spec", "trainer", "env")
		for i, v := range t.Env {
			if strings.HasPrefix(v.Name, EnvPrefix) {
				errs = append(errs, field.Forbidden(envPath.Index(i).Child("name"),
					fmt.Sprintf("the Torch plugin sets the %s* variables itself (%s, %s, %s, %s, %s); use spec.trainer.numNodes and spec.trainer.numProcPerNode instead",
						EnvPrefix, EnvNumNodes, EnvNumProcPerNode, EnvNodeRank, EnvMasterAddr, EnvMasterPort)))
			}
		}
		if t.NumProcPerNode != nil {
			if err := validateNumProcPerNode(*t.NumProcPerNode, trainJobNumProcPath); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if info == nil {
		return nil, errs, nil
	}
	policy, err := info.MLPolicy()
	if err != nil {
		return nil, append(errs, field.InternalError(field.NewPath("spec", "mlPolicy"), err)), nil
	}
	if (t == nil || t.NumProcPerNode == nil) && policy != nil && policy.Torch != nil && policy.Torch.NumProcPerNode != nil {
		if err := validateNumProcPerNode(*policy.Torch.NumProcPerNode, runtimeNumProcPath); err != nil {
			errs = append(errs, err)
		}
	}
	if newJob != nil {
		if _, _, err := info.Trainer(); err != nil {
			if req.IsRuntime() {
				errs = append(errs, field.Invalid(field.NewPath("spec", "template"), "", err.Error()))
			} else {
				errs = append(errs, field.Invalid(field.NewPath("spec", "runtimeRef"), newJob.Spec.RuntimeRef.Name, err.Error()))
			}
		}
	}
	_, injectionErrs := injectionTargets(info, policy)
	errs = append(errs, injectionErrs...)
	if isTorchTune(newJob) {
		errs = append(errs, validateTorchTune(info, newJob, policy)...)
	}
	errs = append(errs, validateElastic(req, policy)...)
	return nil, errs, nil
}

// validateTorchTune makes Kubeflow's checks of a torchtune TrainJob: the
// runtime's name gives a supported model; only llama3_3/70B runs on
// several nodes; QLoRA is not for qwen2_5/1.5B, and for the llama3_2
// models only on one device; LoRA is not for several nodes; the args do not
// set what the runtime sets (tuneRuntimeConfigs). The node count and the
// devices per node are the ones EnforceMLPolicy uses, the runtime's when
// the TrainJob sets none.
func validateTorchTune(info *framework.Info, job *trainer.TrainJob, policy *trainer.MLPolicy) field.ErrorList {
	var errs field.ErrorList
	t := job.Spec.Trainer
	name := job.Spec.RuntimeRef.Name
	model := tuneModel(name)
	if !slices.Contains(tuneModels, model) {
		errs = append(errs, field.Invalid(runtimeNamePath, name, unsupportedModelDetail(name, model)))
	}
	for i, arg := range t.Args {
		if key, _, _ := strings.Cut(arg, "="); slices.Contains(tuneRuntimeConfigs, key) {
			errs = append(errs, field.Invalid(trainJobArgsPath.Index(i), arg,
				fmt.Sprintf("must not set %s: for tune run the runtime sets %s in its trainer command; remove it",
					key, strings.Join(tuneRuntimeConfigs, ", "))))
		}
	}
	nodes, err := framework.TrainerNumNodes(job, policy)
	if err != nil {
		// Not Torch's field to report: the runtime or the API rejects it.
		return errs
	}
	var fromRuntime string
	if t.NumNodes == nil {
		fromRuntime = " (the runtime's mlPolicy.numNodes applies while spec.trainer.numNodes is unset)"
	}
	method := methodOf(t.Args)
	// An unsupported model is reported above, and has no config at all.
	if nodes > 1 && model != modelLlama33_70B && slices.Contains(tuneModels, model) {
		errs = append(errs, field.Invalid(trainJobNumNodesPath, nodes,
			fmt.Sprintf("must be 1 for model %s: of torchtune's models only %s has a multi-node config%s", model, modelLlama33_70B, fromRuntime)))
	}
	if nodes > 1 && method != tuneFull {
		errs = append(errs, field.Invalid(trainJobNumNodesPath, nodes,
			fmt.Sprintf("must be 1 for LoRA and QLoRA (spec.trainer.args set %s or %s=True): torchtune has no multi-node LoRA recipe; drop those args to fine-tune the whole model on several nodes%s",
				argLoRAAttnModules, argQuantizeBase, fromRuntime)))
	}
	if nodes != 1 || method != tuneQLoRA {
		return errs
	}
	if model == modelQwen25_1_5B {
		errs = append(errs, field.Invalid(runtimeNamePath, name,
			fmt.Sprintf("QLoRA (%s=True in spec.trainer.args) is not supported for model %s: torchtune has no QLoRA config for it; drop %s to use LoRA, or use a llama3_2 or llama3_3 runtime",
				argQuantizeBase, model, argQuantizeBase)))
	}
	if model == modelLlama32_1B || model == modelLlama32_3B {
		if err := qloraSingleDeviceError(info, job, policy, model); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// qloraSingleDeviceError returns an error when a QLoRA run of a model that
// torchtune quantizes on one device only would have several processes: on
// spec.trainer.numProcPerNode when an integer decides their number, else on
// spec.trainer.resourcesPerNode, whose GPUs (or CPUs) do.
func qloraSingleDeviceError(info *framework.Info, job *trainer.TrainJob, policy *trainer.MLPolicy, model string) *field.Error {
	_, c, err := info.Trainer()
	if err != nil {
		return nil // reported on spec.runtimeRef
	}
	npp, nppPath := numProcPerNode(job, policy)
	n, keyword, ok := parseNumProcPerNode(npp)
	if !ok {
		return nil // reported on its own path
	}
	nproc := ResolveNumProcPerNode(npp, c.Resources)
	if devicesPerNode(nproc) == 1 {
		return nil
	}
	only := model + configQLoRASingleDevice
	if keyword == "" {
		var fromRuntime string
		if nppPath == runtimeNumProcPath {
			fromRuntime = " (the runtime's mlPolicy.torch.numProcPerNode applies while spec.trainer.numProcPerNode is unset)"
		}
		return field.Invalid(trainJobNumProcPath, n,
			fmt.Sprintf("must be 1, or \"auto\" on a node with 1 GPU, for QLoRA with model %s: torchtune has only a single-device QLoRA config for it (%s)%s", model, only, fromRuntime))
	}
	from := "spec.trainer.resourcesPerNode"
	if job.Spec.Trainer.ResourcesPerNode == nil {
		from = "the runtime's trainer container (spec.trainer.resourcesPerNode is unset)"
	}
	return field.Invalid(trainJobResPath, field.OmitValueType{},
		fmt.Sprintf("must make 1 process per node for QLoRA with model %s, as torchtune has only a single-device QLoRA config for it (%s): numProcPerNode %q makes %s from the resources of %s; ask for 1 GPU per node, or set spec.trainer.numProcPerNode to 1",
			model, only, keyword, nproc, from))
}

// unsupportedModelDetail says why a runtime name gives no supported model
// and which names would.
func unsupportedModelDetail(name, model string) string {
	return fmt.Sprintf(`spec.trainer.command ["tune", "run"] takes torchtune's model from the runtime's name, <prefix>-<model>-<size> as in torchtune-llama3.2-1b, and supports %s; %q gives %s`,
		strings.Join(tuneModels, ", "), name, modelName(model))
}

// modelName is the model for a message: model "x", or no model.
func modelName(model string) string {
	if model == "" {
		return "no model"
	}
	return "model " + strconv.Quote(model)
}

var errTorchTuneElastic = field.Invalid(field.NewPath("spec", "trainer", "command"), []string{"tune", "run"},
	"tune run takes a fixed-size rendezvous on its command line: it cannot run with the runtime's mlPolicy.torch.elasticPolicy; use torchrun, or a runtime without elasticPolicy")

// validateElastic checks an elastic job (mlPolicy.torch.elasticPolicy):
// a runtime's bounds when one of them is its numNodes, a new TrainJob's
// numNodes (the TrainJob's, else the runtime's) within them, no
// torchtune, and the metrics of its autoscaler by the
// HorizontalPodAutoscaler's own rules (for a runtime, and for a new
// TrainJob of a runtime created before they were checked).
//
// A resize is the CRD's to check, not this webhook's: its rule on
// TrainJob holds spec.trainer.numNodes within the bounds the controller
// recorded in status.nodes, or unchanged for a job that is not elastic,
// for an update and a write of the scale subresource alike, which this
// webhook does not see. The CRD also holds minNodes, maxNodes and
// numNodes at 1 or more and minNodes at most maxNodes.
func validateElastic(req framework.ValidateRequest, policy *trainer.MLPolicy) field.ErrorList {
	job := req.NewJob
	if job == nil || req.OldJob != nil {
		return nil
	}
	nodes, err := framework.TrainerNumNodes(job, policy)
	if err != nil {
		return nil // not Torch's field to report
	}
	bounds, elastic := elasticBounds(policy, nodes)
	if !elastic {
		return nil
	}
	if isTorchTune(job) {
		return field.ErrorList{errTorchTuneElastic}
	}
	errs := trainer.ValidateElasticMetrics(policy.Torch.ElasticPolicy.Metrics, elasticPolicyPath.Child("metrics"))
	if req.IsRuntime() {
		// A TrainJob may bring its own numNodes: only the range itself
		// is the runtime's to get right, when a bound it leaves unset
		// (its numNodes) falls outside the one it sets.
		if bounds.Max < bounds.Min && (policy.Torch.ElasticPolicy.MinNodes == nil) != (policy.Torch.ElasticPolicy.MaxNodes == nil) {
			errs = append(errs, boundsError(policy, bounds, nodes, false, true))
		}
		return errs
	}
	if err := boundsError(policy, bounds, nodes, job.Spec.Trainer == nil || job.Spec.Trainer.NumNodes == nil, false); err != nil {
		errs = append(errs, err)
	}
	return errs
}
