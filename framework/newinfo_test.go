package framework_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// infoOpts compares Info values: quantities by value, raw JSON by meaning,
// nil and empty alike.
var infoOpts = cmp.Options{
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
	cmp.Transformer("json", func(r json.RawMessage) any {
		if len(r) == 0 {
			return nil
		}
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			return "invalid JSON: " + string(r)
		}
		return v
	}),
	// The transformer above already equates empty raw JSON.
	cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().Type() != reflect.TypeOf(json.RawMessage(nil))
	}, cmpopts.EquateEmpty()),
}

func quantities(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestNewInfoSeeds(t *testing.T) {
	cases := []struct {
		file          string
		want          *framework.Info
		wantContainer string
	}{
		{
			file: frameworktest.SeedPlainML,
			want: &framework.Info{
				Version:       "v1",
				RuntimePolicy: framework.RuntimePolicy{MLPolicy: json.RawMessage(`{"numNodes":5}`)},
				PodSets: []framework.PodSet{{
					Name:         "trainer-node",
					AncestorStep: "trainer",
					Replicas:     1,
					Count:        1,
					Containers: []framework.Container{{
						Name:    "trainer",
						Image:   "python:alpine3.20",
						Command: []string{"/bin/sh", "-c", "echo 'Hello From Training Runtime'"},
					}},
					Endpoints: []string{"first-job-trainer-node-0-0.first-job"},
				}},
			},
			wantContainer: "trainer",
		},
		{
			file: frameworktest.SeedTorch,
			want: &framework.Info{
				Version:       "v1",
				RuntimePolicy: framework.RuntimePolicy{MLPolicy: json.RawMessage(`{"numNodes":2,"torch":{"numProcPerNode":"1"}}`)},
				PodSets: []framework.PodSet{{
					Name:         "trainer-node",
					AncestorStep: "trainer",
					Replicas:     1,
					Count:        1,
					Containers:   []framework.Container{{Name: "trainer", Image: "docker.io/andreyvelichkevich/test-torch"}},
					Endpoints:    []string{"first-job-trainer-node-0-0.first-job"},
				}},
			},
			wantContainer: "trainer",
		},
		{
			file: frameworktest.SeedCoscheduling,
			want: &framework.Info{
				Version: "v1",
				RuntimePolicy: framework.RuntimePolicy{
					MLPolicy:       json.RawMessage(`{"numNodes":10,"torch":{}}`),
					PodGroupPolicy: json.RawMessage(`{"coscheduling":{}}`),
				},
				PodSets: []framework.PodSet{{
					Name:         "node",
					AncestorStep: "trainer",
					Replicas:     1,
					Count:        1,
					Containers: []framework.Container{{
						Name:      "node",
						Image:     "pytorch/pytorch",
						Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "3", "memory", "4Gi")},
					}},
					Endpoints:         []string{"gang-job-node-0-0.gang-job"},
					SinglePodRequests: quantities("cpu", "3", "memory", "4Gi"),
				}},
			},
			wantContainer: "node",
		},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			spec, job := frameworktest.Seed(t, tc.file)
			info := frameworktest.NewInfo(t, job, spec)
			if diff := cmp.Diff(tc.want, info, infoOpts, cmpopts.IgnoreFields(framework.Info{}, "Template")); diff != "" {
				t.Errorf("Info (-want +got):\n%s", diff)
			}
			// Without runtimePatches the template is the runtime's.
			tmpl, err := info.TemplateSpec()
			if err != nil {
				t.Fatalf("TemplateSpec: %v", err)
			}
			if diff := cmp.Diff(&spec.Template, tmpl, infoOpts); diff != "" {
				t.Errorf("Info.Template (-runtime +got):\n%s", diff)
			}
			ps := info.TrainerPodSet()
			if ps == nil {
				t.Fatal("no trainer PodSet")
			}
			c := ps.TrainerContainer()
			if c == nil || c.Name != tc.wantContainer {
				t.Errorf("TrainerContainer() = %+v, want the container named %q", c, tc.wantContainer)
			}
			// The Info is plain data: it survives the wire.
			data, err := json.Marshal(info)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			var back framework.Info
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(info, &back, infoOpts); diff != "" {
				t.Errorf("Info after a JSON round trip (-before +after):\n%s", diff)
			}
		})
	}
}

