package framework_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

func TestSetupTrainer(t *testing.T) {
	spec, job := frameworktest.Seed(t, frameworktest.SeedPlainML)
	job.Spec.Trainer.Env = []corev1.EnvVar{{Name: "A", Value: "from-job"}}
	info := frameworktest.NewInfo(t, job, spec)
	_, c, _ := info.Trainer()
	c.Env = []corev1.EnvVar{{Name: "A", Value: "from-runtime"}, {Name: "B", Value: "kept"}}

	ps, got, n, err := info.SetupTrainer(job)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || ps.Count != 2 {
		t.Errorf("SetupTrainer gave %d nodes and a count of %d, want 2 from spec.trainer.numNodes", n, ps.Count)
	}
	want := []corev1.EnvVar{{Name: "A", Value: "from-job"}, {Name: "B", Value: "kept"}}
	if diff := cmp.Diff(want, got.Env); diff != "" {
		t.Errorf("trainer env (-want +got): the TrainJob's variable replaces the runtime's in place:\n%s", diff)
	}
	job.Spec.Trainer.Env[0].Value = "changed"
	if got.Env[0].Value != "from-job" {
		t.Error("the trainer env aliases the TrainJob's")
	}

	job.Spec.Trainer.NumNodes = ptr.To[int32](0)
	if _, _, _, err := info.SetupTrainer(job); err == nil || err.Error() != "spec.trainer.numNodes: Invalid value: 0: must be at least 1" {
		t.Errorf("SetupTrainer with numNodes 0: err = %v", err)
	}
}

func TestReservedEnvErrors(t *testing.T) {
	job := &trainer.TrainJob{Spec: trainer.TrainJobSpec{Trainer: &trainer.Trainer{Env: []corev1.EnvVar{
		{Name: "OK"}, {Name: "JAX_PROCESS_ID"}, {Name: "ALSO_OK"}, {Name: "JAX_NUM_PROCESSES"},
	}}}}
	names := []string{"JAX_NUM_PROCESSES", "JAX_PROCESS_ID"}
	errs := framework.ReservedEnvErrors(job, "JAX", names, framework.ReservedEnvNames(names...))
	want := []string{
		"spec.trainer.env[1].name: Forbidden: JAX_PROCESS_ID is set by the JAX plugin, which sets JAX_NUM_PROCESSES, JAX_PROCESS_ID itself; remove it from spec.trainer.env",
		"spec.trainer.env[3].name: Forbidden: JAX_NUM_PROCESSES is set by the JAX plugin, which sets JAX_NUM_PROCESSES, JAX_PROCESS_ID itself; remove it from spec.trainer.env",
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if errs := framework.ReservedEnvErrors(&trainer.TrainJob{}, "JAX", names, framework.ReservedEnvNames(names...)); errs != nil {
		t.Errorf("a TrainJob without a trainer got %v", errs)
	}
}

func TestCompletionIndexEnv(t *testing.T) {
	got := framework.CompletionIndexEnv("RANK")
	want := corev1.EnvVar{Name: "RANK", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestGPUCount(t *testing.T) {
	for name, tc := range map[string]struct {
		res  corev1.ResourceRequirements
		want int64
	}{
		"none":             {want: 0},
		"limits":           {res: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}, want: 2},
		"requests only":    {res: corev1.ResourceRequirements{Requests: corev1.ResourceList{"amd.com/gpu": resource.MustParse("4")}}, want: 4},
		"limits win":       {res: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}, Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}}, want: 1},
		"two vendors add":  {res: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"), "amd.com/gpu": resource.MustParse("2")}}, want: 3},
		"cpu is not a gpu": {res: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}}, want: 0},
	} {
		if got := framework.GPUCount(tc.res); got != tc.want {
			t.Errorf("%s: GPUCount = %d, want %d", name, got, tc.want)
		}
	}
}

func TestCreateOnceAndRuntimeCheck(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: k\n  annotations: {a: b}\n"), &u.Object); err != nil {
		t.Fatal(err)
	}
	if framework.IsCreateOnce(u) {
		t.Fatal("an unmarked object is create-once")
	}
	framework.CreateOnce(u)
	if !framework.IsCreateOnce(u) || u.GetAnnotations()["a"] != "b" {
		t.Errorf("after CreateOnce the annotations are %v", u.GetAnnotations())
	}
	probe := framework.RuntimeCheckJob("torch-distributed")
	if !framework.IsRuntimeCheck(probe) || framework.IsRuntimeCheck(&trainer.TrainJob{}) || framework.IsRuntimeCheck(nil) {
		t.Error("IsRuntimeCheck does not tell the runtime's stand-in from a TrainJob")
	}
	if probe.Name != "torch-distributed" || probe.Spec.RuntimeRef.Name != "torch-distributed" || probe.Spec.Trainer != nil {
		t.Errorf("the stand-in %+v must be named as the runtime and override nothing", probe)
	}
}
