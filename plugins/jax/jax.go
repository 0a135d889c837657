// Package jax is the JAX plugin of Trainforge: multi-host JAX training,
// one JAX process per trainer pod, joined by jax.distributed.initialize.
// It is a vendor-style plugin, written only against Trainforge's SDK, and
// runs as its own process (cmd/trainforge-plugin-jax).
//
// JAX owns the runtimes whose mlPolicy sets the jax key (Kubeflow
// Trainer's jax-distributed runtime is one). For such a runtime it changes
// the trainer step (the replicatedJob labelled
// trainer.kubeflow.org/trainjob-ancestor-step=trainer, or for older
// runtimes the one named "node" or "trainer-node") and its trainer
// container (the container named "node", else "trainer", else the only
// one):
//
//   - The number of trainer pods is the TrainJob's spec.trainer.numNodes,
//     else the runtime's mlPolicy.numNodes, else 1.
//   - The TrainJob's spec.trainer.env is merged into the trainer container.
//   - A JAX program passes three values to jax.distributed.initialize,
//     which the plugin sets as variables: JAX_NUM_PROCESSES (the number of pods,
//     as num_processes), JAX_PROCESS_ID (the pod's Job completion index,
//     read from its batch.kubernetes.io/job-completion-index annotation,
//     as process_id) and JAX_COORDINATOR_ADDRESS (as coordinator_address:
//     the DNS name of the first trainer pod,
//     <trainjob>-<replicatedJob>-0-0.<subdomain>, and port 29500, where
//     process 0 serves the coordinator). The subdomain is the JobSet's
//     headless service, the TrainJob's name unless the runtime's network
//     names another. The container also gets port 29500.
//
// They are set whether or not the TrainJob has a trainer section, and
// JAX's own values win over any the runtime's template sets.
//
// On admission, JAX rejects a TrainJob whose spec.trainer.env sets one of
// those three variables (the plugin's value would silently replace the
// user's), and a runtime without a trainer step or trainer container (the
// TrainJob could never start).
package jax

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// Name is the plugin's name in the configuration file.
const Name = "JAX"

// Version is the plugin's version.
const Version = "v0.1.0"

// PolicyKey is the mlPolicy key JAX owns.
const PolicyKey = "jax"

// The variables a JAX program reads its distributed setup from.
const (
	// EnvNumProcesses is the number of JAX processes, one per pod.
	EnvNumProcesses = "JAX_NUM_PROCESSES"
	// EnvProcessID is the pod's process index, its Job completion index.
	EnvProcessID = "JAX_PROCESS_ID"
	// EnvCoordinatorAddress is host:port of the coordinator, on the
	// first trainer pod.
	EnvCoordinatorAddress = "JAX_COORDINATOR_ADDRESS"
)

// CoordinatorPort is the coordinator's port, also opened on the trainer
// container.
const CoordinatorPort = framework.TrainerPort

// New returns the JAX plugin.
func New() framework.Plugin { return plugin{} }

type plugin struct{}

var (
	_ framework.MLPolicyEnforcer = plugin{}
	_ framework.Validator        = plugin{}
)

// Describe says that JAX owns the jax mlPolicy key.
func (plugin) Describe() framework.Description {
	return framework.Description{Name: Name, Version: Version, MLPolicyKeys: []string{PolicyKey}}
}

// EnforceMLPolicy sets the trainer step's pod count and the trainer
// container's JAX variables, port and the TrainJob's env.
func (plugin) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	// The user's env first, then ours: Validate rejects a user JAX_*
	// variable, and should one get through, the processes still get the
	// values that match the pods.
	ps, c, nodes, err := info.SetupTrainer(job)
	if err != nil {
		return err
	}
	coordinator, err := ps.FirstEndpoint()
	if err != nil {
		return err
	}
	c.UpsertEnv(
		corev1.EnvVar{Name: EnvNumProcesses, Value: strconv.Itoa(int(nodes))},
		framework.CompletionIndexEnv(EnvProcessID),
		corev1.EnvVar{Name: EnvCoordinatorAddress, Value: fmt.Sprintf("%s:%d", coordinator, CoordinatorPort)},
	)
	c.UpsertPort(corev1.ContainerPort{ContainerPort: CoordinatorPort, Protocol: corev1.ProtocolTCP})
	return nil
}

// Validate rejects a TrainJob that sets a JAX variable in
// spec.trainer.env, and a runtime without a trainer step or container.
func (plugin) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	newJob := req.NewJob
	errs := framework.RejectReservedEnv(newJob, Name, EnvNumProcesses, EnvProcessID, EnvCoordinatorAddress)
	return nil, append(errs, req.TrainerErrors()...), nil
}
