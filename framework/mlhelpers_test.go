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
	if objs := framework.Apply(u); len(objs) != 1 || objs[0].CreateOnce || objs[0].Unstructured != u {
		t.Fatalf("Apply(u) = %+v, want u applied on every change", objs)
	}
	if o := framework.CreateOnce(u); !o.CreateOnce || o.Unstructured != u || len(u.GetAnnotations()) != 1 {
		t.Errorf("CreateOnce(u) = %+v with annotations %v, want u created once and unchanged", o, u.GetAnnotations())
	}
	req := framework.RuntimeCheck(nil, "torch-distributed")
	probe := req.NewJob
	if !req.IsRuntime() || (framework.ValidateRequest{}).IsRuntime() || len(probe.Annotations) != 0 {
		t.Errorf("RuntimeCheck = %+v: want a runtime check whose stand-in carries no annotation", req)
	}
	if probe.Name != "torch-distributed" || probe.Spec.RuntimeRef.Name != "torch-distributed" || probe.Spec.Trainer != nil {
		t.Errorf("the stand-in %+v must be named as the runtime and override nothing", probe)
	}
}

func TestSetupTrainerWithoutInfo(t *testing.T) {
	var info *framework.Info
	if _, _, _, err := info.SetupTrainer(&trainer.TrainJob{}); err == nil || err.Error() != "no Info to set up the trainer step in" {
		t.Errorf("SetupTrainer on a nil Info: err = %v, want an error, not a panic", err)
	}
}

func TestTrainerErrors(t *testing.T) {
	withTrainer := &framework.Info{PodSets: []framework.PodSet{{Name: "node", AncestorStep: trainer.TrainerStep, Containers: []framework.Container{{Name: "node"}}}}}
	noStep := &framework.Info{PodSets: []framework.PodSet{{Name: "launcher", Containers: []framework.Container{{Name: "launcher"}}}}}
	noContainer := &framework.Info{PodSets: []framework.PodSet{{Name: "node", AncestorStep: trainer.TrainerStep, Containers: []framework.Container{{Name: "a"}, {Name: "b"}}}}}
	job := &trainer.TrainJob{Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "jax-distributed"}}}
	const noStepMsg = `the runtime has no trainer step: label a replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer (or name it "node" or "trainer-node")`
	cases := []struct {
		name string
		info *framework.Info
		job  *trainer.TrainJob
		kind framework.ValidationKind
		want []string
	}{
		{name: "a runtime with a trainer", info: withTrainer, job: job},
		{name: "a nil Info", job: job},
		{name: "a TrainJob whose runtime has no trainer step", info: noStep, job: job,
			want: []string{`spec.runtimeRef: Invalid value: "jax-distributed": ` + noStepMsg}},
		{name: "a runtime without a trainer step", info: noStep, job: framework.RuntimeCheckJob("jax-distributed"), kind: framework.ValidateRuntime,
			want: []string{"spec.template.spec.replicatedJobs: Required value: " + noStepMsg}},
		{name: "a runtime checked without a TrainJob", info: noStep,
			want: []string{"spec.template.spec.replicatedJobs: Required value: " + noStepMsg}},
		{name: "a trainer step without a trainer container", info: noContainer, job: job,
			want: []string{`spec.runtimeRef: Invalid value: "jax-distributed": replicatedJob "node" of the trainer step has no trainer container: name it "node" (or "trainer"), or give the pod a single container`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range (framework.ValidateRequest{Kind: tc.kind, Info: tc.info, NewJob: tc.job}).TrainerErrors() {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTemplateError: a runtime's own problem shows on its template
// when the runtime is admitted, and on the reference to it when a TrainJob
// is.
func TestTemplateError(t *testing.T) {
	job := &trainer.TrainJob{Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "mpi"}}}
	for _, tc := range []struct {
		name string
		job  *trainer.TrainJob
		kind framework.ValidationKind
		want string
	}{
		{name: "a TrainJob", job: job, want: `spec.runtimeRef: Invalid value: "mpi": no workers`},
		{name: "a runtime", job: framework.RuntimeCheckJob("mpi"), kind: framework.ValidateRuntime, want: "spec.template.spec.replicatedJobs: Required value: no workers"},
		{name: "no job", want: "spec.template.spec.replicatedJobs: Required value: no workers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (framework.ValidateRequest{Kind: tc.kind, NewJob: tc.job}).TemplateError("no workers").Error(); got != tc.want {
				t.Errorf("error %q, want %q", got, tc.want)
			}
		})
	}
}
