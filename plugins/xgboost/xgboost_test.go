package xgboost_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
	"github.com/trainforge/trainforge/plugins/xgboost"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// runtimeFile is the xgboost-distributed-shaped runtime of testdata.
const runtimeFile = "testdata/xgboost-distributed.yaml"

// xgbCase reads a TrainJob of testdata with the xgboost-distributed
// runtime.
func xgbCase(t *testing.T, name string) sdktest.Case {
	return sdktest.CaseFromFiles(t, name, runtimeFile, "testdata/"+name+".yaml")
}

// dmlc is the plugin's variables, in the order it sets them.
func dmlc(tracker, numWorker string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "DMLC_TRACKER_URI", Value: tracker},
		{Name: "DMLC_TRACKER_PORT", Value: "29500"},
		{Name: "DMLC_TASK_ID", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"},
		}},
		{Name: "DMLC_NUM_WORKER", Value: numWorker},
	}
}

func trainerContainer(s *trainer.TrainingRuntimeSpec) *corev1.Container {
	return &s.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0]
}

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

var trackerPort = []corev1.ContainerPort{{ContainerPort: 29500, Protocol: corev1.ProtocolTCP}}

func TestDescribe(t *testing.T) {
	want := framework.Description{Name: "XGBoost", Version: "v0.1.0", MLPolicyKeys: []string{"xgboost"}}
	if diff := cmp.Diff(want, xgboost.New().Describe()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

func TestEnforceMLPolicy(t *testing.T) {
	dataPath := corev1.EnvVar{Name: "DATA_PATH", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "data"}, Key: "path"}}}
	cases := []struct {
		name    string
		job     string // a TrainJob of testdata
		runtime func(*trainer.TrainingRuntimeSpec)
		trainer func(*trainer.Trainer)
		// wantPodSet is the trainer replicatedJob; "node" when empty.
		wantPodSet string
		wantCount  int32
		wantEnv    []corev1.EnvVar
		wantPorts  []corev1.ContainerPort
	}{
		{name: "one CPU node from the runtime, no trainer section", job: "one-node", wantCount: 1,
			wantEnv: dmlc("higgs-node-0-0.higgs", "1")},
		{name: "four CPU nodes, one worker each", job: "four-nodes", wantCount: 4,
			wantEnv: dmlc("churn-node-0-0.churn", "4")},
		{name: "the runtime's numNodes when the TrainJob sets none", job: "one-node",
			runtime:   func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.NumNodes = ptr.To[int32](5) },
			wantCount: 5, wantEnv: dmlc("higgs-node-0-0.higgs", "5")},
		{name: "two nodes of two GPUs from the TrainJob's resourcesPerNode", job: "two-gpus-per-node", wantCount: 2,
			wantEnv: dmlc("ranking-node-0-0.ranking", "4")},
		{name: "GPUs from the runtime's requests", job: "four-nodes",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				trainerContainer(s).Resources = *resources(nil, list("nvidia.com/gpu", "3"))
			},
			trainer:   func(t *trainer.Trainer) { t.ResourcesPerNode = nil },
			wantCount: 4, wantEnv: dmlc("churn-node-0-0.churn", "12")},
		{name: "the TrainJob's resourcesPerNode without GPUs replaces the runtime's", job: "four-nodes",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				trainerContainer(s).Resources = *resources(list("nvidia.com/gpu", "8"), nil)
			},
			wantCount: 4, wantEnv: dmlc("churn-node-0-0.churn", "4")},
		{name: "GPUs of two vendors add up", job: "two-gpus-per-node",
			trainer: func(t *trainer.Trainer) {
				t.ResourcesPerNode = resources(list("nvidia.com/gpu", "2", "amd.com/gpu", "1"), nil)
			},
			wantCount: 2, wantEnv: dmlc("ranking-node-0-0.ranking", "6")},
		{name: "GPU limits before requests", job: "two-gpus-per-node",
			trainer: func(t *trainer.Trainer) {
				t.ResourcesPerNode = resources(list("nvidia.com/gpu", "4"), list("nvidia.com/gpu", "1"))
			},
			wantCount: 2, wantEnv: dmlc("ranking-node-0-0.ranking", "8")},
		{name: "the user's env after the runtime's, the plugin's last", job: "user-env",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				trainerContainer(s).Env = []corev1.EnvVar{{Name: "OMP_NUM_THREADS", Value: "1"}, {Name: "LOG_LEVEL", Value: "info"}}
			},
			wantCount: 3,
			wantEnv: append([]corev1.EnvVar{
				{Name: "OMP_NUM_THREADS", Value: "8"},
				{Name: "LOG_LEVEL", Value: "info"},
				{Name: "DMLC_WORKER_CONNECT_RETRY", Value: "5"},
				dataPath,
			}, dmlc("tuned-node-0-0.tuned", "3")...)},
		{name: "the plugin's values replace the runtime template's in place", job: "four-nodes",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				c := trainerContainer(s)
				c.Env = []corev1.EnvVar{{Name: "DMLC_NUM_WORKER", Value: "1"}, {Name: "DMLC_TRACKER_PORT", Value: "9091"}}
				c.Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}, {ContainerPort: 29500}}
			},
			wantCount: 4,
			wantEnv: []corev1.EnvVar{
				{Name: "DMLC_NUM_WORKER", Value: "4"},
				{Name: "DMLC_TRACKER_PORT", Value: "29500"},
				{Name: "DMLC_TRACKER_URI", Value: "churn-node-0-0.churn"},
				dmlc("", "")[2],
			},
			wantPorts: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}, {ContainerPort: 29500, Protocol: corev1.ProtocolTCP}}},
		{name: "the tracker in the runtime's network subdomain", job: "four-nodes",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				s.Template.Spec.Network = &jobsetv1alpha2.Network{Subdomain: "xgb-workers"}
			},
			wantCount: 4, wantEnv: dmlc("churn-node-0-0.xgb-workers", "4")},
		{name: "a legacy runtime: trainer step and container found by name", job: "four-nodes",
			runtime: func(s *trainer.TrainingRuntimeSpec) {
				rj := &s.Template.Spec.ReplicatedJobs[0]
				rj.Name, rj.Template.Labels = "trainer-node", nil
				rj.Template.Spec.Template.Spec.Containers[0].Name = "trainer"
			},
			wantPodSet: "trainer-node", wantCount: 4, wantEnv: dmlc("churn-trainer-node-0-0.churn", "4")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := xgbCase(t, tc.job)
			if tc.runtime != nil {
				tc.runtime(c.Runtime)
			}
			if tc.trainer != nil {
				tc.trainer(c.Job.Spec.Trainer)
			}
			info := frameworktest.NewInfo(t, c.Job, c.Runtime)
			before := frameworktest.NewInfo(t, c.Job, c.Runtime)
			if err := xgboost.New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, c.Job); err != nil {
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
				wantPorts = trackerPort
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
		{name: "no pod to run the tracker",
			info:    func(i *framework.Info) *framework.Info { i.PodSets[0].Endpoints = nil; return i },
			wantErr: `replicatedJob "node" has no pod, so it has no first pod to coordinate the others`},
		{name: "numNodes below 1 in the runtime",
			info: func(i *framework.Info) *framework.Info {
				i.RuntimePolicy.MLPolicy = []byte(`{"numNodes":0,"xgboost":{}}`)
				return i
			},
			wantErr: "spec.mlPolicy.numNodes: Invalid value: 0: must be at least 1"},
		{name: "no Info", info: func(*framework.Info) *framework.Info { return nil },
			wantErr: "no Info to set up the trainer step in"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := xgbCase(t, "one-node")
			info := tc.info(frameworktest.NewInfo(t, c.Job, c.Runtime))
			err := xgboost.New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, c.Job)
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	const reserved = " is set by the XGBoost plugin, which sets DMLC_TRACKER_URI, DMLC_TRACKER_PORT, DMLC_TASK_ID, DMLC_NUM_WORKER itself; remove it from spec.trainer.env"
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
		{name: "the user's own variables", trainer: env("OMP_NUM_THREADS", "DMLC_WORKER_CONNECT_RETRY", "dmlc_task_id")},
		{name: "DMLC_TASK_ID", trainer: env("OK", "DMLC_TASK_ID"),
			want: []string{"spec.trainer.env[1].name: Forbidden: DMLC_TASK_ID" + reserved}},
		{name: "all four", trainer: env("DMLC_NUM_WORKER", "DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID"),
			want: []string{
				"spec.trainer.env[0].name: Forbidden: DMLC_NUM_WORKER" + reserved,
				"spec.trainer.env[1].name: Forbidden: DMLC_TRACKER_URI" + reserved,
				"spec.trainer.env[2].name: Forbidden: DMLC_TRACKER_PORT" + reserved,
				"spec.trainer.env[3].name: Forbidden: DMLC_TASK_ID" + reserved,
			}},
		{name: "a TrainJob of a runtime without a trainer step", noTrainer: true,
			want: []string{`spec.runtimeRef: Invalid value: "xgboost-distributed": ` + noStep}},
		{name: "a runtime without a trainer step", noTrainer: true, check: true,
			want: []string{"spec.template.spec.replicatedJobs: Required value: " + noStep}},
		{name: "a runtime with a trainer step", check: true},
		{name: "both at once", trainer: env("DMLC_TRACKER_URI"), noTrainer: true,
			want: []string{
				"spec.trainer.env[0].name: Forbidden: DMLC_TRACKER_URI" + reserved,
				`spec.runtimeRef: Invalid value: "xgboost-distributed": ` + noStep,
			}},
		{name: "without Info, the TrainJob alone", trainer: env("DMLC_NUM_WORKER"), nilInfo: true,
			want: []string{"spec.trainer.env[0].name: Forbidden: DMLC_NUM_WORKER" + reserved}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := xgbCase(t, "one-node")
			if tc.noTrainer {
				rj := &c.Runtime.Template.Spec.ReplicatedJobs[0]
				rj.Name, rj.Template.Labels = "launcher", nil
			}
			job := c.Job
			kind := framework.ValidateTrainJob
			if tc.check {
				job = framework.RuntimeCheckJob("xgboost-distributed")
				kind = framework.ValidateRuntime
			}
			// Info first: NewInfo itself refuses a trainer section without
			// a trainer step, which Validate must report on its own.
			info := frameworktest.NewInfo(t, job, c.Runtime)
			job.Spec.Trainer = tc.trainer
			if tc.nilInfo {
				info = nil
			}
			warnings, errs, _ := xgboost.New().(framework.Validator).Validate(context.Background(), framework.ValidateRequest{Kind: kind, Info: info, NewJob: job})
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
