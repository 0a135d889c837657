package torch

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// TestValidateTorchTune has one case per check of a torchtune TrainJob,
// each with its exact error, and the cases each check lets through.
func TestValidateTorchTune(t *testing.T) {
	var (
		namePath  = field.NewPath("spec", "runtimeRef", "name")
		nodesPath = field.NewPath("spec", "trainer", "numNodes")
		nppPath   = field.NewPath("spec", "trainer", "numProcPerNode")
		resPath   = field.NewPath("spec", "trainer", "resourcesPerNode")
		argsPath  = field.NewPath("spec", "trainer", "args")
	)
	const (
		supported = `spec.trainer.command ["tune", "run"] takes torchtune's model from the runtime's name, <prefix>-<model>-<size> as in torchtune-llama3.2-1b, and supports llama3_2/1B, llama3_2/3B, llama3_3/70B, qwen2_5/1.5B; `
		oneNode   = "must be 1 for model llama3_2/1B: of torchtune's models only llama3_3/70B has a multi-node config"
		noLoRA    = "must be 1 for LoRA and QLoRA (spec.trainer.args set model.lora_attn_modules or model.quantize_base=True): torchtune has no multi-node LoRA recipe; drop those args to fine-tune the whole model on several nodes"
		fromRTN   = " (the runtime's mlPolicy.numNodes applies while spec.trainer.numNodes is unset)"
		qwenQLoRA = "QLoRA (model.quantize_base=True in spec.trainer.args) is not supported for model qwen2_5/1.5B: torchtune has no QLoRA config for it; drop model.quantize_base to use LoRA, or use a llama3_2 or llama3_3 runtime"
		immutable = ": for tune run the runtime sets output_dir, tokenizer.path, tokenizer.merges_file, checkpointer.checkpoint_dir in its trainer command; remove it"
	)
	cases := []struct {
		name        string
		runtimeName string // torchtune-llama3.2-1b when empty
		runtime     func(*trainer.TrainingRuntimeSpec)
		trainer     trainer.Trainer
		want        field.ErrorList
	}{
		{name: "single device", trainer: trainer.Trainer{ResourcesPerNode: gpus("1"), Args: []string{"epochs=1"}}},
		{name: "the runtime's defaults"},
		{name: "each model by its runtime name, on one node",
			runtimeName: "torchtune-qwen2.5-1.5b", trainer: trainer.Trainer{Args: []string{loraArg}}},
		{name: "unsupported model", runtimeName: "torchtune-gemma2-2b",
			want: field.ErrorList{field.Invalid(namePath, "torchtune-gemma2-2b", supported+`"torchtune-gemma2-2b" gives model "gemma2/2B"`)}},
		{name: "a name that gives no model", runtimeName: "torchtune-llama3.2",
			want: field.ErrorList{field.Invalid(namePath, "torchtune-llama3.2", supported+`"torchtune-llama3.2" gives no model`)}},
		{name: "unsupported model on two nodes: only the model is reported", runtimeName: "my-tune",
			trainer: trainer.Trainer{NumNodes: ptr.To[int32](2)},
			want:    field.ErrorList{field.Invalid(namePath, "my-tune", supported+`"my-tune" gives no model`)}},
		{name: "two nodes of llama3.2-1b", trainer: trainer.Trainer{NumNodes: ptr.To[int32](2)},
			want: field.ErrorList{field.Invalid(nodesPath, int32(2), oneNode)}},
		{name: "two nodes of llama3.2-1b from the runtime",
			runtime: func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.NumNodes = ptr.To[int32](2) },
			want:    field.ErrorList{field.Invalid(nodesPath, int32(2), oneNode+fromRTN)}},
		{name: "the runtime's two nodes, overridden by the TrainJob's one",
			runtime: func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.NumNodes = ptr.To[int32](2) },
			trainer: trainer.Trainer{NumNodes: ptr.To[int32](1)}},
		{name: "two nodes of llama3.3-70b", runtimeName: "torchtune-llama3.3-70b",
			trainer: trainer.Trainer{NumNodes: ptr.To[int32](2)}},
		{name: "LoRA on two nodes of llama3.3-70b", runtimeName: "torchtune-llama3.3-70b",
			trainer: trainer.Trainer{NumNodes: ptr.To[int32](2), Args: []string{loraArg}},
			want:    field.ErrorList{field.Invalid(nodesPath, int32(2), noLoRA)}},
		{name: "QLoRA on two nodes of llama3.3-70b", runtimeName: "torchtune-llama3.3-70b",
			trainer: trainer.Trainer{NumNodes: ptr.To[int32](2), Args: []string{qloraArg}},
			want:    field.ErrorList{field.Invalid(nodesPath, int32(2), noLoRA)}},
		{name: "LoRA on the runtime's two nodes of llama3.3-70b", runtimeName: "torchtune-llama3.3-70b",
			runtime: func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.NumNodes = ptr.To[int32](2) },
			trainer: trainer.Trainer{Args: []string{loraArg}},
			want:    field.ErrorList{field.Invalid(nodesPath, int32(2), noLoRA+fromRTN)}},
		{name: "LoRA on two nodes of llama3.2-1b: both", trainer: trainer.Trainer{NumNodes: ptr.To[int32](2), Args: []string{loraArg}},
			want: field.ErrorList{field.Invalid(nodesPath, int32(2), oneNode), field.Invalid(nodesPath, int32(2), noLoRA)}},
		{name: "QLoRA with qwen2.5, on one device", runtimeName: "torchtune-qwen2.5-1.5b",
			trainer: trainer.Trainer{ResourcesPerNode: gpus("1"), Args: []string{qloraArg}},
			want:    field.ErrorList{field.Invalid(namePath, "torchtune-qwen2.5-1.5b", qwenQLoRA)}},
		{name: "QLoRA with qwen2.5, on two devices", runtimeName: "torchtune-qwen2.5-1.5b",
			trainer: trainer.Trainer{Args: []string{qloraArg}},
			want:    field.ErrorList{field.Invalid(namePath, "torchtune-qwen2.5-1.5b", qwenQLoRA)}},
		{name: "QLoRA with qwen2.5 on two nodes: the multi-node errors only", runtimeName: "torchtune-qwen2.5-1.5b",
			trainer: trainer.Trainer{NumNodes: ptr.To[int32](2), Args: []string{qloraArg}},
			want: field.ErrorList{
				field.Invalid(nodesPath, int32(2), "must be 1 for model qwen2_5/1.5B: of torchtune's models only llama3_3/70B has a multi-node config"),
				field.Invalid(nodesPath, int32(2), noLoRA),
			}},
		{name: "QLoRA and DoRA with qwen2.5 is DoRA", runtimeName: "torchtune-qwen2.5-1.5b",
			trainer: trainer.Trainer{Args: []string{qloraArg, "model.use_dora=True", loraArg}}},
		{name: "QLoRA with llama3.2-1b on one GPU", trainer: trainer.Trainer{ResourcesPerNode: gpus("1"), Args: []string{qloraArg}}},
		{name: "QLoRA with llama3.2-1b and nothing to resolve auto with: one device",
			trainer: trainer.Trainer{ResourcesPerNode: resources(nil, list("memory", "8Gi")), Args: []string{qloraArg}}},
		{name: "QLoRA with llama3.2-1b on four GPUs, numProcPerNode 1",
			trainer: trainer.Trainer{NumProcPerNode: ioi(1), ResourcesPerNode: gpus("4"), Args: []string{qloraArg}}},
		{name: "QLoRA with llama3.2-1b, numProcPerNode 2",
			trainer: trainer.Trainer{NumProcPerNode: ioi(2), ResourcesPerNode: gpus("1"), Args: []string{qloraArg}},
			want: field.ErrorList{field.Invalid(nppPath, 2,
				`must be 1, or "auto" on a node with 1 GPU, for QLoRA with model llama3_2/1B: torchtune has only a single-device QLoRA config for it (llama3_2/1B_qlora_single_device)`)}},
		{name: "QLoRA with llama3.2-1b, the runtime's numProcPerNode 2",
			runtime: func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.Torch.NumProcPerNode = ios("2") },
			trainer: trainer.Trainer{ResourcesPerNode: gpus("1"), Args: []string{qloraArg}},
			want: field.ErrorList{field.Invalid(nppPath, 2,
				`must be 1, or "auto" on a node with 1 GPU, for QLoRA with model llama3_2/1B: torchtune has only a single-device QLoRA config for it (llama3_2/1B_qlora_single_device) (the runtime's mlPolicy.torch.numProcPerNode applies while spec.trainer.numProcPerNode is unset)`)}},
		{name: "QLoRA with llama3.2-3b on four GPUs", runtimeName: "torchtune-llama3.2-3b",
			trainer: trainer.Trainer{ResourcesPerNode: gpus("4"), Args: []string{qloraArg}},
			want: field.ErrorList{field.Invalid(resPath, field.OmitValueType{},
				`must make 1 process per node for QLoRA with model llama3_2/3B, as torchtune has only a single-device QLoRA config for it (llama3_2/3B_qlora_single_device): numProcPerNode "auto" makes 4 from the resources of spec.trainer.resourcesPerNode; ask for 1 GPU per node, or set spec.trainer.numProcPerNode to 1`)}},
		{name: "QLoRA with llama3.2-1b on the runtime's two GPUs",
			trainer: trainer.Trainer{NumProcPerNode: ios("gpu"), Args: []string{qloraArg}},
			want: field.ErrorList{field.Invalid(resPath, field.OmitValueType{},
				`must make 1 process per node for QLoRA with model llama3_2/1B, as torchtune has only a single-device QLoRA config for it (llama3_2/1B_qlora_single_device): numProcPerNode "gpu" makes 2 from the resources of the runtime's trainer container (spec.trainer.resourcesPerNode is unset); ask for 1 GPU per node, or set spec.trainer.numProcPerNode to 1`)}},
		{name: "QLoRA with llama3.3-70b on four GPUs", runtimeName: "torchtune-llama3.3-70b",
			trainer: trainer.Trainer{ResourcesPerNode: gpus("4"), Args: []string{qloraArg}}},
		{name: "an invalid numProcPerNode is reported once, on its own",
			trainer: trainer.Trainer{NumProcPerNode: ios("many"), Args: []string{qloraArg}},
			want: field.ErrorList{field.Invalid(nppPath, "many",
				`must be a positive integer or one of "auto", "cpu", "gpu"`)}},
		{name: "the runtime's settings in the args",
			trainer: trainer.Trainer{ResourcesPerNode: gpus("1"), Args: []string{
				"output_dir=/tmp/out", "epochs=1", "tokenizer.path=/tmp/tok", "tokenizer.merges_file=/m",
				"checkpointer.checkpoint_dir", "output_dir_extra=1", "my.output_dir=/x"}},
			want: field.ErrorList{
				field.Invalid(argsPath.Index(0), "output_dir=/tmp/out", "must not set output_dir"+immutable),
				field.Invalid(argsPath.Index(2), "tokenizer.path=/tmp/tok", "must not set tokenizer.path"+immutable),
				field.Invalid(argsPath.Index(3), "tokenizer.merges_file=/m", "must not set tokenizer.merges_file"+immutable),
				field.Invalid(argsPath.Index(4), "checkpointer.checkpoint_dir", "must not set checkpointer.checkpoint_dir"+immutable),
			}},
		{name: "not torchtune: another command is not checked", runtimeName: "my-tune",
			trainer: trainer.Trainer{Command: []string{"tune", "run", "x"}, NumNodes: ptr.To[int32](2), Args: []string{"output_dir=/x", loraArg}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := tuneRuntime(t)
			if tc.runtime != nil {
				tc.runtime(spec)
			}
			name := tc.runtimeName
			if name == "" {
				name = "torchtune-llama3.2-1b"
			}
			job := tuneJob(name, tc.trainer)
			info := frameworktest.NewInfo(t, job, spec)
			warnings, errs, _ := New().(framework.Validator).Validate(context.Background(), framework.ValidateRequest{Info: info, NewJob: job})
			if len(warnings) != 0 {
				t.Errorf("warnings %q, want none", warnings)
			}
			if diff := cmp.Diff(tc.want, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateRuntimeCheckIsNotTorchTune: a runtime's own admission makes
// none of the torchtune checks, even for a runtime whose name gives no
// model: the TrainJob decides whether torchtune runs.
func TestValidateRuntimeCheckIsNotTorchTune(t *testing.T) {
	spec := tuneRuntime(t)
	spec.MLPolicy.NumNodes = ptr.To[int32](4)
	job := framework.RuntimeCheckJob("my-tune")
	info := frameworktest.NewInfo(t, job, spec)
	if _, errs, _ := New().(framework.Validator).Validate(context.Background(), framework.ValidateRequest{Info: info, NewJob: job}); len(errs) != 0 {
		t.Errorf("errors %v, want none", errs)
	}
}
