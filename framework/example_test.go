package framework_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// exampleInfo is the Info of a runtime whose trainer step "node" has one
// container "node".
func exampleInfo() *framework.Info {
	return &framework.Info{
		Version: framework.InfoVersion,
		PodSets: []framework.PodSet{{
			Name:         "node",
			AncestorStep: trainer.TrainerStep,
			Replicas:     1,
			Count:        1,
			Containers: []framework.Container{{
				Name:  "node",
				Image: "pytorch/pytorch",
				Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}},
			}},
		}},
	}
}

func ExampleInfo_Trainer() {
	info := exampleInfo()
	ps, c, err := info.Trainer()
	if err != nil {
		// The error says what the runtime lacks; return it as it is.
		fmt.Println(err)
		return
	}
	ps.Count = 4 // changes Info: ps and c point into it
	fmt.Println(ps.Name, c.Name, info.PodSets[0].Count)

	_, _, err = (&framework.Info{Version: framework.InfoVersion}).Trainer()
	fmt.Println(err)
	// Output:
	// node node 4
	// the runtime has no trainer step: label a replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer (or name it "node" or "trainer-node")
}

func ExampleContainer_UpsertEnv() {
	_, c, _ := exampleInfo().Trainer()
	c.UpsertEnv(corev1.EnvVar{Name: "LOG_LEVEL", Value: "debug"}, // replaced in place
		corev1.EnvVar{Name: "MASTER_PORT", Value: "29500"},
	)
	// A second call with the same variables changes nothing.
	c.UpsertEnv(corev1.EnvVar{Name: "MASTER_PORT", Value: "29500"})
	for _, e := range c.Env {
		fmt.Printf("%s=%s\n", e.Name, e.Value)
	}
	// Output:
	// LOG_LEVEL=debug
	// MASTER_PORT=29500
}

func ExampleContainer_UpsertPort() {
	_, c, _ := exampleInfo().Trainer()
	c.UpsertPort(corev1.ContainerPort{Name: "master", ContainerPort: 29500},
		corev1.ContainerPort{Name: "metrics", ContainerPort: 9090},
	)
	// Same number and protocol (TCP by default): replaced.
	c.UpsertPort(corev1.ContainerPort{Name: "rendezvous", ContainerPort: 29500, Protocol: corev1.ProtocolTCP})
	for _, p := range c.Ports {
		fmt.Println(p.Name, p.ContainerPort)
	}
	// Output:
	// rendezvous 29500
	// metrics 9090
}

func ExamplePodSet_UpsertVolume() {
	ps, c, _ := exampleInfo().Trainer()
	ps.UpsertVolume(corev1.Volume{
		Name:         "shm",
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}},
	})
	c.UpsertVolumeMount(corev1.VolumeMount{Name: "shm", MountPath: "/dev/shm"})
	fmt.Println(ps.Volumes[0].Name, ps.Volumes[0].EmptyDir.Medium, c.VolumeMounts[0].MountPath)
	// Output:
	// shm Memory /dev/shm
}

func ExampleContainer_UpsertVolumeMount() {
	_, c, _ := exampleInfo().Trainer()
	// One volume mounted at two paths: two mounts.
	c.UpsertVolumeMount(corev1.VolumeMount{Name: "config", MountPath: "/etc/app/a.yaml", SubPath: "a.yaml"},
		corev1.VolumeMount{Name: "config", MountPath: "/etc/app/b.yaml", SubPath: "b.yaml"},
	)
	// The same path again: replaced in place.
	c.UpsertVolumeMount(corev1.VolumeMount{Name: "config", MountPath: "/etc/app/a.yaml", SubPath: "a.yaml", ReadOnly: true})
	for _, m := range c.VolumeMounts {
		fmt.Println(m.Name, m.MountPath, m.ReadOnly)
	}
	// Output:
	// config /etc/app/a.yaml true
	// config /etc/app/b.yaml false
}
