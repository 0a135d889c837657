package framework_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/trainforge/trainforge/framework/frameworktest"
)

// runtimeAndJob: a launcher asking for one CPU, and a TrainJob whose
// resourcesPerNode asks for GPUs and whose runtimePatch (as Kueue writes)
// changes the launcher's image.
const runtimeAndJob = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: mpi
spec:
  template:
    spec:
      replicatedJobs:
        - name: launcher
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: mpi:runtime
                      resources:
                        requests:
                          cpu: "1"
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job
spec:
  runtimeRef:
    name: mpi
  trainer:
    image: mpi:job
    resourcesPerNode:
      limits:
        nvidia.com/gpu: "8"
  runtimePatches:
    - manager: kueue.x-k8s.io/manager
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: launcher
                template:
                  spec:
                    template:
                      spec:
                        containers:
                          - name: node
                            image: mpi:patched
`

func TestRuntimeContainer(t *testing.T) {
	info := frameworktest.NewInfo(t, frameworktest.TrainJob(t, runtimeAndJob), frameworktest.Runtime(t, runtimeAndJob))
	cases := []struct {
		name, replicatedJob, container string
		want                           *corev1.Container
	}{
		{
			name: "the runtime's, patched, without the TrainJob's overrides", replicatedJob: "launcher", container: "node",
			want: &corev1.Container{Name: "node", Image: "mpi:patched", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}},
		},
		{name: "no such container", replicatedJob: "launcher", container: "sidecar"},
		{name: "no such replicatedJob", replicatedJob: "node", container: "node"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := info.RuntimeContainer(tc.replicatedJob, tc.container)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("container (-want +got):\n%s", diff)
			}
		})
	}
	// Info's own container has the TrainJob's overrides, which the
	// runtime's does not: the two must differ for the test to mean anything.
	if c := info.PodSets[0].Containers[0]; c.Image != "mpi:job" || c.Resources.Limits == nil {
		t.Errorf("Info's launcher container %+v lacks the TrainJob's image and resourcesPerNode", c)
	}
}

func TestRuntimeContainerIsACopy(t *testing.T) {
	info := frameworktest.NewInfo(t, frameworktest.TrainJob(t, runtimeAndJob), frameworktest.Runtime(t, runtimeAndJob))
	c, err := info.RuntimeContainer("launcher", "node")
	if err != nil || c == nil {
		t.Fatalf("RuntimeContainer = %v, %v", c, err)
	}
	c.Image = "changed"
	again, _ := info.RuntimeContainer("launcher", "node")
	if again.Image != "mpi:patched" {
		t.Errorf("a change to the returned container reached the template: image %q", again.Image)
	}
}
