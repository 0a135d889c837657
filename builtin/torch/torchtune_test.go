package torch

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// tuneRuntime is the runtime of testdata/torchtune-llama3.2-1b.yaml,
// shaped like Kubeflow's: its trainer container asks for 2 GPUs and its
// command sets output_dir, tokenizer.path and checkpointer.checkpoint_dir
// among other items.
func tuneRuntime(t *testing.T) *trainer.TrainingRuntimeSpec {
	t.Helper()
	data, err := os.ReadFile("testdata/torchtune-llama3.2-1b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return frameworktest.Runtime(t, string(data))
}

// The settings of tuneRuntime's command that Torch carries over.
var tuneRuntimeSettings = []string{
	"output_dir=/workspace/output",
	"tokenizer.path=/workspace/model/original/tokenizer.model",
	"checkpointer.checkpoint_dir=/workspace/model",
}

// tuneJob is a torchtune TrainJob named tune for the runtime named
// runtimeName.
func tuneJob(runtimeName string, tr trainer.Trainer) *trainer.TrainJob {
	job := &trainer.TrainJob{}
	job.Name, job.Namespace = "tune", "team-a"
	job.Spec.RuntimeRef.Name = runtimeName
	if tr.Command == nil {
		tr.Command = TuneEntrypoint
	}
	job.Spec.Trainer = &tr
	return job
}

func gpus(n string) *corev1.ResourceRequirements {
	return resources(list("nvidia.com/gpu", n), nil)
}

// tuneCommand is the command Torch writes: tune run, then the given items,
// then tuneRuntimeSettings.
func tuneCommand(items ...string) []string {
	cmd := append([]string{"tune", "run"}, items...)
	return append(cmd, tuneRuntimeSettings...)
}

const rdzv = "--rdzv_endpoint=tune-node-0-0.tune:29500"

func TestTuneModel(t *testing.T) {
	cases := map[string]string{
		"torchtune-llama3.2-1b":       "llama3_2/1B",
		"torchtune-llama3.2-3b":       "llama3_2/3B",
		"torchtune-llama3.3-70b":      "llama3_3/70B",
		"torchtune-qwen2.5-1.5b":      "qwen2_5/1.5B",
		"any-gemma2-2b":               "gemma2/2B",
		"torchtune-llama3.2":          "",
		"torchtune-llama3.2-1b-extra": "",
		"":                            "",
	}
	for name, want := range cases {
		if got := tuneModel(name); got != want {
			t.Errorf("tuneModel(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestMethodOf(t *testing.T) {
	cases := []struct {
		args []string
		want tuneMethod
	}{
		{args: nil, want: tuneFull},
		{args: []string{"batch_size=32", "epochs=10"}, want: tuneFull},
		{args: []string{"model.lora_attn_modules=['q_proj','v_proj']"}, want: tuneLoRA},
		{args: []string{"model.quantize_base=True"}, want: tuneQLoRA},
		{args: []string{"model.quantize_base=true"}, want: tuneQLoRA},
		{args: []string{"model.quantize_base= TRUE "}, want: tuneQLoRA},
		{args: []string{"model.quantize_base=False"}, want: tuneFull},
		{args: []string{"model.quantize_base"}, want: tuneFull},
		{args: []string{"model.quantize_base=False", "model.lora_attn_modules=['q_proj']"}, want: tuneLoRA},
		{args: []string{"model.quantize_base=True", "model.use_dora=True"}, want: tuneFull},
		{args: []string{"model.quantize_base=True", "model.use_dora=True", "model.lora_attn_modules=['q_proj']"}, want: tuneLoRA},
		{args: []string{"model.quantize_base=True", "model.use_dora=False"}, want: tuneQLoRA},
	}
	for _, tc := range cases {
		if got := methodOf(tc.args); got != tc.want {
			t.Errorf("methodOf(%q) = %d, want %d", tc.args, got, tc.want)
		}
	}
}

const (
	loraArg  = "model.lora_attn_modules=['q_proj','v_proj']"
	qloraArg = "model.quantize_base=True"
)

// TestEnforceTorchTune has one case per recipe and config, and per rule
// of the rendezvous argument, through EnforceMLPolicy on a runtime shaped
// like Kubeflow's.
func TestEnforceTorchTune(t *testing.T) {
	cases := []struct {
		name        string
		runtimeName string // torchtune-llama3.2-1b when empty
		runtime     func(*trainer.TrainingRuntimeSpec)
		trainer     trainer.Trainer
		wantCommand []string
		wantNProc   string
		wantNodes   string
	}{
		{name: "one GPU: full, single device",
			trainer:     trainer.Trainer{ResourcesPerNode: gpus("1")},
			wantCommand: tuneCommand("full_finetune_single_device", "--config", "llama3_2/1B_full_single_device"),
			wantNProc:   "1"},
		{name: "one GPU: LoRA, single device",
			trainer:     trainer.Trainer{ResourcesPerNode: gpus("1"), Args: []string{loraArg}},
			wantCommand: tuneCommand("lora_finetune_single_device", "--config", "llama3_2/1B_lora_single_device"),
			wantNProc:   "1"},
		{name: "one GPU: QLoRA, single device",
			trainer:     trainer.Trainer{ResourcesPerNode: gpus("1"), Args: []string{qloraArg}},
			wantCommand: tuneCommand("lora_finetune_single_device", "--config", "llama3_2/1B_qlora_single_device"),
			wantNProc:   "1"},
		{name: "one GPU: DoRA turns QLoRA into LoRA",
			trainer:     trainer.Trainer{ResourcesPerNode: gpus("1"), Args: []string{qloraArg, "model.use_dora=True", loraArg}},
			wantCommand: tuneCommand("lora_finetune_single_device", "--config", "llama3_2/1B_lora_single_device"),
			wantNProc:   "1"},
		{name: "the runtime's two GPUs: full, distributed, with the rendezvous",
			wantCommand: tuneCommand(rdzv, "full_finetune_distributed", "--config", "llama3_2/1B_full"),
			wantNProc:   "2"},
		{name: "four GPUs: LoRA, distributed",
			trainer:     trainer.Trainer{ResourcesPerNode: gpus("4"), Args: []string{loraArg}},
			wantCommand: tuneCommand(rdzv, "lora_finetune_distributed", "--config", "llama3_2/1B_lora"),
			wantNProc:   "4"},
		{name: "four GPUs: QLoRA, distributed", runtimeName: "torchtune-llama3.3-70b",
			trainer:     trainer.Trainer{ResourcesPerNode: gpus("4"), Args: []string{qloraArg}},
			wantCommand: tuneCommand(rdzv, "lora_finetune_distributed", "--config", "llama3_3/70B_qlora"),
			wantNProc:   "4"},
		{name: "two nodes: full, multi-node", runtimeName: "torchtune-llama3.3-70b",
			trainer:     trainer.Trainer{NumNodes: ptr.To[int32](2), ResourcesPerNode: gpus("8")},
			wantCommand: tuneCommand(rdzv, "full_finetune_distributed", "--config", "llama3_3/70B_full_multinode"),
			wantNProc:   "8", wantNodes: "2"},
		{name: "two nodes of one GPU: multi-node, with the rendezvous", runtimeName: "torchtune-llama3.3-70b",
			trainer:     trainer.Trainer{NumNodes: ptr.To[int32](2), ResourcesPerNode: gpus("1")},
			wantCommand: tuneCommand(rdzv, "full_finetune_distributed", "--config", "llama3_3/70B_full_multinode"),
			wantNProc:   "1", wantNodes: "2"},
		{name: "two nodes from the runtime's numNodes", runtimeName: "torchtune-llama3.3-70b",
			runtime:     func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.NumNodes = ptr.To[int32](2) },
			wantCommand: tuneCommand(rdzv, "full_finetune_distributed", "--config", "llama3_3/70B_full_multinode"),
			wantNProc:   "2", wantNodes: "2"},
		{name: "two nodes: LoRA is dropped, as Kubeflow does (Validate rejects it)", runtimeName: "torchtune-llama3.3-70b",
			trainer:     trainer.Trainer{NumNodes: ptr.To[int32](2), Args: []string{loraArg}},
			wantCommand: tuneCommand(rdzv, "full_finetune_distributed", "--config", "llama3_3/70B_full_multinode"),
			wantNProc:   "2", wantNodes: "2"},
		{name: "numProcPerNode 1 on four GPUs: single device",
			trainer:     trainer.Trainer{NumProcPerNode: ioi(1), ResourcesPerNode: gpus("4")},
			wantCommand: tuneCommand("full_finetune_single_device", "--config", "llama3_2/1B_full_single_device"),
			wantNProc:   "1"},
		{name: "numProcPerNode 2 on one GPU: distributed",
			trainer:     trainer.Trainer{NumProcPerNode: ios("2"), ResourcesPerNode: gpus("1")},
			wantCommand: tuneCommand(rdzv, "full_finetune_distributed", "--config", "llama3_2/1B_full"),
			wantNProc:   "2"},
		{name: "the runtime's numProcPerNode",
			runtime:     func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.Torch.NumProcPerNode = ioi(1) },
			wantCommand: tuneCommand("full_finetune_single_device", "--config", "llama3_2/1B_full_single_device"),
			wantNProc:   "1"},
		{name: "gpu on two GPUs",
			trainer:     trainer.Trainer{NumProcPerNode: ios("gpu")},
			wantCommand: tuneCommand(rdzv, "full_finetune_distributed", "--config", "llama3_2/1B_full"),
			wantNProc:   "2"},
		{name: "auto on four CPUs and no GPU: distributed over the CPUs",
			trainer:     trainer.Trainer{ResourcesPerNode: resources(nil, list("cpu", "4"))},
			wantCommand: tuneCommand(rdzv, "full_finetune_distributed", "--config", "llama3_2/1B_full"),
			wantNProc:   "4"},
		{name: "auto with nothing to resolve it: one device",
			trainer:     trainer.Trainer{ResourcesPerNode: resources(nil, list("memory", "8Gi"))},
			wantCommand: tuneCommand("full_finetune_single_device", "--config", "llama3_2/1B_full_single_device"),
			wantNProc:   "auto"},
		{name: "the rendezvous honours the JobSet's network subdomain",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				s.Template.Spec.Network = &jobsetv1alpha2.Network{Subdomain: "tune-svc"}
			},
			wantCommand: tuneCommand("--rdzv_endpoint=tune-node-0-0.tune-svc:29500", "full_finetune_distributed", "--config", "llama3_2/1B_full"),
			wantNProc:   "2"},
		{name: "qwen2.5: the runtime's merges_file too", runtimeName: "torchtune-qwen2.5-1.5b",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				trainerContainer(s).Command = []string{"tune", "run", "full_finetune_distributed", "--config", "qwen2_5/1.5B_full",
					"dataset=torchtune.datasets.instruct_dataset", "output_dir=/workspace/output",
					"tokenizer.path=/workspace/model/vocab.json", "tokenizer.merges_file=/workspace/model/merges.txt",
					"checkpointer.checkpoint_dir=/workspace/model"}
			},
			trainer: trainer.Trainer{ResourcesPerNode: gpus("1")},
			wantCommand: []string{"tune", "run", "full_finetune_single_device", "--config", "qwen2_5/1.5B_full_single_device",
				"output_dir=/workspace/output", "tokenizer.path=/workspace/model/vocab.json",
				"tokenizer.merges_file=/workspace/model/merges.txt", "checkpointer.checkpoint_dir=/workspace/model"},
			wantNProc: "1"},
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
			if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
				t.Fatal(err)
			}
			_, c := trainerOrDie(t, info)
			if diff := cmp.Diff(tc.wantCommand, c.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.trainer.Args, c.Args); diff != "" {
				t.Errorf("args, which stay the TrainJob's (-want +got):\n%s", diff)
			}
			nodes := tc.wantNodes
			if nodes == "" {
				nodes = "1"
			}
			// No master variables: the rendezvous argument replaces them.
			wantEnv := []corev1.EnvVar{{Name: EnvNumNodes, Value: nodes}, {Name: EnvNumProcPerNode, Value: tc.wantNProc}, nodeRank()}
			if diff := cmp.Diff(wantEnv, c.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			wantPorts := []corev1.ContainerPort{{ContainerPort: 29500, Protocol: corev1.ProtocolTCP}}
			if diff := cmp.Diff(wantPorts, c.Ports); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
		})
	}
}

