// Package torch is the Torch plugin: PyTorch distributed training with
// torchrun, and fine-tuning with torchtune's `tune run`.
//
// Torch owns the runtimes whose mlPolicy sets the torch key. For such a
// runtime it changes the trainer step (the replicatedJob labelled
// trainer.kubeflow.org/trainjob-ancestor-step=trainer, or for older
// runtimes the one named "node" or "trainer-node") and its trainer
// container (the container named "node", else "trainer", else the only
// one):
//
//   - The number of trainer pods is the TrainJob's spec.trainer.numNodes,
//     else the runtime's mlPolicy.numNodes, else 1.
//   - The TrainJob's spec.trainer.env is merged into the trainer container.
//   - torchrun reads its options from PET_* variables, which Torch sets:
//     PET_NNODES (the number of pods), PET_NPROC_PER_NODE (see below),
//     PET_NODE_RANK (the pod's Job completion index, read from its
//     batch.kubernetes.io/job-completion-index annotation),
//     PET_MASTER_ADDR (the DNS name of the first trainer pod,
//     <trainjob>-<replicatedJob>-0-0.<subdomain>, where the subdomain is
//     the JobSet's network subdomain, else the TrainJob's name) and
//     PET_MASTER_PORT (29500). The container also gets port 29500.
//
// PET_NPROC_PER_NODE comes from the TrainJob's spec.trainer.numProcPerNode,
// else the runtime's mlPolicy.torch.numProcPerNode, else "auto", resolved
// against the trainer container's resources (resourcesPerNode when the
// TrainJob sets it; limits first, else requests):
//
//   - an integer, or a string holding one such as "5", is used as is;
//   - "gpu" becomes the number of GPUs of one node (any resource whose name
//     ends in "gpu", such as nvidia.com/gpu or amd.com/gpu), and stays
//     "gpu" when the container asks for none;
//   - "cpu" becomes the number of CPUs of one node, rounded down and at
//     least 1 (1 when the container sets no CPU);
//   - "auto" becomes the GPU count when GPUs are asked for, else the CPU
//     count when CPUs are set, else stays "auto" for torchrun to resolve.
//
// Anything else (0, a negative number, "abc") is rejected.
//
// # envInjection
//
// The runtime's mlPolicy.torch.envInjection names other containers that
// need to know the job's shape too, such as an init container that waits
// for the first trainer pod or a sidecar that reports the rank: each
// target names a replicatedJob (jobName) and containers of its pods
// (containerNames), regular or init containers, regular ones first when
// both have the name. Each gets PET_NNODES, PET_NPROC_PER_NODE,
// PET_NODE_RANK, PET_MASTER_ADDR and PET_MASTER_PORT, with the values the
// trainer container gets (PET_NODE_RANK is the rank of the pod it runs
// in), the master variables included even for torchtune, whose main
// container goes without them. A target the runtime does not have, or the
// trainer's main container (which gets the variables anyway), is an error
// of Validate and of EnforceMLPolicy, on
// spec.mlPolicy.torch.envInjection.targets[i].jobName or
// .containerNames[j], that lists the names the runtime has.
//
// # Elastic jobs
//
// A runtime with mlPolicy.torch.elasticPolicy makes the job elastic: its
// size, spec.trainer.numNodes, may change while it runs, within
// [minNodes, maxNodes] (each the job's size when unset). Torch then marks
// the trainer PodSet elastic (Info.PodSet.Elastic, the range), which has
// the JobSet plugin resize the trainer Job in place, and writes, instead of
// PET_NNODES=<count>, variables that do not depend on the size, so that a
// resize leaves the pod template as it is: PET_NNODES=<min>:<max>,
// PET_RDZV_BACKEND=c10d, PET_RDZV_ENDPOINT=<first trainer pod's FQDN>:29500,
// PET_RDZV_ID=<the TrainJob's UID> and PET_MAX_RESTARTS (maxRestarts, else
// DefaultMaxRestarts), with PET_NPROC_PER_NODE, PET_NODE_RANK and the
// master variables as for any job; envInjection targets get the same. A
// count outside the range is an invalid job; Validate rejects it on
// spec.trainer.numNodes, a runtime whose minNodes exceeds maxNodes on
// spec.mlPolicy.torch.elasticPolicy, a change of numNodes of a job that is
// not elastic, and a torchtune job with an elastic runtime (tune run takes
// a fixed-size rendezvous on its command line). With elasticPolicy.metrics,
// Build returns a HorizontalPodAutoscaler named as the TrainJob that
// targets the TrainJob's scale subresource, minReplicas minNodes and
// maxReplicas maxNodes. A runtime without elasticPolicy is unchanged:
// same variables, no autoscaler.
//
// # torchtune
//
// A TrainJob whose spec.trainer.command is exactly ["tune", "run"] (as the
// Kubeflow SDK writes it for its torchtune runtimes) asks for torchtune.
// Torch then writes the trainer container's whole command, as Kubeflow
// Trainer v2.3 does:
//
//	tune run [--rdzv_endpoint=<first trainer pod>:29500] <recipe> --config <config> <runtime settings>
//
// where:
//
//   - The rendezvous argument is there when the run has more than one
//     process: several nodes, or more than one process per node. The
//     processes per node are PET_NPROC_PER_NODE, resolved as above, or 1
//     while it stays a keyword ("auto" or "gpu" with nothing to resolve
//     it). The first trainer pod's name is PET_MASTER_ADDR's, which the
//     main container does not get, nor PET_MASTER_PORT: the argument takes
//     their place. It keeps the other PET_* variables and port 29500.
//   - The model is read from the runtime's name, which must have exactly
//     three '-'-separated parts, <prefix>-<family>-<size>: the family with
//     '_' for '.', a '/', the size in upper case (torchtune-llama3.2-1b
//     gives llama3_2/1B). Supported: llama3_2/1B, llama3_2/3B,
//     llama3_3/70B, qwen2_5/1.5B; EnforceMLPolicy fails for another.
//   - The method comes from spec.trainer.args: QLoRA when an arg
//     model.quantize_base=<true in any case> is there and none sets
//     model.use_dora to true; else LoRA when an arg mentions
//     model.lora_attn_modules; else full fine-tuning.
//   - The recipe and config (the model followed by a suffix): on several
//     nodes full_finetune_distributed with <model>_full_multinode; on one
//     node with one process full_finetune_single_device with
//     _full_single_device, or lora_finetune_single_device with
//     _lora_single_device or _qlora_single_device; on one node with
//     several processes full_finetune_distributed with _full, or
//     lora_finetune_distributed with _lora or _qlora.
//   - The runtime settings are the items of the runtime's own trainer
//     command (after the TrainJob's runtimePatches) that set output_dir,
//     tokenizer.path, tokenizer.merges_file or checkpointer.checkpoint_dir,
//     in their order: where the runtime's volumes put the model, its
//     tokenizer and the output. The rest of the runtime's command is
//     replaced, and the TrainJob's args stay the container's args.
//
// # Admission
//
// On admission, Torch rejects a TrainJob whose spec.trainer.env sets a
// PET_* variable (Torch owns them: they would be overwritten) and an
// invalid numProcPerNode. It also checks the runtime's
// mlPolicy.torch.numProcPerNode whenever that value is the one in effect,
// that is when the TrainJob sets no numProcPerNode of its own, and the
// runtime's envInjection. A torchtune TrainJob is rejected when the
// runtime's name gives no supported model (on spec.runtimeRef.name); when
// it runs on several nodes and the model is not llama3_3/70B, or uses LoRA
// or QLoRA (on spec.trainer.numNodes, also when the runtime's numNodes is
// the one in effect); when it uses QLoRA with qwen2_5/1.5B (on
// spec.runtimeRef.name), or with llama3_2/1B or llama3_2/3B and more than
// one process per node (on spec.trainer.numProcPerNode when an integer
// sets the number, else on spec.trainer.resourcesPerNode); and when an arg
// sets one of the runtime settings above (on spec.trainer.args[i]). For a
// runtime's own admission (framework.ValidateRuntime) only the runtime is
// checked: its numProcPerNode, its envInjection and its trainer step, a
// missing one reported on spec.template, the runtime's field, rather than
// on a TrainJob's spec.runtimeRef. The torchtune checks are about what a
// TrainJob asks for, so they never run for a runtime alone.
package torch

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// Name is the plugin's name in the configuration file.
const Name = "Torch"

