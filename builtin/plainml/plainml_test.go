package plainml

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// seed returns the seed's PlainML example (frameworktest.SeedPlainML),
// with two env vars of the runtime's own on the trainer container, MODE and
// KEEP, for the tests of the env to follow; with doc, its runtime instead.
func seed(t *testing.T, doc string) (*trainer.TrainingRuntimeSpec, *trainer.TrainJob) {
	t.Helper()
	spec, job := frameworktest.Seed(t, frameworktest.SeedPlainML)
	if doc != "" {
		return frameworktest.Runtime(t, doc), job
	}
	c := &spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0]
	c.Env = append(c.Env, corev1.EnvVar{Name: "MODE", Value: "runtime"}, corev1.EnvVar{Name: "KEEP", Value: "yes"})
	return spec, job
}

// labelledRuntime has no mlPolicy at all and marks its trainer step with
// the ancestor label; its pod has a main container "node" and a sidecar.
const labelledRuntime = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: plain
spec:
  template:
    spec:
      replicatedJobs:
        - name: model-initializer
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: model-initializer
            spec:
              template:
                spec:
                  containers:
                    - name: model-initializer
                      image: ghcr.io/kubeflow/trainer/model-initializer
        - name: workers
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              parallelism: 4
              template:
                spec:
                  containers:
                    - name: proxy
                      image: envoyproxy/envoy
                    - name: node
                      image: python:3.12
`

func enforce(t *testing.T, job *trainer.TrainJob, spec *trainer.TrainingRuntimeSpec) *framework.Info {
	t.Helper()
	info := frameworktest.NewInfo(t, job, spec)
	if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatalf("EnforceMLPolicy: %v", err)
	}
	return info
}

func TestDescribe(t *testing.T) {
	want := framework.Description{Name: "PlainML", Version: "v0.1.0", MLPolicyKeys: []string{""}}
	if diff := cmp.Diff(want, New().Describe()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

func TestEnforceSeed(t *testing.T) {
	spec, job := seed(t, "")
	info := enforce(t, job, spec)
	ps := info.TrainerPodSet()
	if ps == nil || ps.Name != "trainer-node" {
		t.Fatalf("trainer PodSet %+v, want trainer-node", ps)
	}
	if ps.Count != 2 {
		t.Errorf("count %d, want 2", ps.Count)
	}
	want := framework.Container{
		Name:    "trainer",
		Image:   "python:alpine3.20",
		Command: []string{"/bin/sh", "-c", "echo 'Hello From Training Runtime'"},
		Env:     []corev1.EnvVar{{Name: "MODE", Value: "runtime"}, {Name: "KEEP", Value: "yes"}},
	}
	if diff := cmp.Diff(want, *ps.TrainerContainer()); diff != "" {
		t.Errorf("trainer container (-want +got):\n%s", diff)
	}
}

func TestEnforceNumNodes(t *testing.T) {
	cases := []struct {
		name       string
		runtime    string // YAML; the seed's runtime when empty
		runtimeNum *int32
		jobNum     *int32
		want       int32
	}{
		{name: "TrainJob wins over the runtime", runtimeNum: ptr.To[int32](5), jobNum: ptr.To[int32](2), want: 2},
		{name: "runtime when the TrainJob sets none", runtimeNum: ptr.To[int32](5), want: 5},
		{name: "1 when neither sets it", want: 1},
		{name: "1 without mlPolicy, whatever the template's parallelism", runtime: labelledRuntime, want: 1},
		{name: "TrainJob without mlPolicy", runtime: labelledRuntime, jobNum: ptr.To[int32](6), want: 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, job := seed(t, tc.runtime)
			if spec.MLPolicy != nil {
				spec.MLPolicy.NumNodes = tc.runtimeNum
			}
			job.Spec.Trainer.NumNodes = tc.jobNum
			info := enforce(t, job, spec)
			if got := info.TrainerPodSet().Count; got != tc.want {
				t.Errorf("count %d, want %d", got, tc.want)
			}
		})
	}
}

func TestEnforceEnv(t *testing.T) {
	secretEnv := corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "token"}}}
	cases := []struct {
		name          string
		runtime       string // YAML; the seed's runtime when empty
		trainer       *trainer.Trainer
		wantContainer string
		wantEnv       []corev1.EnvVar
	}{
		{name: "user env replaces in place and appends",
			trainer: &trainer.Trainer{Env: []corev1.EnvVar{
				{Name: "TRAIN_JOB", Value: "env"}, {Name: "MODE", Value: "job"}, secretEnv,
			}},
			wantContainer: "trainer",
			wantEnv: []corev1.EnvVar{
				{Name: "MODE", Value: "job"}, {Name: "KEEP", Value: "yes"}, {Name: "TRAIN_JOB", Value: "env"}, secretEnv,
			}},
		{name: "no trainer section keeps the runtime's env",
			wantContainer: "trainer",
			wantEnv:       []corev1.EnvVar{{Name: "MODE", Value: "runtime"}, {Name: "KEEP", Value: "yes"}}},
		{name: "main container node next to a sidecar", runtime: labelledRuntime,
			trainer:       &trainer.Trainer{Env: []corev1.EnvVar{{Name: "TRAIN_JOB", Value: "env"}}},
			wantContainer: "node",
			wantEnv:       []corev1.EnvVar{{Name: "TRAIN_JOB", Value: "env"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, job := seed(t, tc.runtime)
			job.Spec.Trainer = tc.trainer
			info := enforce(t, job, spec)
			c := info.TrainerPodSet().TrainerContainer()
			if c.Name != tc.wantContainer {
				t.Errorf("trainer container %q, want %q", c.Name, tc.wantContainer)
			}
			if diff := cmp.Diff(tc.wantEnv, c.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			for _, ps := range info.PodSets {
				for _, other := range ps.Containers {
					if other.Name != c.Name && len(other.Env) != 0 {
						t.Errorf("container %s/%s got env %v", ps.Name, other.Name, other.Env)
					}
				}
			}
			if tc.trainer != nil {
				for i := range c.Env {
					if c.Env[i].ValueFrom != nil && c.Env[i].ValueFrom == secretEnv.ValueFrom {
						t.Errorf("env %s shares its valueFrom with the TrainJob", c.Env[i].Name)
					}
				}
			}
		})
	}
}

func TestEnforceErrors(t *testing.T) {
	noTrainer := `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: no-trainer