func trainerContainer(s *trainer.TrainingRuntimeSpec) *corev1.Container {
	for i := range s.Template.Spec.ReplicatedJobs {
		rj := &s.Template.Spec.ReplicatedJobs[i]
		if rj.Name == "node" {
			return &rj.Template.Spec.Template.Spec.Containers[0]
		}
	}
	panic("no trainer in the runtime")
}

// TestEnforceTorchTuneOnlyForTuneRun: only the exact command tune run is
// torchtune's; any other keeps its command and gets the master variables.
func TestEnforceTorchTuneOnlyForTuneRun(t *testing.T) {
	for _, cmd := range [][]string{nil, {"tune"}, {"tune", "run", "full_finetune_distributed"}, {"torchrun", "train.py"}} {
		spec := tuneRuntime(t)
		job := tuneJob("torchtune-llama3.2-1b", trainer.Trainer{})
		job.Spec.Trainer.Command = cmd
		info := frameworktest.NewInfo(t, job, spec)
		want := trainerContainer(spec).Command
		if cmd != nil {
			want = cmd
		}
		if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
			t.Fatal(err)
		}
		_, c := trainerOrDie(t, info)
		if diff := cmp.Diff(want, c.Command); diff != "" {
			t.Errorf("command %q: the trainer's command changed (-want +got):\n%s", cmd, diff)
		}
		if _, ok := env(c, EnvMasterAddr); !ok {
			t.Errorf("command %q: no %s", cmd, EnvMasterAddr)
		}
	}
}

