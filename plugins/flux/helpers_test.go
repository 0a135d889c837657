package flux

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// Runtimes of testdata: kubeflow is Kubeflow Trainer's flux-distributed
// with its LAMMPS TrainJob (lammps-flux in team-a, 2 nodes of 4 tasks);
// gpus has 4 GPUs per node, settings on its container, a command with
// args, a replicatedJob "trainer" and the subdomain "hpc".
const (
	kubeflow = "testdata/flux-distributed.yaml"
	gpus     = "testdata/flux-gpus.yaml"
)

// load reads a case of testdata: its runtime and its TrainJob.
func load(t *testing.T, file string) (*trainer.TrainingRuntimeSpec, *trainer.TrainJob) {
	t.Helper()
	c, err := sdktest.LoadCase(file, file, file)
	if err != nil {
		t.Fatal(err)
	}
	return c.Runtime, c.Job
}

// built is what the plugin made of a job: Info after Enforce, and the
// ConfigMap and the Secret of Build.
type built struct {
	info   *framework.Info
	ps     *framework.PodSet
	c      *framework.Container
	cm     *corev1.ConfigMap
	secret *corev1.Secret
}

// run enforces the plugin on the job's Info, derives what the host derives
// before Build, and builds; it fails the test on any error.
func run(t *testing.T, spec *trainer.TrainingRuntimeSpec, job *trainer.TrainJob) built {
	t.Helper()
	info, err := framework.NewInfo(job, spec)
	if err != nil {
		t.Fatal(err)
	}
	p := New()
	if err := p.(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatalf("EnforceMLPolicy: %v", err)
	}
	if err := framework.RefreshDerived(info, job.Name); err != nil {
		t.Fatal(err)
	}
	objs, err := p.(framework.Builder).Build(context.Background(), info, job)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if len(objs) != 2 {
		t.Fatalf("Build returned %d objects, want a ConfigMap and a Secret", len(objs))
	}
	b := built{info: info, cm: &corev1.ConfigMap{}, secret: &corev1.Secret{}}
	decode(t, objs[0].Unstructured, b.cm)
	decode(t, objs[1].Unstructured, b.secret)
	b.ps = info.TrainerPodSet()
	b.c = b.ps.TrainerContainer()
	return b
}

func decode(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := framework.FromUnstructured(u, into); err != nil {
		t.Fatal(err)
	}
}

func limits(kv ...string) *corev1.ResourceRequirements {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return &corev1.ResourceRequirements{Limits: l}
}

func ios(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
func ioi(i int) *intstr.IntOrString    { v := intstr.FromInt(i); return &v }
