package jax_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
	"github.com/trainforge/trainforge/plugins/jax"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// runtimeFile is the jax-distributed-shaped runtime of testdata.
const runtimeFile = "testdata/jax-distributed.yaml"

// jaxCase reads a TrainJob of testdata with the jax-distributed runtime.
func jaxCase(t *testing.T, name string) sdktest.Case {
	return sdktest.CaseFromFiles(t, name, runtimeFile, "testdata/"+name+".yaml")
}

func processID() corev1.EnvVar {
	return corev1.EnvVar{Name: "JAX_PROCESS_ID", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"},
	}}
}

func trainerContainer(s *trainer.TrainingRuntimeSpec) *corev1.Container {
	return &s.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0]
}

var coordinatorPort = []corev1.ContainerPort{{ContainerPort: 29500, Protocol: corev1.ProtocolTCP}}

func TestDescribe(t *testing.T) {
	want := framework.Description{Name: "JAX", Version: "v0.1.0", MLPolicyKeys: []string{"jax"}}
	if diff := cmp.Diff(want, jax.New().Describe()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

func TestEnforceMLPolicy(t *testing.T) {
	hfToken := corev1.EnvVar{Name: "HF_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "hf"}, Key: "token"}}}
	cases := []struct {
		name    string
		job     string // a TrainJob of testdata
		runtime func(*trainer.TrainingRuntimeSpec)
		trainer func(*trainer.TrainJob)
		// wantPodSet is the trainer replicatedJob; "node" when empty.
		wantPodSet string
		wantCount  int32
		wantEnv    []corev1.EnvVar
		wantPorts  []corev1.ContainerPort
	}{
		{name: "one node from the runtime, no trainer section", job: "one-node", wantCount: 1,
			wantEnv: []corev1.EnvVar{
				{Name: "JAX_NUM_PROCESSES", Value: "1"},
				processID(),
				{Name: "JAX_COORDINATOR_ADDRESS", Value: "mnist-node-0-0.mnist:29500"},
			}},
		{name: "four nodes from the TrainJob", job: "four-nodes", wantCount: 4,
			wantEnv: []corev1.EnvVar{
				{Name: "JAX_NUM_PROCESSES", Value: "4"},
				processID(),
				{Name: "JAX_COORDINATOR_ADDRESS", Value: "llama-node-0-0.llama:29500"},
			}},
		{name: "the runtime's numNodes when the TrainJob sets none", job: "one-node",
			runtime:   func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.NumNodes = ptr.To[int32](6) },
			wantCount: 6,
			wantEnv: []corev1.EnvVar{
				{Name: "JAX_NUM_PROCESSES", Value: "6"},
				processID(),
				{Name: "JAX_COORDINATOR_ADDRESS", Value: "mnist-node-0-0.mnist:29500"},
			}},
		{name: "one process per pod whatever its GPUs", job: "two-gpus-per-node", wantCount: 2,
			wantEnv: []corev1.EnvVar{
				{Name: "JAX_NUM_PROCESSES", Value: "2"},
				processID(),
				{Name: "JAX_COORDINATOR_ADDRESS", Value: "vit-node-0-0.vit:29500"},
			}},
		{name: "the user's env after the runtime's, the plugin's last", job: "user-env",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				trainerContainer(s).Env = []corev1.EnvVar{{Name: "XLA_FLAGS", Value: "--runtime"}, {Name: "LOG_LEVEL", Value: "info"}}
			},
			wantCount: 3,
			wantEnv: []corev1.EnvVar{
				{Name: "XLA_FLAGS", Value: "--xla_gpu_enable_latency_hiding_scheduler=true"},
				{Name: "LOG_LEVEL", Value: "info"},
				{Name: "JAX_PLATFORMS", Value: "cuda"},
				hfToken,
				{Name: "JAX_NUM_PROCESSES", Value: "3"},
				processID(),
				{Name: "JAX_COORDINATOR_ADDRESS", Value: "tuned-node-0-0.tuned:29500"},
			}},
		{name: "the plugin's values replace the runtime template's in place", job: "four-nodes",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				c := trainerContainer(s)
				c.Env = []corev1.EnvVar{{Name: "JAX_PROCESS_ID", Value: "0"}, {Name: "JAX_NUM_PROCESSES", Value: "1"}}
				c.Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}, {ContainerPort: 29500}}
			},
			wantCount: 4,
			wantEnv: []corev1.EnvVar{
				processID(),
				{Name: "JAX_NUM_PROCESSES", Value: "4"},
				{Name: "JAX_COORDINATOR_ADDRESS", Value: "llama-node-0-0.llama:29500"},
			},
			wantPorts: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}, {ContainerPort: 29500, Protocol: corev1.ProtocolTCP}}},
		{name: "the coordinator in the runtime's network subdomain", job: "four-nodes",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				s.Template.Spec.Network = &jobsetv1alpha2.Network{Subdomain: "jax-workers"}
			},
			wantCount: 4,
			wantEnv: []corev1.EnvVar{
				{Name: "JAX_NUM_PROCESSES", Value: "4"},
				processID(),
				{Name: "JAX_COORDINATOR_ADDRESS", Value: "llama-node-0-0.jax-workers:29500"},
			}},
		{name: "a legacy runtime: trainer step and container found by name", job: "four-nodes",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				rj := &s.Template.Spec.ReplicatedJobs[0]
				rj.Name, rj.Template.Labels = "trainer-node", nil
				rj.Template.Spec.Template.Spec.Containers[0].Name = "trainer"
			},
			wantPodSet: "trainer-node", wantCount: 4,
			wantEnv: []corev1.EnvVar{
				{Name: "JAX_NUM_PROCESSES", Value: "4"},
				processID(),
				{Name: "JAX_COORDINATOR_ADDRESS", Value: "llama-trainer-node-0-0.llama:29500"},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := jaxCase(t, tc.job)
			if tc.runtime != nil {
				tc.runtime(c.Runtime)
			}
			info := frameworktest.NewInfo(t, c.Job, c.Runtime)
			before := frameworktest.NewInfo(t, c.Job, c.Runtime)
			if err := jax.New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, c.Job); err != nil {
				t.Fatal(err)
			}
			ps, got, err := info.Trainer()
			if err != nil {
				t.Fatal(err)
			}
			wantPodSet := tc.wantPodSet
			if wantPodSet == "" {
				wantPodSet = "node"
			}
			if ps.Name != wantPodSet || ps.Count != tc.wantCount {
				t.Errorf("trainer step %q of %d pods, want %q of %d", ps.Name, ps.Count, wantPodSet, tc.wantCount)
			}
			if diff := cmp.Diff(tc.wantEnv, got.Env); diff != "" {
				t.Errorf("trainer env (-want +got):\n%s", diff)
			}
			wantPorts := tc.wantPorts
			if wantPorts == nil {
				wantPorts = coordinatorPort
			}
			if diff := cmp.Diff(wantPorts, got.Ports); diff != "" {
				t.Errorf("trainer ports (-want +got):\n%s", diff)
			}
			// Nothing changes but the trainer step's count and container.
			want := before.TrainerPodSet()
			want.Count, want.Containers[0].Env, want.Containers[0].Ports = ps.Count, got.Env, got.Ports
			if diff := cmp.Diff(before, info); diff != "" {
				t.Errorf("Info changed outside the trainer step's count, env and ports (-before +after):\n%s", diff)
			}
		})
	}
}