// replicatedJob renders one replicatedJob of a template in YAML; label is
// its ancestor step ("" for none) and containers its container names.
func replicatedJob(name, label string, containers ...string) string {
	var b strings.Builder
	b.WriteString("    - name: " + name + "\n      template:\n")
	if label != "" {
		b.WriteString("        metadata:\n          labels:\n            trainer.kubeflow.org/trainjob-ancestor-step: " + label + "\n")
	}
	b.WriteString("        spec:\n          template:\n            spec:\n              containers:\n")
	for _, c := range containers {
		b.WriteString("              - name: " + c + "\n                image: img-" + c + "\n")
	}
	return b.String()
}

func templateOf(rjobs ...string) string {
	return "template:\n  spec:\n    replicatedJobs:\n" + strings.Join(rjobs, "")
}

func TestNewInfoTrainerStep(t *testing.T) {
	cases := []struct {
		name          string
		rjobs         []string
		wantSteps     map[string]string // replicatedJob → ancestor step
		wantTrainer   string            // "" for none
		wantContainer string            // "" for none
	}{
		{
			name:          "legacy trainer-node with container trainer",
			rjobs:         []string{replicatedJob("trainer-node", "", "trainer")},
			wantSteps:     map[string]string{"trainer-node": "trainer"},
			wantTrainer:   "trainer-node",
			wantContainer: "trainer",
		},
		{
			name:          "legacy node with container node",
			rjobs:         []string{replicatedJob("dataset-initializer", "dataset-initializer", "dataset-initializer"), replicatedJob("node", "", "node")},
			wantSteps:     map[string]string{"dataset-initializer": "dataset-initializer", "node": "trainer"},
			wantTrainer:   "node",
			wantContainer: "node",
		},
		{
			name:          "trainer container found among several",
			rjobs:         []string{replicatedJob("trainer-node", "", "log-shipper", "trainer")},
			wantSteps:     map[string]string{"trainer-node": "trainer"},
			wantTrainer:   "trainer-node",
			wantContainer: "trainer",
		},
		{
			name:          "node preferred to trainer as container",
			rjobs:         []string{replicatedJob("trainer-node", "", "trainer", "node")},
			wantSteps:     map[string]string{"trainer-node": "trainer"},
			wantTrainer:   "trainer-node",
			wantContainer: "node",
		},
		{
			name:          "the only container whatever its name",
			rjobs:         []string{replicatedJob("node", "", "main")},
			wantSteps:     map[string]string{"node": "trainer"},
			wantTrainer:   "node",
			wantContainer: "main",
		},
		{
			name:        "no main container among several",
			rjobs:       []string{replicatedJob("node", "", "a", "b")},
			wantSteps:   map[string]string{"node": "trainer"},
			wantTrainer: "node",
		},
		{
			name:          "the label wins over the legacy names",
			rjobs:         []string{replicatedJob("node", "", "node"), replicatedJob("workers", "trainer", "node")},
			wantSteps:     map[string]string{"node": "", "workers": "trainer"},
			wantTrainer:   "workers",
			wantContainer: "node",
		},
		{
			name:      "a legacy name labelled as another step is not the trainer",
			rjobs:     []string{replicatedJob("node", "model-initializer", "model-initializer")},
			wantSteps: map[string]string{"node": "model-initializer"},
		},
		{
			name:      "no trainer step",
			rjobs:     []string{replicatedJob("launcher", "", "launcher"), replicatedJob("worker", "", "worker")},
			wantSteps: map[string]string{"launcher": "", "worker": ""},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info := frameworktest.NewInfo(t, testJob(), frameworktest.Runtime(t, templateOf(tc.rjobs...)))
			steps := map[string]string{}
			for _, ps := range info.PodSets {
				steps[ps.Name] = ps.AncestorStep
			}
			if diff := cmp.Diff(tc.wantSteps, steps); diff != "" {
				t.Errorf("ancestor steps (-want +got):\n%s", diff)
			}
			var gotTrainer, gotContainer string
			if ps := info.TrainerPodSet(); ps != nil {
				gotTrainer = ps.Name
				if c := ps.TrainerContainer(); c != nil {
					gotContainer = c.Name
				}
			}
			if diff := cmp.Diff(tc.wantTrainer+"/"+tc.wantContainer, gotTrainer+"/"+gotContainer); diff != "" {
				t.Errorf("trainer step/container (-want +got):\n%s", diff)
			}
		})
	}
}

