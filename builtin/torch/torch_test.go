package torch

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// labelledRuntime is a runtime in today's convention: an initializer, a
// trainer step marked by the ancestor label and a main container "node"
// next to a sidecar.
const labelledRuntime = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
spec:
  mlPolicy:
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: dataset-initializer
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
            spec:
              template:
                spec:
                  containers:
                    - name: dataset-initializer
                      image: ghcr.io/kubeflow/trainer/dataset-initializer
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                      command: ["torchrun", "/workspace/train.py"]
                      env:
                        - name: LOG_LEVEL
                          value: info
                        - name: NCCL_DEBUG
                          value: WARN
                    - name: log-shipper
                      image: fluent/fluent-bit
`

const labelledJob = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: llm
  namespace: team-a
spec:
  runtimeRef:
    name: torch-distributed
`

func trainerOrDie(t *testing.T, info *framework.Info) (*framework.PodSet, *framework.Container) {
	t.Helper()
	ps, c, err := info.Trainer()
	if err != nil {
		t.Fatal(err)
	}
	return ps, c
}

func env(c *framework.Container, name string) (corev1.EnvVar, bool) {
	for _, v := range c.Env {
		if v.Name == name {
			return v, true
		}
	}
	return corev1.EnvVar{}, false
}

func ios(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
func ioi(i int) *intstr.IntOrString    { v := intstr.FromInt(i); return &v }

func resources(limits, requests corev1.ResourceList) *corev1.ResourceRequirements {
	return &corev1.ResourceRequirements{Limits: limits, Requests: requests}
}

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func nodeRank() corev1.EnvVar {
	return corev1.EnvVar{Name: EnvNodeRank, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"},
	}}
}

