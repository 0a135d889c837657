package torch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// TuneEntrypoint is the spec.trainer.command of a torchtune TrainJob, as
// the Kubeflow SDK writes it. Torch completes it into a whole `tune run`
// command line; any other command is left alone.
var TuneEntrypoint = []string{"tune", "run"}

// The options of `tune run` that Torch writes.
const (
	tuneArgRdzvEndpoint = "--rdzv_endpoint"
	tuneArgConfig       = "--config"
)

// torchtune's recipes.
const (
	recipeFullSingleDevice = "full_finetune_single_device"
	recipeFullDistributed  = "full_finetune_distributed"
	recipeLoRASingleDevice = "lora_finetune_single_device"
	recipeLoRADistributed  = "lora_finetune_distributed"
)

// The suffixes that turn a model into the name of one of its torchtune
// configs (llama3_2/1B + _lora = llama3_2/1B_lora).
const (
	configFullSingleDevice  = "_full_single_device"
	configFull              = "_full"
	configFullMultiNode     = "_full_multinode"
	configLoRASingleDevice  = "_lora_single_device"
	configQLoRASingleDevice = "_qlora_single_device"
	configLoRA              = "_lora"
	configQLoRA             = "_qlora"
)

// The config items of spec.trainer.args that choose a LoRA recipe.
const (
	argLoRAAttnModules = "model.lora_attn_modules"
	argQuantizeBase    = "model.quantize_base"
	argUseDoRA         = "model.use_dora"
)

// The models Torch writes torchtune commands for, as the runtime's name
// gives them (tuneModel).
const (
	modelLlama32_1B  = "llama3_2/1B"
	modelLlama32_3B  = "llama3_2/3B"
	modelLlama33_70B = "llama3_3/70B"
	modelQwen25_1_5B = "qwen2_5/1.5B"
)

// tuneModels are the supported models, in the order messages list them.
var tuneModels = []string{modelLlama32_1B, modelLlama32_3B, modelLlama33_70B, modelQwen25_1_5B}

// tuneRuntimeConfigs are the config items that the runtime sets in its
// trainer container's command: where the model, its tokenizer and the
// output are, which only the runtime's volumes know. Torch carries them
// into the command it writes; a TrainJob must not set them.
var tuneRuntimeConfigs = []string{"output_dir", "tokenizer.path", "tokenizer.merges_file", "checkpointer.checkpoint_dir"}

// isTorchTune reports whether the TrainJob asks for a torchtune run.
func isTorchTune(job *trainer.TrainJob) bool {
	return job != nil && job.Spec.Trainer != nil && slices.Equal(job.Spec.Trainer.Command, TuneEntrypoint)
}

// tuneModel returns the model that a runtime's name gives, as Kubeflow
// reads it: a name of exactly three '-'-separated parts,
// <prefix>-<family>-<size>, gives <family with '_' for '.'>/<SIZE in upper
// case>, so torchtune-llama3.2-1b gives llama3_2/1B. Any other name gives
// "".
func tuneModel(runtimeName string) string {
	parts := strings.Split(runtimeName, "-")
	if len(parts) != 3 {
		return ""
	}
	return strings.ReplaceAll(parts[1], ".", "_") + "/" + strings.ToUpper(parts[2])
}

// tuneMethod is how much of the model a run trains.
type tuneMethod int

const (
	tuneFull tuneMethod = iota
	tuneLoRA
	tuneQLoRA
)

// methodOf returns the method that the TrainJob's args choose: QLoRA when
// one sets model.quantize_base to true and none sets model.use_dora to
// true (DoRA is a LoRA variant torchtune does not quantize); else LoRA
// when one names model.lora_attn_modules; else full fine-tuning.
func methodOf(args []string) tuneMethod {
	switch {
	case boolArgSet(args, argQuantizeBase) && !boolArgSet(args, argUseDoRA):
		return tuneQLoRA
	case slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, argLoRAAttnModules) }):
		return tuneLoRA
	}
	return tuneFull
}

// boolArgSet reports whether an arg key=value has a key that contains item
// and the value true, in any case, as Python writes it (True).
func boolArgSet(args []string, item string) bool {
	for _, a := range args {
		key, value, ok := strings.Cut(a, "=")
		if ok && strings.Contains(key, item) && strings.EqualFold(strings.TrimSpace(value), "true") {
			return true
		}
	}
	return false
}