// TestEnforceTorchTuneIsIdempotent: a second enforce on the same Info
// writes the same command, not one with the additions twice.
func TestEnforceTorchTuneIsIdempotent(t *testing.T) {
	job := tuneJob("torchtune-llama3.2-1b", trainer.Trainer{})
	info := frameworktest.NewInfo(t, job, tuneRuntime(t))
	p := New().(framework.MLPolicyEnforcer)
	for range 2 {
		if err := p.EnforceMLPolicy(context.Background(), info, job); err != nil {
			t.Fatal(err)
		}
	}
	_, c := trainerOrDie(t, info)
	if diff := cmp.Diff(tuneCommand(rdzv, "full_finetune_distributed", "--config", "llama3_2/1B_full"), c.Command); diff != "" {
		t.Errorf("command after two enforces (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(TuneEntrypoint, job.Spec.Trainer.Command); diff != "" {
		t.Errorf("the TrainJob's command changed (-want +got):\n%s", diff)
	}
}

func TestEnforceTorchTuneUnsupportedModel(t *testing.T) {
	job := tuneJob("my-runtime", trainer.Trainer{})
	info := frameworktest.NewInfo(t, job, tuneRuntime(t))
	err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job)
	want := `spec.runtimeRef.name: Invalid value: "my-runtime": spec.trainer.command ["tune", "run"] takes torchtune's model from the runtime's name, <prefix>-<model>-<size> as in torchtune-llama3.2-1b, and supports llama3_2/1B, llama3_2/3B, llama3_3/70B, qwen2_5/1.5B; "my-runtime" gives no model`
	if err == nil || err.Error() != want {
		t.Errorf("error %v,\nwant %s", err, want)
	}
}