func TestDescribe(t *testing.T) {
	want := framework.Description{Name: "Torch", Version: "v0.1.0", MLPolicyKeys: []string{"torch"}, Builds: []schema.GroupVersionKind{HPAGVK}}
	if diff := cmp.Diff(want, New().Describe()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

// TestEnforceSeed is the seed's Torch example, end to end through NewInfo.
// Its runtime is a legacy one: the trainer step is found by its name,
// trainer-node, and container name, trainer.
func TestEnforceSeed(t *testing.T) {
	spec, job := frameworktest.Seed(t, frameworktest.SeedTorch)
	info := frameworktest.NewInfo(t, job, spec)
	if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	ps, c := trainerOrDie(t, info)
	if ps.Name != "trainer-node" || ps.Count != 3 {
		t.Errorf("trainer PodSet %q count %d, want trainer-node count 3", ps.Name, ps.Count)
	}
	want := framework.Container{
		Name:  "trainer",
		Image: "docker.io/andreyvelichkevich/test-torch",
		Env: []corev1.EnvVar{
			{Name: "TRAIN_JOB", Value: "env"},
			{Name: "PET_NNODES", Value: "3"},
			{Name: "PET_NPROC_PER_NODE", Value: "5"},
			nodeRank(),
			{Name: "PET_MASTER_ADDR", Value: "first-job-trainer-node-0-0.first-job"},
			{Name: "PET_MASTER_PORT", Value: "29500"},
		},
		Ports: []corev1.ContainerPort{{ContainerPort: 29500, Protocol: corev1.ProtocolTCP}},
	}
	if diff := cmp.Diff(want, *c); diff != "" {
		t.Errorf("trainer container (-want +got):\n%s", diff)
	}
}

func TestEnforceLabelledRuntime(t *testing.T) {
	job := frameworktest.TrainJob(t, labelledJob)
	job.Spec.Trainer = &trainer.Trainer{
		NumNodes: ptr.To[int32](4),
		Env: []corev1.EnvVar{
			{Name: "NCCL_DEBUG", Value: "INFO"},
			{Name: "HF_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "hf"}, Key: "token"}}},
		},
	}
	spec := frameworktest.Runtime(t, labelledRuntime)
	info := frameworktest.NewInfo(t, job, spec)
	before := frameworktest.NewInfo(t, job, spec)
	if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	ps, c := trainerOrDie(t, info)
	if ps.Name != "node" || ps.Count != 4 {
		t.Errorf("trainer PodSet %q count %d, want node count 4", ps.Name, ps.Count)
	}
	wantEnv := []corev1.EnvVar{
		{Name: "LOG_LEVEL", Value: "info"},
		{Name: "NCCL_DEBUG", Value: "INFO"},
		job.Spec.Trainer.Env[1],
		{Name: "PET_NNODES", Value: "4"},
		{Name: "PET_NPROC_PER_NODE", Value: "auto"},
		nodeRank(),
		{Name: "PET_MASTER_ADDR", Value: "llm-node-0-0.llm"},
		{Name: "PET_MASTER_PORT", Value: "29500"},
	}
	if diff := cmp.Diff(wantEnv, c.Env); diff != "" {
		t.Errorf("trainer env (-want +got):\n%s", diff)
	}
	if c.Name != "node" {
		t.Errorf("main container %q, want node", c.Name)
	}
	// Everything but the trainer's count and main container is untouched.
	ps.Count = before.TrainerPodSet().Count
	ps.Containers[0] = before.TrainerPodSet().Containers[0]
	if diff := cmp.Diff(before, info); diff != "" {
		t.Errorf("Info changed outside the trainer container (-before +after):\n%s", diff)
	}
	// The user's env is copied, not shared with the TrainJob.
	c = info.TrainerPodSet().TrainerContainer()
	if v, _ := env(c, "HF_TOKEN"); v.ValueFrom == job.Spec.Trainer.Env[1].ValueFrom {
		t.Error("HF_TOKEN's valueFrom is shared with the TrainJob")
	}
}

func TestEnforceIsIdempotent(t *testing.T) {
	spec, job := frameworktest.Seed(t, frameworktest.SeedTorch)
	info := frameworktest.NewInfo(t, job, spec)
	p := New().(framework.MLPolicyEnforcer)
	if err := p.EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	once := *info.TrainerPodSet().TrainerContainer()
	once.Env = append([]corev1.EnvVar(nil), once.Env...)
	once.Ports = append([]corev1.ContainerPort(nil), once.Ports...)
	if err := p.EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(once, *info.TrainerPodSet().TrainerContainer()); diff != "" {
		t.Errorf("second enforce changed the container (-once +twice):\n%s", diff)
	}
}

func TestEnforceKeepsRuntimePortAndReplacesRuntimePET(t *testing.T) {
	spec, job := frameworktest.Seed(t, frameworktest.SeedTorch)
	c := &spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}, {ContainerPort: 29500}}
	c.Env = []corev1.EnvVar{{Name: "PET_MASTER_PORT", Value: "1234"}, {Name: "OMP_NUM_THREADS", Value: "1"}}
	info := frameworktest.NewInfo(t, job, spec)
	if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	_, got := trainerOrDie(t, info)
	wantPorts := []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}, {ContainerPort: 29500, Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(wantPorts, got.Ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	wantEnv := []corev1.EnvVar{
		{Name: "PET_MASTER_PORT", Value: "29500"},
		{Name: "OMP_NUM_THREADS", Value: "1"},
		{Name: "TRAIN_JOB", Value: "env"},
		{Name: "PET_NNODES", Value: "3"},
		{Name: "PET_NPROC_PER_NODE", Value: "5"},
		nodeRank(),
		{Name: "PET_MASTER_ADDR", Value: "first-job-trainer-node-0-0.first-job"},
	}
	if diff := cmp.Diff(wantEnv, got.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestEnforceNumNodes(t *testing.T) {
	cases := []struct {
		name        string
		runtimeNum  *int32
		noMLNumKeys bool
		jobNum      *int32
		want        int32
	}{
		{name: "TrainJob wins over the runtime", runtimeNum: ptr.To[int32](2), jobNum: ptr.To[int32](3), want: 3},
		{name: "runtime when the TrainJob sets none", runtimeNum: ptr.To[int32](2), want: 2},
		{name: "1 when neither sets it", want: 1},
		{name: "TrainJob alone", jobNum: ptr.To[int32](7), want: 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, job := frameworktest.Seed(t, frameworktest.SeedTorch)
			spec.MLPolicy.NumNodes = tc.runtimeNum
			job.Spec.Trainer.NumNodes = tc.jobNum
			info := frameworktest.NewInfo(t, job, spec)
			if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
				t.Fatal(err)
			}
			ps, c := trainerOrDie(t, info)
			if ps.Count != tc.want {
				t.Errorf("count %d, want %d", ps.Count, tc.want)
			}
			if v, _ := env(c, EnvNumNodes); v.Value != itoa(tc.want) {
				t.Errorf("%s=%q, want %d", EnvNumNodes, v.Value, tc.want)
			}
		})
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func TestEnforceErrors(t *testing.T) {
	noTrainer := `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: no-trainer
spec:
  mlPolicy:
    torch: {}
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
  mlPolicy:
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: main
                      image: pytorch/pytorch
                    - name: sidecar
                      image: busybox
`
	cases := []struct {
		name    string
		runtime string // YAML; the seed's runtime when empty
		job     func(*trainer.TrainJob)
		info    func(*framework.Info)
		nilInfo bool
		nilJob  bool
		wantErr string
	}{
		{name: "no trainer step", runtime: noTrainer, wantErr: "the runtime has no trainer step"},
		{name: "no trainer container", runtime: twoContainers, wantErr: `replicatedJob "node" of the trainer step has no trainer container`},
		{name: "bad numProcPerNode from the TrainJob",
			job: func(j *trainer.TrainJob) {
				j.Spec.Trainer = &trainer.Trainer{NumProcPerNode: ios("abc")}
			},
			wantErr: `spec.trainer.numProcPerNode: Invalid value: "abc"`},
		{name: "bad numProcPerNode from the runtime",
			info: func(i *framework.Info) {
				i.RuntimePolicy.MLPolicy = []byte(`{"torch":{"numProcPerNode":0}}`)
			},
			wantErr: `spec.mlPolicy.torch.numProcPerNode: Invalid value: "0"`},
		{name: "numNodes below 1 in the runtime",
			info: func(i *framework.Info) {
				i.RuntimePolicy.MLPolicy = []byte(`{"numNodes":0,"torch":{}}`)
			},
			wantErr: "spec.mlPolicy.numNodes: Invalid value: 0"},
		{name: "undecodable mlPolicy",
			info:    func(i *framework.Info) { i.RuntimePolicy.MLPolicy = []byte(`{"torch":[]}`) },
			wantErr: "decoding Info.runtimePolicy.mlPolicy"},
		{name: "nil Info", nilInfo: true, wantErr: "no Info"},
		{name: "nil TrainJob", nilJob: true, wantErr: "no TrainJob"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := frameworktest.TrainJob(t, labelledJob)
			if tc.job != nil {
				tc.job(job)
			}
			spec, _ := frameworktest.Seed(t, frameworktest.SeedTorch)
			if tc.runtime != "" {
				spec = frameworktest.Runtime(t, tc.runtime)
			}
			info := frameworktest.NewInfo(t, job, spec)
			if tc.info != nil {
				tc.info(info)
			}
			if tc.nilInfo {
				info = nil
			}
			if tc.nilJob {
				job = nil
			}
			err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
