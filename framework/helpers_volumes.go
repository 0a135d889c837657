package framework

import (
	corev1 "k8s.io/api/core/v1"
)

// UpsertVolume sets each volume of the pod template, replacing one of the
// same name in place and appending the others in the given order.
// Kubernetes requires volume names to be unique within a pod.
func (p *PodSet) UpsertVolume(vols ...corev1.Volume) {
	for _, v := range vols {
		replaced := false
		for k := range p.Volumes {
			if p.Volumes[k].Name == v.Name {
				p.Volumes[k] = v
				replaced = true
				break
			}
		}
		if !replaced {
			p.Volumes = append(p.Volumes, v)
		}
	}
}

// UpsertVolumeMount sets each mount of the container, replacing one with
// the same mountPath in place and appending the others in the given order.
//
// Mounts are keyed by mountPath, not by volume name: Kubernetes requires
// mount paths to be unique within a container, while one volume may be
// mounted at several paths (with different subPaths, for example). To move
// a volume to another path, remove its old mount first.
func (c *Container) UpsertVolumeMount(mounts ...corev1.VolumeMount) {
	for _, m := range mounts {
		replaced := false
		for k := range c.VolumeMounts {
			if c.VolumeMounts[k].MountPath == m.MountPath {
				c.VolumeMounts[k] = m
				replaced = true
				break
			}
		}
		if !replaced {
			c.VolumeMounts = append(c.VolumeMounts, m)
		}
	}
}
