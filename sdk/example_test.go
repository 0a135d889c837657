package sdk_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/sdk"
)

// hello is the minimal plugin of the package documentation.
type hello struct{}

func (hello) Describe() framework.Description {
	return framework.Description{Name: "Hello", Version: "v0.1.0", MLPolicyKeys: []string{"hello"}}
}

func (hello) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	_, c, err := sdk.Trainer(info)
	if err != nil {
		return err
	}
	sdk.UpsertEnv(c, corev1.EnvVar{Name: "HELLO", Value: "world"})
	return nil
}

// The main function of a plugin binary: Serve and nothing else. (This
// example is compiled, not run: Serve waits for a host.)
func Example() {
	sdk.Serve(hello{})
}

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

func ExampleTrainer() {
	info := exampleInfo()
	ps, c, err := sdk.Trainer(info)
	if err != nil {
		// The error says what the runtime lacks; return it as it is.
		fmt.Println(err)
		return
	}
	ps.Count = 4 // changes Info: ps and c point into it
	fmt.Println(ps.Name, c.Name, info.PodSets[0].Count)

	_, _, err = sdk.Trainer(&framework.Info{Version: framework.InfoVersion})
	fmt.Println(err)
	// Output:
	// node node 4
	// the runtime has no trainer step: label a replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer (or name it "node" or "trainer-node")
}

func ExampleUpsertEnv() {
	_, c, _ := sdk.Trainer(exampleInfo())
	sdk.UpsertEnv(c,
		corev1.EnvVar{Name: "LOG_LEVEL", Value: "debug"}, // replaced in place
		corev1.EnvVar{Name: "MASTER_PORT", Value: "29500"},
	)
	// A second call with the same variables changes nothing.
	sdk.UpsertEnv(c, corev1.EnvVar{Name: "MASTER_PORT", Value: "29500"})
	for _, e := range c.Env {
		fmt.Printf("%s=%s\n", e.Name, e.Value)
	}
	// Output:
	// LOG_LEVEL=debug
	// MASTER_PORT=29500
}

func ExampleUpsertPort() {
	_, c, _ := sdk.Trainer(exampleInfo())
	sdk.UpsertPort(c,
		corev1.ContainerPort{Name: "master", ContainerPort: 29500},
		corev1.ContainerPort{Name: "metrics", ContainerPort: 9090},
	)
	// Same number and protocol (TCP by default): replaced.
	sdk.UpsertPort(c, corev1.ContainerPort{Name: "rendezvous", ContainerPort: 29500, Protocol: corev1.ProtocolTCP})
	for _, p := range c.Ports {
		fmt.Println(p.Name, p.ContainerPort)
	}
	// Output:
	// rendezvous 29500
	// metrics 9090
}

func ExampleUpsertVolume() {
	ps, c, _ := sdk.Trainer(exampleInfo())
	sdk.UpsertVolume(ps, corev1.Volume{
		Name:         "shm",
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}},
	})
	sdk.UpsertVolumeMount(c, corev1.VolumeMount{Name: "shm", MountPath: "/dev/shm"})
	fmt.Println(ps.Volumes[0].Name, ps.Volumes[0].EmptyDir.Medium, c.VolumeMounts[0].MountPath)
	// Output:
	// shm Memory /dev/shm
}

func ExampleUpsertVolumeMount() {
	_, c, _ := sdk.Trainer(exampleInfo())
	// One volume mounted at two paths: two mounts.
	sdk.UpsertVolumeMount(c,
		corev1.VolumeMount{Name: "config", MountPath: "/etc/app/a.yaml", SubPath: "a.yaml"},
		corev1.VolumeMount{Name: "config", MountPath: "/etc/app/b.yaml", SubPath: "b.yaml"},
	)
	// The same path again: replaced in place.
	sdk.UpsertVolumeMount(c, corev1.VolumeMount{Name: "config", MountPath: "/etc/app/a.yaml", SubPath: "a.yaml", ReadOnly: true})
	for _, m := range c.VolumeMounts {
		fmt.Println(m.Name, m.MountPath, m.ReadOnly)
	}
	// Output:
	// config /etc/app/a.yaml true
	// config /etc/app/b.yaml false
}

func ExampleLogger() {
	log := sdk.Logger().WithName("mpi")
	log.Info("enforcing", "job", "llm", "nodes", 4)                 // "@level":"info"
	log.V(1).Info("hostfile", "lines", 4)                           // "@level":"debug"
	log.Error(fmt.Errorf("no slots"), "cannot build", "job", "llm") // "@level":"error", "error":"no slots"
}