const overridesRuntime = `
template:
  metadata:
    labels:
      team: runtime
      shared: runtime
    annotations:
      note: runtime
      shared: runtime
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
                image: kubeflow/dataset-initializer
                env:
                - name: STORAGE_URI
                  value: hf://runtime-default
                - name: KEEP
                  value: runtime
              - name: log-shipper
                image: fluent-bit
    - name: model-initializer
      template:
        metadata:
          labels:
            trainer.kubeflow.org/trainjob-ancestor-step: model-initializer
        spec:
          template:
            spec:
              containers:
              - name: init
                image: kubeflow/model-initializer
                envFrom:
                - configMapRef:
                    name: model-defaults
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
                image: runtime/image
                command: [runtime]
                args: [--runtime]
                env:
                - name: RUNTIME_ENV
                  value: "1"
                resources:
                  requests:
                    cpu: "1"
              - name: metrics
                image: metrics
                resources:
                  requests:
                    cpu: 100m
`

const overridesJob = `
metadata:
  name: job
  namespace: team-a
spec:
  runtimeRef:
    name: rt
  labels:
    shared: job
    owner: alice
  annotations:
    shared: job
  trainer:
    image: user/image
    command: [python, train.py]
    args: [--epochs, "3"]
    resourcesPerNode:
      requests:
        cpu: "4"
        memory: 8Gi
      limits:
        nvidia.com/gpu: 2
  initializer:
    dataset:
      storageUri: hf://user/dataset
      env:
      - name: KEEP
        value: job
      - name: EXTRA
        value: "yes"
      secretRef:
        name: dataset-creds
    model:
      storageUri: s3://bucket/model
      env:
      - name: MODEL_EXTRA
        value: "1"
      secretRef:
        name: model-creds
`

func TestNewInfoTrainJobOverrides(t *testing.T) {
	info := frameworktest.NewInfo(t, frameworktest.TrainJob(t, overridesJob), frameworktest.Runtime(t, overridesRuntime))
	want := []framework.PodSet{
		{
			Name: "dataset-initializer", AncestorStep: "dataset-initializer", Replicas: 1, Count: 1,
			Containers: []framework.Container{
				{
					Name:  "dataset-initializer",
					Image: "kubeflow/dataset-initializer",
					Env: []corev1.EnvVar{
						{Name: "STORAGE_URI", Value: "hf://user/dataset"},
						{Name: "KEEP", Value: "job"},
						{Name: "EXTRA", Value: "yes"},
					},
					EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "dataset-creds"}}}},
				},
				{Name: "log-shipper", Image: "fluent-bit"},
			},
			Endpoints: []string{"job-dataset-initializer-0-0.job"},
		},
		{
			Name: "model-initializer", AncestorStep: "model-initializer", Replicas: 1, Count: 1,
			Containers: []framework.Container{{
				Name:  "init",
				Image: "kubeflow/model-initializer",
				Env: []corev1.EnvVar{
					{Name: "STORAGE_URI", Value: "s3://bucket/model"},
					{Name: "MODEL_EXTRA", Value: "1"},
				},
				EnvFrom: []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "model-defaults"}}},
					{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "model-creds"}}},
				},
			}},
			Endpoints: []string{"job-model-initializer-0-0.job"},
		},
		{
			Name: "node", AncestorStep: "trainer", Replicas: 1, Count: 1,
			Containers: []framework.Container{
				{
					Name:    "node",
					Image:   "user/image",
					Command: []string{"python", "train.py"},
					Args:    []string{"--epochs", "3"},
					// The trainer's env is the ML plugins' business.
					Env: []corev1.EnvVar{{Name: "RUNTIME_ENV", Value: "1"}},
					Resources: corev1.ResourceRequirements{
						Requests: quantities("cpu", "4", "memory", "8Gi"),
						Limits:   quantities("nvidia.com/gpu", "2"),
					},
				},
				{Name: "metrics", Image: "metrics", Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "100m")}},
			},
			Endpoints: []string{"job-node-0-0.job"},
			// The GPU limit counts as a request; the sidecar container adds up.
			SinglePodRequests: quantities("cpu", "4100m", "memory", "8Gi", "nvidia.com/gpu", "2"),
		},
	}
	if diff := cmp.Diff(want, info.PodSets, infoOpts); diff != "" {
		t.Errorf("PodSets (-want +got):\n%s", diff)
	}
	wantLabels := map[string]string{"team": "runtime", "shared": "job", "owner": "alice"}
	if diff := cmp.Diff(wantLabels, info.Labels); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
	wantAnnotations := map[string]string{"note": "runtime", "shared": "job"}
	if diff := cmp.Diff(wantAnnotations, info.Annotations); diff != "" {
		t.Errorf("Annotations (-want +got):\n%s", diff)
	}
}

