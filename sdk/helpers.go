package sdk

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// Trainer returns the trainer step's PodSet and its main container, the
// ones an ML plugin changes:
//
//   - the PodSet is the replicatedJob labelled
//     trainer.kubeflow.org/trainjob-ancestor-step=trainer (for older
//     runtimes, the one named "node" or "trainer-node");
//   - the container is the one named "node", else "trainer", else the pod's
//     only container.
//
// When the runtime has neither, the error says what is missing and how to
// fix the runtime; return it as it is, users see it. Both pointers point
// into info: changes through them are changes to Info.
func Trainer(info *framework.Info) (*framework.PodSet, *framework.Container, error) {
	return info.Trainer()
}

// UpsertEnv sets environment variables of a container: a variable of the
// same name is replaced in place, the others are appended in the given
// order. Setting what is already there changes nothing, so an Enforce
// point that calls it stays idempotent.
func UpsertEnv(c *framework.Container, vars ...corev1.EnvVar) {
	c.UpsertEnv(vars...)
}

// UpsertPort sets ports of a container: a port with the same name, or the
// same number and protocol (TCP when unset), is replaced in place, the
// others are appended in the given order.
func UpsertPort(c *framework.Container, ports ...corev1.ContainerPort) {
	for _, p := range ports {
		c.UpsertPort(p)
	}
}

// UpsertVolume sets volumes of a PodSet's pods: a volume of the same name
// is replaced in place, the others are appended in the given order. Mount
// them into containers with UpsertVolumeMount.
func UpsertVolume(ps *framework.PodSet, vols ...corev1.Volume) {
	ps.UpsertVolume(vols...)
}

// UpsertVolumeMount sets volume mounts of a container: a mount at the same
// mountPath is replaced in place, the others are appended in the given
// order. Mounts are keyed by path because Kubernetes requires a container's
// mount paths to be unique, while one volume may be mounted at several
// paths.
func UpsertVolumeMount(c *framework.Container, mounts ...corev1.VolumeMount) {
	c.UpsertVolumeMount(mounts...)
}

// SetupTrainer does what every ML framework plugin does first, so that a
// plugin holds only what is its own: it finds the trainer step and its
// main container (Trainer), sets the step's pod count to the job's node
// count (NumNodes) and merges the TrainJob's spec.trainer.env into the
// container (MergeTrainerEnv). It returns the step, its container and the
// node count; a nil info is an error.
//
//	ps, c, nodes, err := sdk.SetupTrainer(info, job)
//	if err != nil {
//		return err
//	}
//	sdk.UpsertEnv(c, corev1.EnvVar{Name: "WORLD_SIZE", Value: strconv.Itoa(int(nodes))})
func SetupTrainer(info *framework.Info, job *trainer.TrainJob) (*framework.PodSet, *framework.Container, int32, error) {
	return info.SetupTrainer(job)
}

// NumNodes is the number of training nodes of a job: the TrainJob's
// spec.trainer.numNodes, else the runtime's mlPolicy.numNodes, else 1. A
// value below 1 is an error naming the field.
func NumNodes(info *framework.Info, job *trainer.TrainJob) (int32, error) {
	return info.NumNodes(job)
}

// MergeTrainerEnv merges the TrainJob's spec.trainer.env into a container:
// a variable of the same name replaces the runtime's in place, the others
// are appended in the TrainJob's order. Set the plugin's own variables
// after it, so that they win.
func MergeTrainerEnv(c *framework.Container, job *trainer.TrainJob) {
	framework.MergeTrainerEnv(c, job)
}

// CompletionIndexEnv returns a variable named name whose value is the
// pod's Job completion index: 0 for the first pod of its replicatedJob, 1
// for the next, and so on. Frameworks take their process rank from it.
func CompletionIndexEnv(name string) corev1.EnvVar {
	return framework.CompletionIndexEnv(name)
}

// FirstEndpoint returns the DNS name of a PodSet's first pod (completion
// index 0), where frameworks run their coordinator or tracker:
// <trainjob>-<replicatedJob>-0-0.<subdomain>, the subdomain being the
// JobSet's headless service (the TrainJob's name, unless the runtime's
// network names another).
func FirstEndpoint(ps *framework.PodSet) (string, error) {
	return ps.FirstEndpoint()
}

