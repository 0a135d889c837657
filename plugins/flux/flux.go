package flux

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

const (
	// Name is the plugin's name in Describe and in the configuration file.
	Name = "Flux"
	// Version is the plugin's own version.
	Version = "v0.1.0"
	// PolicyKey is the mlPolicy key the plugin owns.
	PolicyKey = "flux"
	// DefaultNumProcPerNode is mlPolicy.flux.numProcPerNode when unset.
	DefaultNumProcPerNode int32 = 1
)

// The settings a runtime's trainer container or a TrainJob's
// spec.trainer.env may give, Kubeflow Trainer's names and defaults.
const (
	// EnvViewImage is the image of the flux-installer init container, a
	// Flux build (a "view") for the OS and version of the training image.
	EnvViewImage     = "FLUX_VIEW_IMAGE"
	DefaultViewImage = "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy"
	// EnvNetworkDevice is the network interface the brokers bind to.
	EnvNetworkDevice     = "FLUX_NETWORK_DEVICE"
	DefaultNetworkDevice = "eth0"
	// EnvQueuePolicy is the queue policy of Flux's scheduler, Fluxion.
	EnvQueuePolicy     = "FLUX_QUEUE_POLICY"
	DefaultQueuePolicy = "fcfs"
)

// QueuePolicies are the queue policies of Fluxion's qmanager.
var QueuePolicies = []string{"fcfs", "easy", "hybrid", "conservative"}

// The objects the plugin builds, the containers, volumes and paths of the
// pods: Kubeflow Trainer v2.3's names, which its images and users' habits
// (kubectl exec ... . /mnt/flux/flux-view.sh) expect.
const (
	EntrypointConfigMapSuffix = "-flux-entrypoint"
	EntrypointKey             = "entrypoint.sh"
	InitKey                   = "init.sh"
	CurveSecretSuffix         = "-flux-curve"
	CurveCertKey              = "curve.cert"

	InstallerContainer = "flux-installer"

	// ConfigDir is where both containers find the ConfigMap's scripts.
	ConfigDir = "/etc/flux-config"
	// InstallDir is the emptyDir the installer copies Flux into and the
	// brokers keep their configuration and state in.
	InstallDir    = "/mnt/flux"
	installVolume = "flux-install"
	// SoftwareDir is where the view's software must be: the view's links
	// point there.
	SoftwareDir    = "/opt/software"
	softwareVolume = "spack-install"
	curveDir       = "/curve"
	curveVolume    = "flux-curve"
	shmDir         = "/dev/shm"
	shmVolume      = "shared-memory"

	// BrokerPort is the TCP port of the brokers' overlay network.
	BrokerPort = 8050
)

var (
	secretGVK    = corev1.SchemeGroupVersion.WithKind("Secret")
	configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")
)

// New returns the Flux plugin.
func New() framework.Plugin { return plugin{} }

type plugin struct{}

var (
	_ framework.Validator        = plugin{}
	_ framework.MLPolicyEnforcer = plugin{}
	_ framework.Builder          = plugin{}
)

// Describe says that the plugin owns the mlPolicy key "flux" and builds a
// Secret and a ConfigMap per TrainJob.
func (plugin) Describe() framework.Description {
	return framework.Description{
		Name: Name, Version: Version, MLPolicyKeys: []string{PolicyKey},
		Builds: []schema.GroupVersionKind{configMapGVK, secretGVK},
	}
}

// EnforceMLPolicy gives the trainer step its nodes, the TrainJob's env,
// the flux-installer init container, the command wrapped in the Flux
// entrypoint, and the volumes both containers share.
func (plugin) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	p, err := planOf(info, job)
	if err != nil || p == nil {
		return err
	}
	p.ps.Replicas, p.ps.Count = 1, p.nodes
	framework.MergeTrainerEnv(p.c, job)
	p.c.Command = []string{"/bin/bash", ConfigDir + "/" + EntrypointKey, p.command}
	p.c.Args = p.args

	scripts := scriptsVolumeName(job)
	installMount := corev1.VolumeMount{Name: installVolume, MountPath: InstallDir}
	scriptsMount := corev1.VolumeMount{Name: scripts, MountPath: ConfigDir, ReadOnly: true}
	upsertContainer(&p.ps.InitContainers, framework.Container{
		Name:         InstallerContainer,
		Image:        p.settings.viewImage,
		Command:      []string{"/bin/bash", ConfigDir + "/" + InitKey},
		VolumeMounts: []corev1.VolumeMount{installMount, scriptsMount},
	})
	p.ps.UpsertVolume(
		corev1.Volume{Name: softwareVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: installVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: scripts, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: job.Name + EntrypointConfigMapSuffix},
			DefaultMode:          ptr.To[int32](0o755),
		}}},
		corev1.Volume{Name: shmVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		corev1.Volume{Name: curveVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  job.Name + CurveSecretSuffix,
			DefaultMode: ptr.To[int32](0o400),
		}}},
	)
	p.c.UpsertVolumeMount(
		installMount,
		corev1.VolumeMount{Name: softwareVolume, MountPath: SoftwareDir},
		scriptsMount,
		corev1.VolumeMount{Name: curveVolume, MountPath: curveDir, ReadOnly: true},
		// Writable, unlike Kubeflow's: MPI, NCCL and PyTorch's data
		// loaders create their shared memory here.
		corev1.VolumeMount{Name: shmVolume, MountPath: shmDir},
	)
	return nil
}

// Build returns the ConfigMap of the installer's and the brokers' scripts
// and the Secret of the CURVE certificate, derived from the TrainJob's UID.
func (plugin) Build(_ context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	p, err := planOf(info, job)
	if err != nil || p == nil {
		return nil, err
	}
	cm, err := scriptsConfigMap(info, job, p)
	if err != nil {
		return nil, err
	}
	secret, err := curveSecret(info, job)
	if err != nil {
		return nil, err
	}
	return framework.Apply(cm, secret), nil
}

// scriptsVolumeName is Kubeflow's: the volume is named as the ConfigMap.
func scriptsVolumeName(job *trainer.TrainJob) string {
	return job.Name + EntrypointConfigMapSuffix
}

// upsertContainer replaces the container of the same name in place, or
// appends it, so that enforcing again changes nothing.
func upsertContainer(list *[]framework.Container, c framework.Container) {
	for i := range *list {
		if (*list)[i].Name == c.Name {
			(*list)[i] = c
			return
		}
	}
	*list = append(*list, c)
}