func TestNewInfoPartialOverrides(t *testing.T) {
	cases := []struct {
		name string
		job  string
		want framework.Container
	}{
		{
			name: "image only keeps the runtime's command and args",
			job:  "spec:\n  trainer:\n    image: user/image\n",
			want: framework.Container{Name: "node", Image: "user/image", Command: []string{"runtime"}, Args: []string{"--runtime"}},
		},
		{
			name: "args only",
			job:  "spec:\n  trainer:\n    args: [--fast]\n",
			want: framework.Container{Name: "node", Image: "runtime/image", Command: []string{"runtime"}, Args: []string{"--fast"}},
		},
		{
			name: "numNodes only changes no container",
			job:  "spec:\n  trainer:\n    numNodes: 3\n",
			want: framework.Container{Name: "node", Image: "runtime/image", Command: []string{"runtime"}, Args: []string{"--runtime"}},
		},
	}
	const rt = `
template:
  spec:
    replicatedJobs:
    - name: node
      template:
        spec:
          template:
            spec:
              containers:
              - name: node
                image: runtime/image
                command: [runtime]
                args: [--runtime]
`
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := frameworktest.TrainJob(t, "metadata:\n  name: job\n"+tc.job)
			info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, rt))
			if diff := cmp.Diff([]framework.Container{tc.want}, info.PodSets[0].Containers, infoOpts); diff != "" {
				t.Errorf("trainer container (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewInfoDoesNotChangeItsInputs(t *testing.T) {
	spec := frameworktest.Runtime(t, overridesRuntime)
	job := frameworktest.TrainJob(t, overridesJob)
	specBefore, jobBefore := spec.DeepCopy(), job.DeepCopy()
	info := frameworktest.NewInfo(t, job, spec)
	// Plugins change Info in place; that must not reach the runtime or the
	// TrainJob (which come from the informer cache).
	for k := range info.PodSets {
		for c := range info.PodSets[k].Containers {
			ctr := &info.PodSets[k].Containers[c]
			ctr.UpsertEnv(corev1.EnvVar{Name: "KEEP", Value: "plugin"}, corev1.EnvVar{Name: "STORAGE_URI", Value: "plugin"})
			for i := range ctr.Command {
				ctr.Command[i] = "plugin"
			}
			for i := range ctr.Args {
				ctr.Args[i] = "plugin"
			}
			if ctr.Resources.Requests != nil {
				ctr.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("99")
			}
		}
	}
	if diff := cmp.Diff(specBefore, spec, infoOpts); diff != "" {
		t.Errorf("runtime spec changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(jobBefore, job, infoOpts); diff != "" {
		t.Errorf("TrainJob changed (-before +after):\n%s", diff)
	}
}

func TestNewInfoTrainerOverridesWithoutTrainer(t *testing.T) {
	cases := []struct {
		name    string
		runtime string
		job     string
		wantErr string // "" for success
	}{
		{
			name:    "no trainer step",
			runtime: templateOf(replicatedJob("launcher", "", "launcher")),
			job:     "spec:\n  trainer:\n    image: user/image\n",
			wantErr: "spec.trainer",
		},
		{
			name:    "trainer step without a main container",
			runtime: templateOf(replicatedJob("node", "trainer", "a", "b")),
			job:     "spec:\n  trainer:\n    args: [x]\n",
			wantErr: "spec.trainer",
		},
		{
			name:    "no overrides, no trainer needed",
			runtime: templateOf(replicatedJob("launcher", "", "launcher")),
			job:     "spec:\n  labels: {a: b}\n",
		},
		{
			name:    "initializer overrides without initializer steps are ignored",
			runtime: templateOf(replicatedJob("node", "trainer", "node")),
			job:     "spec:\n  initializer:\n    dataset:\n      storageUri: hf://x\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := framework.NewInfo(frameworktest.TrainJob(t, "metadata:\n  name: job\n"+tc.job), frameworktest.Runtime(t, tc.runtime))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("NewInfo: %v", err)
				}
				return
			}
			var fe *field.Error
			if !errors.As(err, &fe) {
				t.Fatalf("NewInfo error %v (%T), want a *field.Error", err, err)
			}
			if fe.Field != tc.wantErr {
				t.Errorf("NewInfo error on field %q, want %q (error: %v)", fe.Field, tc.wantErr, err)
			}
		})
	}
}