// Version is the plugin's version.
const Version = "v0.1.0"

// PolicyKey is the mlPolicy key Torch owns.
const PolicyKey = "torch"

// The variables through which torchrun receives its options.
const (
	// EnvPrefix starts the name of every variable Torch owns.
	EnvPrefix = "PET_"
	// EnvNumNodes is the number of trainer pods.
	EnvNumNodes = "PET_NNODES"
	// EnvNumProcPerNode is the number of processes per pod (an integer,
	// or "gpu" or "auto" for torchrun to resolve).
	EnvNumProcPerNode = "PET_NPROC_PER_NODE"
	// EnvNodeRank is the rank of the pod, its Job completion index.
	EnvNodeRank = "PET_NODE_RANK"
	// EnvMasterAddr is the DNS name of the first trainer pod.
	EnvMasterAddr = "PET_MASTER_ADDR"
	// EnvMasterPort is the port of the rendezvous on the first pod.
	EnvMasterPort = "PET_MASTER_PORT"
)

// MasterPort is the rendezvous port, also opened on the trainer container.
const MasterPort int32 = 29500

// The keyword values of numProcPerNode.
const (
	NumProcPerNodeAuto = "auto"
	NumProcPerNodeCPU  = "cpu"
	NumProcPerNodeGPU  = "gpu"
)