func TestEnforceMLPolicyErrors(t *testing.T) {
	cases := []struct {
		name    string
		info    func(*framework.Info) *framework.Info
		wantErr string
	}{
		{name: "no trainer step",
			info: func(i *framework.Info) *framework.Info {
				i.PodSets[0].AncestorStep, i.PodSets[0].Name = "", "launcher"
				return i
			},
			wantErr: `the runtime has no trainer step: label a replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer (or name it "node" or "trainer-node")`},
		{name: "no trainer container",
			info: func(i *framework.Info) *framework.Info {
				i.PodSets[0].Containers = []framework.Container{{Name: "main"}, {Name: "sidecar"}}
				return i
			},
			wantErr: `replicatedJob "node" of the trainer step has no trainer container: name it "node" (or "trainer"), or give the pod a single container`},
		{name: "no pod to coordinate the others",
			info:    func(i *framework.Info) *framework.Info { i.PodSets[0].Endpoints = nil; return i },
			wantErr: `replicatedJob "node" has no pod, so it has no first pod to coordinate the others`},
		{name: "numNodes below 1 in the runtime",
			info: func(i *framework.Info) *framework.Info {
				i.RuntimePolicy.MLPolicy = []byte(`{"numNodes":0,"jax":{}}`)
				return i
			},
			wantErr: "spec.mlPolicy.numNodes: Invalid value: 0: must be at least 1"},
		{name: "no Info", info: func(*framework.Info) *framework.Info { return nil },
			wantErr: "no Info to set up the trainer step in"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := jaxCase(t, "one-node")
			info := tc.info(frameworktest.NewInfo(t, c.Job, c.Runtime))
			err := jax.New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, c.Job)
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	const reserved = " is set by the JAX plugin, which sets JAX_NUM_PROCESSES, JAX_PROCESS_ID, JAX_COORDINATOR_ADDRESS itself; remove it from spec.trainer.env"
	const noStep = `the runtime has no trainer step: label a replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer (or name it "node" or "trainer-node")`
	env := func(names ...string) *trainer.Trainer {
		t := &trainer.Trainer{}
		for _, n := range names {
			t.Env = append(t.Env, corev1.EnvVar{Name: n, Value: "x"})
		}
		return t
	}
	cases := []struct {
		name      string
		trainer   *trainer.Trainer
		noTrainer bool // the runtime has no trainer step
		check     bool // the runtime itself is checked
		nilInfo   bool
		want      []string
	}{
		{name: "no trainer section"},
		{name: "the user's own variables", trainer: env("JAX_PLATFORMS", "XLA_FLAGS", "jax_process_id")},
		{name: "JAX_PROCESS_ID", trainer: env("OK", "JAX_PROCESS_ID"),
			want: []string{"spec.trainer.env[1].name: Forbidden: JAX_PROCESS_ID" + reserved}},
		{name: "all three", trainer: env("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"),
			want: []string{
				"spec.trainer.env[0].name: Forbidden: JAX_COORDINATOR_ADDRESS" + reserved,
				"spec.trainer.env[1].name: Forbidden: JAX_NUM_PROCESSES" + reserved,
				"spec.trainer.env[2].name: Forbidden: JAX_PROCESS_ID" + reserved,
			}},
		{name: "a TrainJob of a runtime without a trainer step", noTrainer: true,
			want: []string{`spec.runtimeRef: Invalid value: "jax-distributed": ` + noStep}},
		{name: "a runtime without a trainer step", noTrainer: true, check: true,
			want: []string{"spec.template.spec.replicatedJobs: Required value: " + noStep}},
		{name: "a runtime with a trainer step", check: true},
		{name: "both at once", trainer: env("JAX_NUM_PROCESSES"), noTrainer: true,
			want: []string{
				"spec.trainer.env[0].name: Forbidden: JAX_NUM_PROCESSES" + reserved,
				`spec.runtimeRef: Invalid value: "jax-distributed": ` + noStep,
			}},
		{name: "without Info, the TrainJob alone", trainer: env("JAX_PROCESS_ID"), nilInfo: true,
			want: []string{"spec.trainer.env[0].name: Forbidden: JAX_PROCESS_ID" + reserved}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := jaxCase(t, "one-node")
			if tc.noTrainer {
				rj := &c.Runtime.Template.Spec.ReplicatedJobs[0]
				rj.Name, rj.Template.Labels = "launcher", nil
			}
			job := c.Job
			kind := framework.ValidateTrainJob
			if tc.check {
				job = framework.RuntimeCheckJob("jax-distributed")
				kind = framework.ValidateRuntime
			}
			// Info first: NewInfo itself refuses a trainer section without
			// a trainer step, which Validate must report on its own.
			info := frameworktest.NewInfo(t, job, c.Runtime)
			job.Spec.Trainer = tc.trainer
			if tc.nilInfo {
				info = nil
			}
			warnings, errs, _ := jax.New().(framework.Validator).Validate(context.Background(), framework.ValidateRequest{Kind: kind, Info: info, NewJob: job})
			if len(warnings) != 0 {
				t.Errorf("warnings %q, want none", warnings)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