func patch(manager, template string) trainer.RuntimePatch {
	return trainer.RuntimePatch{
		Manager:             manager,
		TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{Template: &apiextensionsv1.JSON{Raw: []byte(template)}},
	}
}

func TestNewInfoRuntimePatches(t *testing.T) {
	const rt = `
template:
  metadata:
    labels:
      from: runtime
  spec:
    replicatedJobs:
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
                image: runtime/image
                resources:
                  requests:
                    cpu: "1"
`
	job := testJob()
	job.Spec.RuntimePatches = []trainer.RuntimePatch{
		patch("kueue.x-k8s.io/manager", `{"metadata":{"labels":{"first":"1","both":"first"}},"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"parallelism":2,"template":{"spec":{"nodeSelector":{"zone":"a"},"containers":[{"name":"node","image":"first/image"}]}}}}}]}}`),
		{Manager: "empty"}, // no template: skipped
		patch("other", `{"metadata":{"labels":{"both":"second"}},"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"zone":"b"},"containers":[{"name":"node","image":"second/image","resources":{"requests":{"cpu":"3"}}}]}}}}}]}}`),
	}
	info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, rt))
	if diff := cmp.Diff(map[string]string{"from": "runtime", "first": "1", "both": "second"}, info.Labels); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
	wantPS := []framework.PodSet{{
		Name: "node", AncestorStep: "trainer", Replicas: 1, Count: 2,
		Containers: []framework.Container{{
			Name: "node", Image: "second/image",
			Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "3")},
		}},
		Endpoints:         []string{"job-node-0-0.job", "job-node-0-1.job"},
		SinglePodRequests: quantities("cpu", "3"),
	}}
	if diff := cmp.Diff(wantPS, info.PodSets, infoOpts); diff != "" {
		t.Errorf("PodSets (-want +got):\n%s", diff)
	}
	tmpl, err := info.TemplateSpec()
	if err != nil {
		t.Fatalf("TemplateSpec: %v", err)
	}
	if got := tmpl.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.NodeSelector; !cmp.Equal(got, map[string]string{"zone": "b"}) {
		t.Errorf("patched nodeSelector = %v, want zone=b (the second patch wins)", got)
	}
}

func TestNewInfoBadRuntimePatch(t *testing.T) {
	rt := templateOf(replicatedJob("node", "trainer", "node"))
	cases := []struct {
		name    string
		patches []trainer.RuntimePatch
		want    string
	}{
		{
			name:    "invalid JSON",
			patches: []trainer.RuntimePatch{patch("ok", `{"metadata":{"labels":{"a":"b"}}}`), patch("kueue", `{"spec":`)},
			want:    "spec.runtimePatches[1]",
		},
		{
			name:    "not an object",
			patches: []trainer.RuntimePatch{patch("kueue", `[1,2]`)},
			want:    "spec.runtimePatches[0]",
		},
		{
			// A patch that merges but leaves a template that does not
			// decode is just as bad, and the user must learn which one.
			name:    "wrong type for a field",
			patches: []trainer.RuntimePatch{patch("ok", `{}`), patch("ok2", `{}`), patch("kueue", `{"spec":{"replicatedJobs":[{"name":"node","replicas":"many"}]}}`)},
			want:    "spec.runtimePatches[2]",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := testJob()
			job.Spec.RuntimePatches = tc.patches
			_, err := framework.NewInfo(job, frameworktest.Runtime(t, rt))
			if err == nil {
				t.Fatalf("NewInfo succeeded, want an error naming %s", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewInfo error %q does not name %s", err, tc.want)
			}
		})
	}
}