spec:
  template:
    spec:
      replicatedJobs:
        - name: launcher
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: launcher
                      image: busybox
`
	twoContainers := `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: ambiguous
spec:
  template:
    spec:
      replicatedJobs:
        - name: trainer-node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: main
                      image: python
                    - name: sidecar
                      image: busybox
`
	cases := []struct {
		name    string
		runtime string // YAML; the seed's runtime when empty
		mutate  func(*framework.Info)
		nilInfo bool
		wantErr string
	}{
		{name: "no trainer step", runtime: noTrainer, wantErr: "the runtime has no trainer step"},
		{name: "no trainer container", runtime: twoContainers, wantErr: `replicatedJob "trainer-node" of the trainer step has no trainer container`},
		{name: "numNodes below 1",
			mutate:  func(i *framework.Info) { i.RuntimePolicy.MLPolicy = []byte(`{"numNodes":0}`) },
			wantErr: "spec.mlPolicy.numNodes: Invalid value: 0"},
		{name: "undecodable mlPolicy",
			mutate:  func(i *framework.Info) { i.RuntimePolicy.MLPolicy = []byte(`[]`) },
			wantErr: "decoding Info.runtimePolicy.mlPolicy"},
		{name: "nil Info", nilInfo: true, wantErr: "no Info"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A TrainJob without a trainer section: NewInfo then accepts a
			// runtime without a trainer step, and PlainML must say so.
			spec, job := seed(t, tc.runtime)
			job.Spec.Trainer = nil
			info := frameworktest.NewInfo(t, job, spec)
			if tc.mutate != nil {
				tc.mutate(info)
			}
			if tc.nilInfo {
				info = nil
			}
			err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestEnforceNilTrainJob(t *testing.T) {
	spec, job := seed(t, "")
	info := frameworktest.NewInfo(t, job, spec)
	if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, nil); err != nil {
		t.Fatal(err)
	}
	if got := info.TrainerPodSet().Count; got != 5 {
		t.Errorf("count %d, want the runtime's 5", got)
	}
}