// TestRuntimeOverrides: the runtime settings come from the trainer
// container's command in the template, after runtimePatches, and from
// nowhere else.
func TestRuntimeOverrides(t *testing.T) {
	patch := func(command ...string) trainer.RuntimePatch {
		raw := `{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"containers":[{"name":"node","command":` + jsonList(command) + `}]}}}}}]}}`
		return trainer.RuntimePatch{Manager: "test", TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{Template: &apiextensionsv1.JSON{Raw: []byte(raw)}}}
	}
	cases := []struct {
		name    string
		runtime func(*trainer.TrainingRuntimeSpec)
		patches []trainer.RuntimePatch
		want    []string
	}{
		{name: "the runtime's settings, in order", want: tuneRuntimeSettings},
		{name: "a runtimePatch's command", patches: []trainer.RuntimePatch{patch("tune", "run", "output_dir=/mnt/out", "tokenizer.path=/mnt/tok")},
			want: []string{"output_dir=/mnt/out", "tokenizer.path=/mnt/tok"}},
		{name: "only whole keys",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				trainerContainer(s).Command = []string{"output_dir_extra=/x", "--output_dir=/y", "my.output_dir=/z", "output_dir", "checkpointer.checkpoint_dir=/ok"}
			},
			want: []string{"output_dir", "checkpointer.checkpoint_dir=/ok"}},
		{name: "not from the runtime's args",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				c := trainerContainer(s)
				c.Command, c.Args = []string{"tune", "run"}, []string{"output_dir=/workspace/output"}
			}},
		{name: "not from another container",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				c := trainerContainer(s)
				c.Command = nil
				pod := &s.Template.Spec.ReplicatedJobs[2].Template.Spec.Template.Spec
				pod.Containers = append(pod.Containers, corev1.Container{Name: "sidecar", Image: "busybox", Command: []string{"output_dir=/side"}})
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := tuneRuntime(t)
			if tc.runtime != nil {
				tc.runtime(spec)
			}
			job := tuneJob("torchtune-llama3.2-1b", trainer.Trainer{ResourcesPerNode: gpus("1")})
			job.Spec.RuntimePatches = tc.patches
			info := frameworktest.NewInfo(t, job, spec)
			if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
				t.Fatal(err)
			}
			_, c := trainerOrDie(t, info)
			want := append([]string{"tune", "run", "full_finetune_single_device", "--config", "llama3_2/1B_full_single_device"}, tc.want...)
			if diff := cmp.Diff(want, c.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
		})
	}
}

func jsonList(items []string) string {
	out := "["
	for i, s := range items {
		if i > 0 {
			out += ","
		}
		out += `"` + s + `"`
	}
	return out + "]"
}