func TestNewInfoEndpoints(t *testing.T) {
	const rt = `
template:
  spec:
    replicatedJobs:
    - name: launcher
      template:
        spec:
          template:
            spec:
              containers: [{name: launcher, image: l}]
    - name: worker
      replicas: 2
      template:
        metadata:
          labels:
            trainer.kubeflow.org/trainjob-ancestor-step: trainer
        spec:
          parallelism: 3
          completions: 3
          template:
            spec:
              containers: [{name: node, image: w}]
`
	job := testJob()
	job.Name = "llm"
	info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, rt))
	got := map[string][]string{}
	counts := map[string][2]int32{}
	for _, ps := range info.PodSets {
		got[ps.Name] = ps.Endpoints
		counts[ps.Name] = [2]int32{ps.Replicas, ps.Count}
	}
	want := map[string][]string{
		"launcher": {"llm-launcher-0-0.llm"},
		"worker": {
			"llm-worker-0-0.llm", "llm-worker-0-1.llm", "llm-worker-0-2.llm",
			"llm-worker-1-0.llm", "llm-worker-1-1.llm", "llm-worker-1-2.llm",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Endpoints (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][2]int32{"launcher": {1, 1}, "worker": {2, 3}}, counts); diff != "" {
		t.Errorf("replicas and count (-want +got):\n%s", diff)
	}

	// After a plugin changes the count, RefreshDerived follows it.
	info.TrainerPodSet().Count = 1
	if err := framework.RefreshDerived(info, job.Name); err != nil {
		t.Fatalf("RefreshDerived: %v", err)
	}
	if diff := cmp.Diff([]string{"llm-worker-0-0.llm", "llm-worker-1-0.llm"}, info.TrainerPodSet().Endpoints); diff != "" {
		t.Errorf("Endpoints after RefreshDerived (-want +got):\n%s", diff)
	}
}

func TestNewInfoEndpointsFollowTheNetworkSubdomain(t *testing.T) {
	const rt = `
template:
  spec:
    network:
      subdomain: shared
    replicatedJobs:
    - name: node
      template:
        spec:
          parallelism: 2
          template:
            spec:
              containers: [{name: node, image: w}]
`
	job := testJob()
	job.Name = "llm"
	info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, rt))
	if diff := cmp.Diff([]string{"llm-node-0-0.shared", "llm-node-0-1.shared"}, info.PodSets[0].Endpoints); diff != "" {
		t.Errorf("Endpoints (-want +got): the pods are reachable under the JobSet's subdomain:\n%s", diff)
	}
	first, err := info.PodSets[0].FirstEndpoint()
	if err != nil || first != "llm-node-0-0.shared" {
		t.Errorf("FirstEndpoint() = %q, %v; want llm-node-0-0.shared", first, err)
	}
}

