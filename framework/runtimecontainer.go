package framework

import (
	corev1 "k8s.io/api/core/v1"
)

// RuntimeContainer returns a container of a replicatedJob as the runtime
// gives it: from Info.Template, the runtime's template after the
// TrainJob's runtimePatches, before the TrainJob's spec.trainer overrides
// (image, command, args, resourcesPerNode) and before any plugin's change.
// It is nil when the template has no such replicatedJob or container.
//
// Info's PodSets hold the overridden containers; read this to keep or
// compare what the runtime asked for. The MPI plugin, for one, gives an
// MPI launcher that only runs mpirun the runtime's resources rather than
// the GPUs of resourcesPerNode:
//
//	rc, err := info.RuntimeContainer(launcher.Name, c.Name)
//	if err != nil {
//		return err
//	}
//	if rc != nil {
//		c.Resources = rc.Resources
//	}
//
// The container is a copy: changing it changes neither Info nor the
// template.
func (i *Info) RuntimeContainer(replicatedJob, container string) (*corev1.Container, error) {
	tmpl, err := i.TemplateSpec()
	if err != nil {
		return nil, err
	}
	for _, rj := range tmpl.Spec.ReplicatedJobs {
		if rj.Name != replicatedJob {
			continue
		}
		for _, c := range rj.Template.Spec.Template.Spec.Containers {
			if c.Name == container {
				return &c, nil
			}
		}
	}
	return nil, nil
}
