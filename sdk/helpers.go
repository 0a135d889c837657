package sdk

import (
	corev1 "k8s.io/api/core/v1"

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
