package mpi

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// Runtimes of testdata: deepspeed runs the launcher as a node and lists
// "node" first; launcher does not, lists the launcher first, and asks for
// 2 GPUs per worker and 1 CPU for the launcher.
const (
	deepspeed = "testdata/deepspeed-distributed.yaml"
	launcher  = "testdata/mpi-launcher.yaml"
)

// runtimeSpec reads a runtime of testdata.
func runtimeSpec(t *testing.T, file string) *trainer.TrainingRuntimeSpec {
	t.Helper()
	c, err := sdktest.LoadCase("runtime", file, file)
	if err != nil {
		t.Fatal(err)
	}
	return c.Runtime
}

// newJob is a TrainJob "train" in team-a with the given trainer.
func newJob(tr *trainer.Trainer) *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "team-a"},
		Spec:       trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "rt"}, Trainer: tr},
	}
}

// run enforces the plugin on the job's Info, derives what the host derives
// before Build, and builds; it fails the test on any error.
func run(t *testing.T, spec *trainer.TrainingRuntimeSpec, job *trainer.TrainJob) (*framework.Info, *corev1.Secret, *corev1.ConfigMap) {
	t.Helper()
	info, _, secret, cm := runObjects(t, spec, job)
	return info, secret, cm
}

// runObjects is run, with the objects as Build returned them.
func runObjects(t *testing.T, spec *trainer.TrainingRuntimeSpec, job *trainer.TrainJob) (*framework.Info, []framework.Object, *corev1.Secret, *corev1.ConfigMap) {
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
		t.Fatalf("Build returned %d objects, want a Secret and a ConfigMap", len(objs))
	}
	secret, cm := &corev1.Secret{}, &corev1.ConfigMap{}
	decode(t, objs[0].Unstructured, secret)
	decode(t, objs[1].Unstructured, cm)
	return info, objs, secret, cm
}

func decode(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := framework.FromUnstructured(u, into); err != nil {
		t.Fatal(err)
	}
}

// podSet returns a PodSet of Info with its main container.
func podSet(t *testing.T, info *framework.Info, name string) (*framework.PodSet, *framework.Container) {
	t.Helper()
	ps := info.PodSet(name)
	if ps == nil {
		t.Fatalf("no PodSet %q", name)
	}
	return ps, ps.TrainerContainer()
}

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func limits(kv ...string) *corev1.ResourceRequirements {
	return &corev1.ResourceRequirements{Limits: list(kv...)}
}

func ios(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
func ioi(i int) *intstr.IntOrString    { v := intstr.FromInt(i); return &v }

func env(c *framework.Container, name string) string {
	for _, v := range c.Env {
		if v.Name == name {
			return v.Value
		}
	}
	return ""
}