// GPUsPerNode is the number of GPUs one pod of the container's kind asks
// for: the sum of its resources whose name ends in "gpu" (nvidia.com/gpu,
// amd.com/gpu, ...), from the limits when they name one, else from the
// requests. The TrainJob's resourcesPerNode are already in the container.
func GPUsPerNode(c *framework.Container) int64 {
	return framework.GPUCount(c.Resources)
}

// TrainerPort (29500) is the port on which the first trainer pod serves
// what the other pods connect to: a coordinator, a tracker, a rendezvous.
// Kubeflow Trainer uses it for every framework; use it too unless the
// framework has a default of its own, and open it on the trainer
// container with UpsertPort.
const TrainerPort = framework.TrainerPort

// ValidateTrainer is for Validate: it rejects a runtime that has no
// trainer step or no trainer container (see Trainer), which an ML plugin
// cannot do without, so that the mistake shows on admission instead of in
// every TrainJob's conditions. The error is on
// spec.template.spec.replicatedJobs when the runtime itself is checked
// (IsRuntimeCheck), else on the TrainJob's spec.runtimeRef, and says how
// to fix the runtime:
//
//	spec.runtimeRef: Invalid value: "jax-distributed": the runtime has no trainer step: label a replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer (or name it "node" or "trainer-node")
//
// A nil info gives no error.
func ValidateTrainer(info *framework.Info, job *trainer.TrainJob) field.ErrorList {
	return info.TrainerErrors(job)
}

// RuntimeTemplateError is for Validate: a problem with the shape of the
// runtime's template that the plugin needs (a replicatedJob it looks for,
// a container), as a field error of the object being admitted, where
// ValidateTrainer puts its own: on spec.template.spec.replicatedJobs when
// the runtime itself is checked (IsRuntimeCheck), else on the TrainJob's
// spec.runtimeRef. msg says what is missing and how to fix the runtime:
//
//	spec.runtimeRef: Invalid value: "mpi": the MPI workers run in a replicatedJob named "node" besides the launcher; the runtime has none
func RuntimeTemplateError(job *trainer.TrainJob, msg string) *field.Error {
	return framework.RuntimeTemplateError(job, msg)
}

// RejectReservedEnv is for Validate: it returns a Forbidden field error on
// spec.trainer.env[i].name for every variable of the TrainJob's
// spec.trainer.env whose name is one of names, the variables the plugin
// sets itself. plugin names the plugin in the message:
//
//	spec.trainer.env[0].name: Forbidden: DMLC_TASK_ID is set by the XGBoost plugin, which sets DMLC_TRACKER_URI, DMLC_TASK_ID itself; remove it from spec.trainer.env
func RejectReservedEnv(job *trainer.TrainJob, plugin string, names ...string) field.ErrorList {
	return framework.ReservedEnvErrors(job, plugin, names, framework.ReservedEnvNames(names...))
}

// IsRuntimeCheck reports whether Validate was given the stand-in TrainJob
// of a runtime being admitted (a TrainingRuntime or ClusterTrainingRuntime
// created or updated), rather than a real TrainJob. Report then only what
// is wrong with the runtime itself: a default that a TrainJob can override
// (mlPolicy.numNodes, say) is not yet an error.
func IsRuntimeCheck(job *trainer.TrainJob) bool {
	return framework.IsRuntimeCheck(job)
}

// CreateOnce marks a built object as created once and never updated: the
// host creates it when it does not exist and leaves it as it is after,
// for the TrainJob's whole life. Use it for generated secrets (an SSH
// key) that must not change while the job runs: Build may then return a
// new random value each time, since only the first one is ever created.
//
//	secret, err := framework.ToUnstructured(s, corev1.SchemeGroupVersion.WithKind("Secret"))
//	...
//	return []*unstructured.Unstructured{sdk.CreateOnce(secret)}, nil
func CreateOnce(obj *unstructured.Unstructured) *unstructured.Unstructured {
	return framework.CreateOnce(obj)
}
