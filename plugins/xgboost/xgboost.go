// Package xgboost is the XGBoost plugin of Trainforge: distributed XGBoost
// training over XGBoost's collective (Rabit) protocol, coordinated by a
// tracker that the first trainer pod runs. It is a vendor-style plugin,
// written only against Trainforge's SDK, and runs as its own process
// (cmd/trainforge-plugin-xgboost).
//
// XGBoost owns the runtimes whose mlPolicy sets the xgboost key (Kubeflow
// Trainer's xgboost-distributed runtime is one). For such a runtime it
// changes the trainer step (the replicatedJob labelled
// trainer.kubeflow.org/trainjob-ancestor-step=trainer, or for older
// runtimes the one named "node" or "trainer-node") and its trainer
// container (the container named "node", else "trainer", else the only
// one):
//
//   - The number of trainer pods is the TrainJob's spec.trainer.numNodes,
//     else the runtime's mlPolicy.numNodes, else 1.
//   - The TrainJob's spec.trainer.env is merged into the trainer container.
//   - XGBoost's collective reads its setup from DMLC_* variables, which
//     the plugin sets: DMLC_TRACKER_URI (the DNS name of the first trainer
//     pod, <trainjob>-<replicatedJob>-0-0.<subdomain>, where rank 0 starts
//     the tracker; the subdomain is the JobSet's headless service, the
//     TrainJob's name unless the runtime's network names another),
//     DMLC_TRACKER_PORT (29500), DMLC_TASK_ID (the pod's Job completion
//     index, read from its batch.kubernetes.io/job-completion-index
//     annotation) and DMLC_NUM_WORKER (the number of workers: the number
//     of pods times the workers of one pod, which is its GPU count, or 1
//     on CPU, since one worker drives one GPU while a CPU worker uses
//     every core). The container also gets port 29500.
//
// The GPU count is the sum of the trainer container's resources whose
// name ends in "gpu" (nvidia.com/gpu, amd.com/gpu, ...), limits first,
// else requests, from the TrainJob's resourcesPerNode when it sets them,
// else from the runtime. DMLC_TASK_ID numbers pods, not workers: a pod
// with several GPUs that starts one worker per GPU gives each the rank
// DMLC_TASK_ID × GPUs + its local GPU index.
//
// The variables are set whether or not the TrainJob has a trainer
// section, and XGBoost's own values win over any the runtime's template
// sets.
//
// On admission, XGBoost rejects a TrainJob whose spec.trainer.env sets one
// of those four variables (the plugin's value would silently replace the
// user's), and a runtime without a trainer step or trainer container (the
// TrainJob could never start).
package xgboost

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// Name is the plugin's name in the configuration file.
const Name = "XGBoost"

// Version is the plugin's version.
const Version = "v0.1.0"

// PolicyKey is the mlPolicy key XGBoost owns.
const PolicyKey = "xgboost"

// The variables XGBoost's collective reads its setup from.
const (
	// EnvTrackerURI is the DNS name of the first trainer pod, which runs
	// the tracker.
	EnvTrackerURI = "DMLC_TRACKER_URI"
	// EnvTrackerPort is the tracker's port.
	EnvTrackerPort = "DMLC_TRACKER_PORT"
	// EnvTaskID is the pod's rank, its Job completion index.
	EnvTaskID = "DMLC_TASK_ID"
	// EnvNumWorker is the number of workers of the whole job.
	EnvNumWorker = "DMLC_NUM_WORKER"
)

// TrackerPort is the tracker's port, also opened on the trainer container.
const TrackerPort = framework.TrainerPort

// New returns the XGBoost plugin.
func New() framework.Plugin { return plugin{} }

type plugin struct{}

var (
	_ framework.MLPolicyEnforcer = plugin{}
	_ framework.Validator        = plugin{}
)

// Describe says that XGBoost owns the xgboost mlPolicy key.
func (plugin) Describe() framework.Description {
	return framework.Description{Name: Name, Version: Version, MLPolicyKeys: []string{PolicyKey}}
}

// EnforceMLPolicy sets the trainer step's pod count and the trainer
// container's DMLC variables, port and the TrainJob's env.
func (plugin) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	// The user's env first, then ours: Validate rejects a user DMLC_*
	// variable, and should one get through, the workers still get the
	// values that match the pods.
	ps, c, nodes, err := info.SetupTrainer(job)
	if err != nil {
		return err
	}
	tracker, err := ps.FirstEndpoint()
	if err != nil {
		return err
	}
	c.UpsertEnv(
		corev1.EnvVar{Name: EnvTrackerURI, Value: tracker},
		corev1.EnvVar{Name: EnvTrackerPort, Value: strconv.Itoa(int(TrackerPort))},
		framework.CompletionIndexEnv(EnvTaskID),
		corev1.EnvVar{Name: EnvNumWorker, Value: strconv.FormatInt(int64(nodes)*workersPerNode(c), 10)},
	)
	c.UpsertPort(corev1.ContainerPort{ContainerPort: TrackerPort, Protocol: corev1.ProtocolTCP})
	return nil
}

// workersPerNode is one worker per GPU, or a single worker on a node
// without GPUs.
func workersPerNode(c *framework.Container) int64 {
	return max(framework.GPUCount(c.Resources), 1)
}

// Validate rejects a TrainJob that sets a DMLC variable in
// spec.trainer.env, and a runtime without a trainer step or container.
func (plugin) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	newJob := req.NewJob
	errs := framework.RejectReservedEnv(newJob, Name, EnvTrackerURI, EnvTrackerPort, EnvTaskID, EnvNumWorker)
	return nil, append(errs, req.TrainerErrors()...), nil
}