// tuneRun is what decides torchtune's recipe and config.
type tuneRun struct {
	model   string
	nodes   int32
	devices int
	method  tuneMethod
}

// newTuneRun describes the run of a torchtune TrainJob on nodes pods that
// each run nproc processes (PET_NPROC_PER_NODE).
func newTuneRun(job *trainer.TrainJob, nodes int32, nproc string) tuneRun {
	return tuneRun{
		model:   tuneModel(job.Spec.RuntimeRef.Name),
		nodes:   nodes,
		devices: devicesPerNode(nproc),
		method:  methodOf(job.Spec.Trainer.Args),
	}
}

// devicesPerNode is the number of processes per node that torchtune plans
// for: PET_NPROC_PER_NODE, or 1 when it stays a keyword ("auto" on a node
// that asks for neither GPUs nor CPUs, "gpu" on one without GPUs), which is
// what Kubeflow counts for a node without either.
func devicesPerNode(nproc string) int {
	if n, err := strconv.Atoi(nproc); err == nil && n > 0 {
		return n
	}
	return 1
}

// singleDevice reports whether the run has one process in all.
func (r tuneRun) singleDevice() bool { return r.nodes == 1 && r.devices == 1 }

// recipe returns torchtune's recipe and config for the run. Several nodes
// always fine-tune the whole model (Validate rejects LoRA there).
func (r tuneRun) recipe() (recipe, config string) {
	var suffix string
	switch {
	case r.nodes > 1:
		recipe, suffix = recipeFullDistributed, configFullMultiNode
	case r.devices == 1 && r.method == tuneQLoRA:
		recipe, suffix = recipeLoRASingleDevice, configQLoRASingleDevice
	case r.devices == 1 && r.method == tuneLoRA:
		recipe, suffix = recipeLoRASingleDevice, configLoRASingleDevice
	case r.devices == 1:
		recipe, suffix = recipeFullSingleDevice, configFullSingleDevice
	case r.method == tuneQLoRA:
		recipe, suffix = recipeLoRADistributed, configQLoRA
	case r.method == tuneLoRA:
		recipe, suffix = recipeLoRADistributed, configLoRA
	default:
		recipe, suffix = recipeFullDistributed, configFull
	}
	return recipe, r.model + suffix
}

// torchTuneCommand returns the trainer container's command for a torchtune
// TrainJob: tune run, the rendezvous on the first pod when the run has more
// than one process, the recipe and its config, then the runtime's own
// settings (tuneRuntimeConfigs) from its trainer command.
func torchTuneCommand(info *framework.Info, job *trainer.TrainJob, ps *framework.PodSet, c *framework.Container, nodes int32, nproc, master string) ([]string, error) {
	run := newTuneRun(job, nodes, nproc)
	if !slices.Contains(tuneModels, run.model) {
		return nil, field.Invalid(runtimeNamePath, job.Spec.RuntimeRef.Name, unsupportedModelDetail(job.Spec.RuntimeRef.Name, run.model))
	}
	cmd := slices.Clone(TuneEntrypoint)
	if !run.singleDevice() {
		cmd = append(cmd, fmt.Sprintf("%s=%s:%d", tuneArgRdzvEndpoint, master, MasterPort))
	}
	recipe, config := run.recipe()
	cmd = append(cmd, recipe, tuneArgConfig, config)
	overrides, err := runtimeOverrides(info, ps.Name, c.Name)
	if err != nil {
		return nil, err
	}
	return append(cmd, overrides...), nil
}

// runtimeOverrides returns the items of the runtime's command for the
// given container of the given replicatedJob that set one of
// tuneRuntimeConfigs, in their order. It reads the template (after the
// TrainJob's runtimePatches), since Info's container already holds the
// TrainJob's command.
func runtimeOverrides(info *framework.Info, jobName, containerName string) ([]string, error) {
	tmpl, err := info.TemplateSpec()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rj := range tmpl.Spec.ReplicatedJobs {
		if rj.Name != jobName {
			continue
		}
		for _, c := range rj.Template.Spec.Template.Spec.Containers {
			if c.Name != containerName {
				continue
			}
			for _, item := range c.Command {
				if key, _, _ := strings.Cut(item, "="); slices.Contains(tuneRuntimeConfigs, key) {
					out = append(out, item)
				}
			}
		}
	}
	return out, nil
}