// New returns the Torch plugin.
func New() framework.Plugin { return &plugin{} }

type plugin struct{}

var (
	_ framework.MLPolicyEnforcer = (*plugin)(nil)
	_ framework.Validator        = (*plugin)(nil)
	_ framework.Builder          = (*plugin)(nil)
)

// Describe says that Torch owns the torch mlPolicy key.
func (*plugin) Describe() framework.Description {
	return framework.Description{
		Name:         Name,
		Version:      Version,
		MLPolicyKeys: []string{PolicyKey},
		Builds:       []schema.GroupVersionKind{HPAGVK},
	}
}

// EnforceMLPolicy sets the trainer step's pod count and the trainer
// container's torchrun variables, port and the TrainJob's env, writes the
// torchtune command line for a "tune run" TrainJob, and gives the
// variables to the containers that envInjection names.
func (*plugin) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	if info == nil {
		return errors.New("no Info to enforce the ML policy on")
	}
	if job == nil {
		return errors.New("no TrainJob to enforce the ML policy for")
	}
	policy, err := info.MLPolicy()
	if err != nil {
		return err
	}
	npp, path := numProcPerNode(job, policy)
	if err := validateNumProcPerNode(npp, path); err != nil {
		return err
	}
	// Resolved before anything changes, so that a bad target leaves Info
	// as it was.
	targets, errs := injectionTargets(info, policy)
	if len(errs) > 0 {
		return fmt.Errorf("the Torch plugin cannot inject its variables: %w", errs.ToAggregate())
	}
	// The user's env first, then ours: Validate rejects a user PET_*
	// variable, and should one get through, torchrun still gets the
	// values that match the pods.
	ps, c, count, err := info.SetupTrainerWith(job, policy)
	if err != nil {
		return err
	}
	master, err := ps.FirstEndpoint()
	if err != nil {
		return err
	}
	nproc := ResolveNumProcPerNode(npp, c.Resources)
	if bounds, elastic := elasticBounds(policy, count); elastic {
		if isTorchTune(job) {
			return &framework.InvalidJobError{Err: errTorchTuneElastic}
		}
		if err := boundsError(policy, bounds, count, job.Spec.Trainer == nil || job.Spec.Trainer.NumNodes == nil, false); err != nil {
			return &framework.InvalidJobError{Err: err}
		}
		ps.Elastic = &framework.CountRange{Min: bounds.Min, Max: bounds.Max}
		c.UpsertEnv(elasticEnv(bounds, nproc, master, job, policy)...)
		c.UpsertEnv(masterEnv(master)...)
		c.UpsertPort(corev1.ContainerPort{ContainerPort: MasterPort, Protocol: corev1.ProtocolTCP})
		for _, t := range targets {
			t.UpsertEnv(elasticEnv(bounds, nproc, master, job, policy)...)
			t.UpsertEnv(masterEnv(master)...)
		}
		return nil
	}
	c.UpsertEnv(workerEnv(count, nproc)...)
	if isTorchTune(job) {
		// torchtune takes the rendezvous from its command line, which
		// replaces the master variables.
		cmd, err := torchTuneCommand(info, job, ps, c, count, nproc, master)
		if err != nil {
			return err
		}
		c.Command = cmd
	} else {
		c.UpsertEnv(masterEnv(master)...)
	}
	c.UpsertPort(corev1.ContainerPort{ContainerPort: MasterPort, Protocol: corev1.ProtocolTCP})
	for _, t := range targets {
		t.UpsertEnv(workerEnv(count, nproc)...)
		t.UpsertEnv(masterEnv(master)...)
	}
	return nil
}

// workerEnv returns, as new values each time (containers must not share a
// valueFrom), the variables that tell torchrun the size of the job and the
// pod's rank.
func workerEnv(nodes int32, nproc string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: EnvNumNodes, Value: strconv.Itoa(int(nodes))},
		{Name: EnvNumProcPerNode, Value: nproc},
		framework.CompletionIndexEnv(EnvNodeRank),
	}
}

// masterEnv returns the variables that tell torchrun where the rendezvous
// is: the first trainer pod, on MasterPort.
func masterEnv(master string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: EnvMasterAddr, Value: master},
		{Name: EnvMasterPort, Value: strconv.Itoa(int(MasterPort))},
	}
}
