package mpi

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

const (
	// Name is the plugin's name in Describe and in the configuration file.
	Name = "MPI"
	// Version is the plugin's own version.
	Version = "v0.1.0"
	// PolicyKey is the mlPolicy key the plugin owns.
	PolicyKey = "mpi"
	// WorkerJob names the replicatedJob of the workers.
	WorkerJob = "node"
)

// The mpiImplementation values, Kubeflow Trainer's names.
const (
	OpenMPI  = "OpenMPI"
	IntelMPI = "Intel"
	MPICH    = "MPICH"
)

// Implementations lists the supported mpiImplementation values.
var Implementations = []string{OpenMPI, IntelMPI, MPICH}

// Defaults of the runtime's mlPolicy.mpi, Kubeflow Trainer's.
const (
	DefaultNumProcPerNode   int32 = 1
	DefaultImplementation         = OpenMPI
	DefaultSSHAuthMountPath       = "/root/.ssh"
)

// connectionAttempts makes ssh retry while a worker's sshd starts.
const connectionAttempts = "-o ConnectionAttempts=10"

var (
	secretGVK    = corev1.SchemeGroupVersion.WithKind("Secret")
	configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")
)

// New returns the MPI plugin.
func New() framework.Plugin { return plugin{} }

type plugin struct{}

var (
	_ framework.Validator        = plugin{}
	_ framework.MLPolicyEnforcer = plugin{}
	_ framework.Builder          = plugin{}
)

// Describe says that the plugin owns the mlPolicy key "mpi" and builds
// Secrets and ConfigMaps.
func (plugin) Describe() framework.Description {
	return framework.Description{
		Name: Name, Version: Version, MLPolicyKeys: []string{PolicyKey},
		Builds: []schema.GroupVersionKind{secretGVK, configMapGVK},
	}
}

// EnforceMLPolicy sets the launcher's and the workers' pod counts, gives
// them the TrainJob's env and the nodes its resources, mounts the SSH key
// on both and the hostfile on the launcher, and tells the launcher's
// mpirun where they are.
func (plugin) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	p, err := planOf(info, job)
	if err != nil || p == nil {
		return err
	}
	p.launcher.Replicas, p.launcher.Count = 1, 1
	p.worker.Replicas, p.worker.Count = 1, p.workers
	framework.MergeTrainerEnv(p.launcherC, job)
	framework.MergeTrainerEnv(p.workerC, job)
	p.workerC.Resources = p.nodeResources
	if !p.runLauncherAsNode {
		// A launcher that only runs mpirun holds no GPU it would not use.
		rc, err := info.RuntimeContainer(p.launcher.Name, p.launcherC.Name)
		if err != nil {
			return err
		}
		if rc != nil {
			p.launcherC.Resources = rc.Resources
		}
	}
	sshMount := corev1.VolumeMount{Name: sshVolumeName, MountPath: p.sshAuthMountPath}
	p.launcher.UpsertVolume(sshVolume(job), hostfileVolume(job))
	p.launcherC.UpsertVolumeMount(sshMount, corev1.VolumeMount{Name: hostfileVolumeName, MountPath: HostfileDir})
	p.worker.UpsertVolume(sshVolume(job))
	p.workerC.UpsertVolumeMount(sshMount)
	p.launcherC.UpsertEnv(launcherEnv(p.implementation, p.slots)...)
	return nil
}

// Build returns the SSH key Secret, created once, and the hostfile
// ConfigMap, which follows the pod counts.
func (plugin) Build(_ context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	p, err := planOf(info, job)
	if err != nil || p == nil {
		return nil, err
	}
	secret, err := sshSecret(info, job)
	if err != nil {
		return nil, err
	}
	hostfile, err := hostfileConfigMap(info, job, p)
	if err != nil {
		return nil, err
	}
	return []framework.Object{framework.CreateOnce(secret), framework.Object{Unstructured: hostfile}}, nil
}

// launcherEnv tells mpirun where the hostfile is, how many slots a node
// has and to retry ssh while the workers' sshd starts.
func launcherEnv(implementation string, slots int32) []corev1.EnvVar {
	n := strconv.Itoa(int(slots))
	switch implementation {
	case OpenMPI:
		return []corev1.EnvVar{
			{Name: "OMPI_MCA_orte_default_hostfile", Value: HostfilePath},
			// The hostfile names pods by their DNS names; keep them whole.
			{Name: "OMPI_MCA_orte_keep_fqdn_hostnames", Value: "true"},
			{Name: "OMPI_MCA_orte_set_default_slots", Value: n},
			{Name: "OMPI_MCA_plm_rsh_args", Value: connectionAttempts},
		}
	case IntelMPI:
		return []corev1.EnvVar{
			{Name: "I_MPI_HYDRA_HOST_FILE", Value: HostfilePath},
			{Name: "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", Value: connectionAttempts},
			{Name: "I_MPI_PERHOST", Value: n},
		}
	case MPICH:
		return []corev1.EnvVar{
			{Name: "HYDRA_HOST_FILE", Value: HostfilePath},
			{Name: "HYDRA_LAUNCH_EXTRA_ARGS", Value: connectionAttempts},
		}
	}
	return nil
}

// envNames lists the variables the plugin sets for an implementation.
func envNames(implementation string) []string {
	var names []string
	for _, v := range launcherEnv(implementation, 1) {
		names = append(names, v.Name)
	}
	return names
}
