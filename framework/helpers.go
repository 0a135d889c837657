package framework

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// Fallback names for runtimes written before the ancestor-step label.
var (
	legacyTrainerJobNames       = []string{"node", "trainer-node"}
	legacyTrainerContainerNames = []string{trainer.TrainerContainerName, "trainer"}
)

// TrainerPodSet returns the trainer step's PodSet, or nil when the runtime
// has none.
func (i *Info) TrainerPodSet() *PodSet {
	for k := range i.PodSets {
		if i.PodSets[k].AncestorStep == trainer.TrainerStep {
			return &i.PodSets[k]
		}
	}
	return nil
}

// ErrNoTrainerStep says that a runtime has no trainer step.
var ErrNoTrainerStep = &InvalidJobError{fmt.Errorf("the runtime has no trainer step: label a replicatedJob %s=%s (or name it \"node\" or \"trainer-node\")",
	trainer.AncestorStepLabel, trainer.TrainerStep)}

// Trainer returns the trainer step and its main container, or an error that
// says which is missing and how to fix the runtime.
func (i *Info) Trainer() (*PodSet, *Container, error) {
	ps := i.TrainerPodSet()
	if ps == nil {
		return nil, nil, ErrNoTrainerStep
	}
	c := ps.TrainerContainer()
	if c == nil {
		return nil, nil, &InvalidJobError{fmt.Errorf("replicatedJob %q of the trainer step has no trainer container: name it %q (or \"trainer\"), or give the pod a single container",
			ps.Name, trainer.TrainerContainerName)}
	}
	return ps, c, nil
}

// TrainerNumNodes is the trainer step's pod count: the TrainJob's
// spec.trainer.numNodes, else the runtime's mlPolicy.numNodes, else 1.
// A value below 1 is an error naming the field.
func TrainerNumNodes(job *trainer.TrainJob, policy *trainer.MLPolicy) (int32, error) {
	n, path := int32(1), (*field.Path)(nil)
	switch {
	case job != nil && job.Spec.Trainer != nil && job.Spec.Trainer.NumNodes != nil:
		n, path = *job.Spec.Trainer.NumNodes, field.NewPath("spec", "trainer", "numNodes")
	case policy != nil && policy.NumNodes != nil:
		n, path = *policy.NumNodes, field.NewPath("spec", "mlPolicy", "numNodes")
	}
	if n < 1 {
		return 0, field.Invalid(path, n, "must be at least 1")
	}
	return n, nil
}

// PodSetsOfStep returns the PodSets of an ancestor step, in order.
func (i *Info) PodSetsOfStep(step string) []*PodSet {
	var out []*PodSet
	for k := range i.PodSets {
		if i.PodSets[k].AncestorStep == step {
			out = append(out, &i.PodSets[k])
		}
	}
	return out
}

// MainContainer returns the container of a PodSet that a step's overrides
// apply to: the one with one of the given names, else the only container.
func (p *PodSet) MainContainer(names ...string) *Container {
	for _, n := range names {
		for k := range p.Containers {
			if p.Containers[k].Name == n {
				return &p.Containers[k]
			}
		}
	}
	if len(p.Containers) == 1 {
		return &p.Containers[0]
	}
	return nil
}

// TrainerContainer returns the trainer step's main container: the one named
// "node", else "trainer", else its only container.
func (p *PodSet) TrainerContainer() *Container {
	return p.MainContainer(legacyTrainerContainerNames...)
}

// Pods is the number of pods of the PodSet: replicas × count.
func (p *PodSet) Pods() int32 {
	return p.Replicas * p.Count
}

// UpsertEnv sets each variable, replacing one of the same name in place and
// appending the others in the given order.
func (c *Container) UpsertEnv(vars ...corev1.EnvVar) {
	upsert(&c.Env, func(v corev1.EnvVar) string { return v.Name }, vars)
}

// UpsertVolume sets each volume of the pod template, replacing one of the
// same name in place and appending the others in the given order.
// Kubernetes requires volume names to be unique within a pod.
func (p *PodSet) UpsertVolume(vols ...corev1.Volume) {
	upsert(&p.Volumes, func(v corev1.Volume) string { return v.Name }, vols)
}

// UpsertVolumeMount sets each mount of the container, replacing one with
// the same mountPath in place and appending the others in the given order.
//
// Mounts are keyed by mountPath, not by volume name: Kubernetes requires
// mount paths to be unique within a container, while one volume may be
// mounted at several paths (with different subPaths, for example). To move
// a volume to another path, remove its old mount first.
func (c *Container) UpsertVolumeMount(mounts ...corev1.VolumeMount) {
	upsert(&c.VolumeMounts, func(m corev1.VolumeMount) string { return m.MountPath }, mounts)
}

// upsert sets each item of items in list, replacing the one with the same
// key in place and appending the others in the given order.
func upsert[T any, K comparable](list *[]T, key func(T) K, items []T) {
	for _, item := range items {
		k := key(item)
		i := slices.IndexFunc(*list, func(existing T) bool { return key(existing) == k })
		if i >= 0 {
			(*list)[i] = item
		} else {
			*list = append(*list, item)
		}
	}
}

// UpsertPort sets ports: a port with the same name, or the same number
// and protocol (TCP when unset), is replaced in place, the others are
// appended in the given order.
func (c *Container) UpsertPort(ports ...corev1.ContainerPort) {
	for _, port := range ports {
		c.upsertPort(port)
	}
}

func (c *Container) upsertPort(port corev1.ContainerPort) {
	for k := range c.Ports {
		p := c.Ports[k]
		if (port.Name != "" && p.Name == port.Name) || (p.ContainerPort == port.ContainerPort && protocolOf(p) == protocolOf(port)) {
			c.Ports[k] = port
			return
		}
	}
	c.Ports = append(c.Ports, port)
}

func protocolOf(p corev1.ContainerPort) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

// MergeMap adds src to *dst, allocating it when needed; src wins on
// conflicting keys.
func MergeMap(dst *map[string]string, src map[string]string) {
	if len(src) == 0 {
		return
	}
	if *dst == nil {
		*dst = make(map[string]string, len(src))
	}
	for k, v := range src {
		(*dst)[k] = v
	}
}