func TestNewInfoSinglePodRequests(t *testing.T) {
	cases := []struct {
		name    string
		podSpec string // YAML of the pod spec, indented for the template
		job     string // YAML of the TrainJob spec, optional
		opts    []framework.InfoOption
		want    corev1.ResourceList
	}{
		{
			name: "containers add up",
			podSpec: `
containers:
- {name: node, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}
- {name: side, image: x, resources: {requests: {cpu: 500m}}}
`,
			want: quantities("cpu", "1500m", "memory", "1Gi"),
		},
		{
			name: "init containers count by their max",
			podSpec: `
initContainers:
- {name: a, image: x, resources: {requests: {cpu: "2", memory: 100Mi}}}
- {name: b, image: x, resources: {requests: {cpu: "4"}}}
containers:
- {name: node, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}
`,
			want: quantities("cpu", "4", "memory", "1Gi"),
		},
		{
			name: "sidecars add to the containers and to the init containers after them",
			podSpec: `
initContainers:
- {name: first, image: x, resources: {requests: {cpu: "2"}}}
- {name: sidecar, image: x, restartPolicy: Always, resources: {requests: {cpu: "1", memory: 512Mi}}}
- {name: after, image: x, resources: {requests: {cpu: "4", memory: 1Gi}}}
containers:
- {name: node, image: x, resources: {requests: {cpu: "2", memory: 2Gi}}}
`,
			// containers + sidecar = cpu 3, memory 2.5Gi;
			// "after" + sidecar = cpu 5, memory 1.5Gi.
			want: quantities("cpu", "5", "memory", "2560Mi"),
		},
		{
			name: "pod overhead is added",
			podSpec: `
overhead: {cpu: 250m, memory: 128Mi}
containers:
- {name: node, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}
`,
			want: quantities("cpu", "1250m", "memory", "1152Mi"),
		},
		{
			name: "limits only count as requests",
			podSpec: `
containers:
- {name: node, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
`,
			want: quantities("nvidia.com/gpu", "1"),
		},
		{
			name: "limits fill only the requests that are missing",
			podSpec: `
containers:
- {name: node, image: x, resources: {requests: {cpu: "1"}, limits: {cpu: "2", memory: 4Gi, nvidia.com/gpu: 1}}}
`,
			want: quantities("cpu", "1", "memory", "4Gi", "nvidia.com/gpu", "1"),
		},
		{
			name: "limits-only sidecar",
			podSpec: `
initContainers:
- {name: sidecar, image: x, restartPolicy: Always, resources: {limits: {cpu: 500m}}}
containers:
- {name: node, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
`,
			want: quantities("cpu", "500m", "nvidia.com/gpu", "1"),
		},
		{
			name: "everything at once",
			podSpec: `
overhead: {cpu: 250m, memory: 128Mi}
initContainers:
- {name: first, image: x, resources: {requests: {cpu: "2"}}}
- {name: sidecar, image: x, restartPolicy: Always, resources: {requests: {cpu: "1", memory: 512Mi}}}
- {name: after, image: x, resources: {requests: {cpu: "4", memory: 1Gi}}}
containers:
- {name: node, image: x, resources: {requests: {cpu: "2", memory: 2Gi}}}
- {name: gpu, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
`,
			want: quantities("cpu", "5250m", "memory", "2688Mi", "nvidia.com/gpu", "1"),
		},
		{
			name: "resourcesPerNode of the TrainJob replaces the trainer's",
			podSpec: `
containers:
- {name: node, image: x, resources: {requests: {cpu: "1"}}}
`,
			job:  "trainer:\n    resourcesPerNode:\n      limits:\n        nvidia.com/gpu: 2\n",
			want: quantities("nvidia.com/gpu", "2"),
		},
		{
			name: "RuntimeClass overhead from the lookup",
			podSpec: `
runtimeClassName: kata
containers:
- {name: node, image: x, resources: {requests: {cpu: "1"}}}
`,
			opts: []framework.InfoOption{framework.WithRuntimeClassOverhead(func(name string) (corev1.ResourceList, error) {
				if name != "kata" {
					return nil, errors.New("unexpected RuntimeClass " + name)
				}
				return quantities("cpu", "100m", "memory", "64Mi"), nil
			})},
			want: quantities("cpu", "1100m", "memory", "64Mi"),
		},
		{
			name: "the template's overhead wins over the RuntimeClass's",
			podSpec: `
runtimeClassName: kata
overhead: {cpu: 50m}
containers:
- {name: node, image: x, resources: {requests: {cpu: "1"}}}
`,
			opts: []framework.InfoOption{framework.WithRuntimeClassOverhead(func(string) (corev1.ResourceList, error) {
				return quantities("cpu", "100m"), nil
			})},
			want: quantities("cpu", "1050m"),
		},
		{
			name: "no resources",
			podSpec: `
containers:
- {name: node, image: x}
`,
			want: corev1.ResourceList{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			indented := strings.ReplaceAll(strings.TrimPrefix(tc.podSpec, "\n"), "\n", "\n              ")
			rt := `
template:
  spec:
    replicatedJobs:
    - name: node
      template:
        spec:
          template:
            spec:
              ` + indented + "\n"
			job := frameworktest.TrainJob(t, "metadata:\n  name: job\nspec:\n  "+tc.job)
			info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, rt), tc.opts...)
			if diff := cmp.Diff(tc.want, info.PodSets[0].SinglePodRequests, infoOpts); diff != "" {
				t.Errorf("SinglePodRequests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewInfoRuntimeClassLookupError(t *testing.T) {
	rt := `
template:
  spec:
    replicatedJobs:
    - name: node
      template:
        spec:
          template:
            spec:
              runtimeClassName: missing
              containers: [{name: node, image: x}]
`
	lookup := framework.WithRuntimeClassOverhead(func(string) (corev1.ResourceList, error) {
		return nil, errors.New("runtimeclasses.node.k8s.io \"missing\" not found")
	})
	_, err := framework.NewInfo(testJob(), frameworktest.Runtime(t, rt), lookup)
	if err == nil || !strings.Contains(err.Error(), `"node"`) || !strings.Contains(err.Error(), `"missing"`) {
		t.Errorf("NewInfo error = %v, want one naming the replicatedJob and the RuntimeClass", err)
	}
}
