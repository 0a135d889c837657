package mpi

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// The hostfile ConfigMap and where the launcher finds it.
const (
	HostfileConfigMapSuffix = "-mpi-hostfile"
	HostfileKey             = "hostfile"
	HostfileDir             = "/etc/mpi"
	HostfilePath            = HostfileDir + "/" + HostfileKey
	hostfileVolumeName      = "mpi-hostfile"
)

func hostfileVolume(job *trainer.TrainJob) corev1.Volume {
	return corev1.Volume{Name: hostfileVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: job.Name + HostfileConfigMapSuffix},
		Items:                []corev1.KeyToPath{{Key: HostfileKey, Path: HostfileKey, Mode: ptr.To(int32(0o444))}},
	}}}
}

// hostfile lists the nodes mpirun starts processes on, with their slots:
// the workers and, when it runs as a node, the launcher, in the runtime's
// replicatedJob order. Info's endpoints are those of the counts the ML
// policy set: the host derives them again before Build.
func hostfile(info *framework.Info, p *plan) string {
	format := "%s:%d\n" // Intel MPI and MPICH (Hydra)
	if p.implementation == OpenMPI {
		format = "%s slots=%d\n"
	}
	var b strings.Builder
	for i := range info.PodSets {
		ps := &info.PodSets[i]
		if ps == p.worker || (ps == p.launcher && p.runLauncherAsNode) {
			for _, host := range ps.Endpoints {
				fmt.Fprintf(&b, format, host, p.slots)
			}
		}
	}
	return b.String()
}

func hostfileConfigMap(info *framework.Info, job *trainer.TrainJob, p *plan) (*unstructured.Unstructured, error) {
	return framework.ToObject(info, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + HostfileConfigMapSuffix},
		Data:       map[string]string{HostfileKey: hostfile(info, p)},
	}, configMapGVK)
}
