package coscheduling

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// result is what a test checks of one run of the plugin: the PodGroup's
// spec and labels and what Enforce did to each PodSet.
type result struct {
	Name                   string
	Namespace              string
	Labels                 map[string]string
	Annotations            map[string]string
	MinMember              int32
	MinResources           map[string]string
	ScheduleTimeoutSeconds int32
	PodLabels              map[string]map[string]string // by PodSet
	SchedulerNames         map[string]string            // by PodSet, set ones only
}

// A trainer replicatedJob, in the seed's shape, whose pod spec is podSpec
// (YAML, indented by 2).
func runtimeYAML(policy, replicatedJobs string) string {
	return policy + "\ntemplate:\n  spec:\n    replicatedJobs:\n" + replicatedJobs
}

func rj(name, step string, replicas, parallelism int, podSpec string) string {
	var b strings.Builder
	b.WriteString("    - name: " + name + "\n")
	if replicas > 0 {
		b.WriteString("      replicas: " + itoa(replicas) + "\n")
	}
	b.WriteString("      template:\n")
	if step != "" {
		b.WriteString("        metadata:\n          labels:\n            " + trainer.AncestorStepLabel + ": " + step + "\n")
	}
	b.WriteString("        spec:\n")
	if parallelism > 0 {
		b.WriteString("          parallelism: " + itoa(parallelism) + "\n          completions: " + itoa(parallelism) + "\n")
	}
	b.WriteString("          template:\n            spec:\n")
	for _, l := range strings.Split(strings.TrimRight(podSpec, "\n"), "\n") {
		b.WriteString("              " + l + "\n")
	}
	return b.String()
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

const (
	gangPolicy = "podGroupPolicy:\n  coscheduling: {}"

	nodeCPU3Mem4 = `containers:
- name: node
  image: pytorch/pytorch
  resources:
    requests:
      cpu: "3"
      memory: 4Gi`

	nodeCPU1Mem2 = `containers:
- name: node
  image: pytorch/pytorch
  resources:
    requests:
      cpu: "1"
      memory: 2Gi`

	initializerPod = `containers:
- name: %s
  image: ghcr.io/kubeflow/trainer/initializer
  resources:
    requests:
      cpu: "2"
      memory: 8Gi`
)

func initializer(container string) string {
	return strings.ReplaceAll(initializerPod, "%s", container)
}

// run does what the runner does for one TrainJob: NewInfo, the ML plugin
// (simulated: it sets the PodSet counts and marks elastic PodSets),
// RefreshDerived, Validate, EnforcePodGroupPolicy and Build.
func run(t *testing.T, p *Coscheduling, job *trainer.TrainJob, spec *trainer.TrainingRuntimeSpec, counts map[string]int32, elastic map[string]framework.CountRange) (*framework.Info, []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	info := frameworktest.NewInfo(t, job, spec)
	for name, n := range counts {
		ps := info.PodSet(name)
		if ps == nil {
			t.Fatalf("no PodSet %q", name)
		}
		ps.Count = n
	}
	for name, r := range elastic {
		info.PodSet(name).Elastic = &r
	}
	if err := framework.RefreshDerived(info, job.Name); err != nil {
		t.Fatalf("RefreshDerived: %v", err)
	}
	if _, errs, _ := p.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job}); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs.ToAggregate())
	}
	if err := p.EnforcePodGroupPolicy(ctx, info, job); err != nil {
		t.Fatalf("EnforcePodGroupPolicy: %v", err)
	}
	objs, err := p.Build(ctx, info, job)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}

	// An out-of-process plugin gets Info as JSON: it must build the same.
	raw, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	wire := &framework.Info{}
	if err := json.Unmarshal(raw, wire); err != nil {
		t.Fatal(err)
	}
	wireObjs, err := p.Build(ctx, wire, job)
	if err != nil {
		t.Fatalf("Build from wire Info: %v", err)
	}
	if diff := cmp.Diff(objs, wireObjs); diff != "" {
		t.Errorf("Build from the wire Info differs (-in-process +wire):\n%s", diff)
	}
	return info, framework.UnstructuredOf(objs)
}

func summarize(t *testing.T, info *framework.Info, objs []*unstructured.Unstructured) result {
	t.Helper()
	if len(objs) != 1 {
		t.Fatalf("Build returned %d objects, want 1", len(objs))
	}
	if got := objs[0].GroupVersionKind(); got != GVK {
		t.Fatalf("built a %v, want %v", got, GVK)
	}
	pg := &schedulingv1alpha1.PodGroup{}
	if err := framework.FromUnstructured(objs[0], pg); err != nil {
		t.Fatal(err)
	}
	r := result{
		Name:        pg.Name,
		Namespace:   pg.Namespace,
		Labels:      pg.Labels,
		Annotations: pg.Annotations,
		MinMember:   pg.Spec.MinMember,
		PodLabels:   map[string]map[string]string{},
	}
	if pg.Spec.ScheduleTimeoutSeconds != nil {
		r.ScheduleTimeoutSeconds = *pg.Spec.ScheduleTimeoutSeconds
	}
	if pg.Spec.MinResources != nil {
		r.MinResources = map[string]string{}
		for name, q := range pg.Spec.MinResources {
			r.MinResources[string(name)] = q.String()
		}
	}
	for _, ps := range info.PodSets {
		r.PodLabels[ps.Name] = ps.PodLabels
		if ps.SchedulerName != "" {
			if r.SchedulerNames == nil {
				r.SchedulerNames = map[string]string{}
			}
			r.SchedulerNames[ps.Name] = ps.SchedulerName
		}
	}
	return r
}

func configured(t *testing.T, args string) *Coscheduling {
	t.Helper()
	p := New().(*Coscheduling)
	if err := p.Configure(context.Background(), json.RawMessage(args)); err != nil {
		t.Fatalf("Configure(%s): %v", args, err)
	}
	return p
}

func gangLabel(job string) map[string]string {
	return map[string]string{PodGroupLabel: job}
}

// TestSeedExample is the seed's review example, checked object for object.
func TestSeedExample(t *testing.T) {
	spec, job := frameworktest.Seed(t, frameworktest.SeedCoscheduling)
	job.Namespace = "default"

	// The ML plugin sets the trainer count to numNodes.
	info, objs := run(t, configured(t, ""), job, spec, map[string]int32{"node": *spec.MLPolicy.NumNodes}, nil)

	want := []*unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "scheduling.x-k8s.io/v1alpha1",
		"kind":       "PodGroup",
		"metadata": map[string]any{
			"name":      "gang-job",
			"namespace": "default",
		},
		"spec": map[string]any{
			"minMember":              int64(10),
			"scheduleTimeoutSeconds": int64(60),
			"minResources": map[string]any{
				"cpu":    "30",
				"memory": "40Gi",
			},
		},
	}}}
	if diff := cmp.Diff(want, objs); diff != "" {
		t.Errorf("Build (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(gangLabel("gang-job"), info.PodSet("node").PodLabels); diff != "" {
		t.Errorf("trainer PodLabels (-want +got):\n%s", diff)
	}
}

func TestPodGroup(t *testing.T) {
	const job = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: job\n  namespace: ns\nspec:\n  runtimeRef:\n    name: rt\n"

	cases := []struct {
		name    string
		args    string
		runtime string
		job     string // TrainJob YAML; job when empty
		counts  map[string]int32
		elastic map[string]framework.CountRange
		want    result
	}{
		{
			name: "initializers are neither labelled nor counted",
			runtime: runtimeYAML(gangPolicy,
				rj("dataset-initializer", trainer.DatasetInitializerStep, 0, 0, initializer("dataset-initializer"))+
					rj("model-initializer", trainer.ModelInitializerStep, 0, 0, initializer("model-initializer"))+
					rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)),
			counts: map[string]int32{"node": 4},
			want: result{
				MinMember:              4,
				MinResources:           map[string]string{"cpu": "4", "memory": "8Gi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels: map[string]map[string]string{
					"dataset-initializer": nil,
					"model-initializer":   nil,
					"node":                gangLabel("job"),
				},
			},
		},
		{
			name: "init containers: the larger of the init containers and the sum of the containers",
			runtime: runtimeYAML(gangPolicy, rj("node", trainer.TrainerStep, 0, 0, `initContainers:
- name: fetch
  image: busybox
  resources:
    requests:
      cpu: "4"
      memory: 1Gi
containers:
- name: node
  image: pytorch/pytorch
  resources:
    requests:
      cpu: "1"
      memory: 1Gi
- name: exporter
  image: exporter
  resources:
    requests:
      cpu: "1"
      memory: 1Gi`)),
			counts: map[string]int32{"node": 3},
			want: result{
				MinMember: 3,
				// cpu max(4, 1+1) = 4, memory max(1Gi, 1Gi+1Gi) = 2Gi, per pod.
				MinResources:           map[string]string{"cpu": "12", "memory": "6Gi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name: "a sidecar adds to the containers",
			runtime: runtimeYAML(gangPolicy, rj("node", trainer.TrainerStep, 0, 0, `initContainers:
- name: proxy
  image: proxy
  restartPolicy: Always
  resources:
    requests:
      cpu: 500m
      memory: 256Mi
containers:
- name: node
  image: pytorch/pytorch
  resources:
    requests:
      cpu: "1"
      memory: 1Gi`)),
			counts: map[string]int32{"node": 2},
			want: result{
				MinMember:              2,
				MinResources:           map[string]string{"cpu": "3", "memory": "2560Mi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name: "a sidecar runs during the init containers that follow it",
			runtime: runtimeYAML(gangPolicy, rj("node", trainer.TrainerStep, 0, 0, `initContainers:
- name: proxy
  image: proxy
  restartPolicy: Always
  resources:
    requests:
      cpu: 500m
      memory: 256Mi
- name: fetch
  image: busybox
  resources:
    requests:
      cpu: "2"
      memory: 512Mi
containers:
- name: node
  image: pytorch/pytorch
  resources:
    requests:
      cpu: "1"
      memory: 1Gi`)),
			counts: map[string]int32{"node": 2},
			want: result{
				MinMember: 2,
				// cpu max(2+0.5, 1+0.5) = 2500m; memory max(512Mi+256Mi, 1Gi+256Mi) = 1280Mi.
				MinResources:           map[string]string{"cpu": "5", "memory": "2560Mi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name: "pod overhead is counted",
			runtime: runtimeYAML(gangPolicy, rj("node", trainer.TrainerStep, 0, 0, `overhead:
  cpu: 250m
  memory: 128Mi
containers:
- name: node
  image: pytorch/pytorch
  resources:
    requests:
      cpu: "1"
      memory: 1Gi`)),
			counts: map[string]int32{"node": 4},
			want: result{
				MinMember:              4,
				MinResources:           map[string]string{"cpu": "5", "memory": "4608Mi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name:    "the TrainJob's resourcesPerNode replace the runtime's requests",
			runtime: runtimeYAML(gangPolicy, rj("node", trainer.TrainerStep, 0, 0, nodeCPU3Mem4)),
			job: job + `  trainer:
    numNodes: 2
    resourcesPerNode:
      requests:
        cpu: "8"
        memory: 32Gi
        nvidia.com/gpu: "2"
      limits:
        nvidia.com/gpu: "2"
`,
			counts: map[string]int32{"node": 2},
			want: result{
				MinMember:              2,
				MinResources:           map[string]string{"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "4"},
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name:    "explicit scheduleTimeoutSeconds",
			runtime: runtimeYAML("podGroupPolicy:\n  coscheduling:\n    scheduleTimeoutSeconds: 120", rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)),
			counts:  map[string]int32{"node": 1},
			want: result{
				MinMember:              1,
				MinResources:           map[string]string{"cpu": "1", "memory": "2Gi"},
				ScheduleTimeoutSeconds: 120,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name:    "scheduleTimeoutSeconds 0 means 60",
			runtime: runtimeYAML("podGroupPolicy:\n  coscheduling:\n    scheduleTimeoutSeconds: 0", rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)),
			counts:  map[string]int32{"node": 1},
			want: result{
				MinMember:              1,
				MinResources:           map[string]string{"cpu": "1", "memory": "2Gi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name:    "the args' timeout is the default",
			args:    `{"scheduleTimeoutSeconds": 300}`,
			runtime: runtimeYAML(gangPolicy, rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)),
			counts:  map[string]int32{"node": 1},
			want: result{
				MinMember:              1,
				MinResources:           map[string]string{"cpu": "1", "memory": "2Gi"},
				ScheduleTimeoutSeconds: 300,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name:    "the args' timeout is the default for 0 too",
			args:    `{"scheduleTimeoutSeconds": 300}`,
			runtime: runtimeYAML("podGroupPolicy:\n  coscheduling:\n    scheduleTimeoutSeconds: 0", rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)),
			counts:  map[string]int32{"node": 1},
			want: result{
				MinMember:              1,
				MinResources:           map[string]string{"cpu": "1", "memory": "2Gi"},
				ScheduleTimeoutSeconds: 300,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name:    "the policy's timeout wins over the args'",
			args:    `{"scheduleTimeoutSeconds": 300}`,
			runtime: runtimeYAML("podGroupPolicy:\n  coscheduling:\n    scheduleTimeoutSeconds: 120", rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)),
			counts:  map[string]int32{"node": 1},
			want: result{
				MinMember:              1,
				MinResources:           map[string]string{"cpu": "1", "memory": "2Gi"},
				ScheduleTimeoutSeconds: 120,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name: "the args' schedulerName goes to the gang's pods only",
			args: `{"schedulerName": "scheduler-plugins-scheduler"}`,
			runtime: runtimeYAML(gangPolicy,
				rj("dataset-initializer", trainer.DatasetInitializerStep, 0, 0, initializer("dataset-initializer"))+
					rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)),
			counts: map[string]int32{"node": 2},
			want: result{
				MinMember:              2,
				MinResources:           map[string]string{"cpu": "2", "memory": "4Gi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels: map[string]map[string]string{
					"dataset-initializer": nil,
					"node":                gangLabel("job"),
				},
				SchedulerNames: map[string]string{"node": "scheduler-plugins-scheduler"},
			},
		},
		{
			name:    "a scheduler named by the runtime's pod template is kept",
			args:    `{"schedulerName": "scheduler-plugins-scheduler"}`,
			runtime: runtimeYAML(gangPolicy, rj("node", trainer.TrainerStep, 0, 0, "schedulerName: my-gang-scheduler\n"+nodeCPU1Mem2)),
			counts:  map[string]int32{"node": 2},
			want: result{
				MinMember:              2,
				MinResources:           map[string]string{"cpu": "2", "memory": "4Gi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name: "every replicatedJob of the trainer step is in the gang, replicas counted",
			runtime: runtimeYAML(gangPolicy,
				rj("launcher", trainer.TrainerStep, 0, 0, `containers:
- name: launcher
  image: mpi
  resources:
    requests:
      cpu: 500m
      memory: 512Mi`)+
					rj("node", trainer.TrainerStep, 2, 0, nodeCPU1Mem2)),
			counts: map[string]int32{"node": 3},
			want: result{
				MinMember:              7, // 1 launcher + 2 replicas × 3 nodes
				MinResources:           map[string]string{"cpu": "6500m", "memory": "12800Mi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels: map[string]map[string]string{
					"launcher": gangLabel("job"),
					"node":     gangLabel("job"),
				},
			},
		},
		{
			// It trains once its minimum fits; the others join as
			// capacity frees, and a resize leaves the PodGroup as it is.
			name:    "an elastic trainer step counts its minimum nodes",
			runtime: runtimeYAML(gangPolicy, rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)),
			counts:  map[string]int32{"node": 4},
			elastic: map[string]framework.CountRange{"node": {Min: 2, Max: 6}},
			want: result{
				MinMember:              2,
				MinResources:           map[string]string{"cpu": "2", "memory": "4Gi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name:    "a runtime without the step label: the replicatedJob named trainer-node",
			runtime: runtimeYAML(gangPolicy, rj("trainer-node", "", 0, 5, nodeCPU1Mem2)),
			want: result{
				MinMember:              5, // the template's parallelism
				MinResources:           map[string]string{"cpu": "5", "memory": "10Gi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"trainer-node": gangLabel("job")},
			},
		},
		{
			name: "labels and annotations of the template and the TrainJob",
			runtime: gangPolicy + "\ntemplate:\n  metadata:\n    labels:\n      runtime: torch\n  spec:\n    replicatedJobs:\n" +
				rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2),
			job: job + `  labels:
    team: ml
  annotations:
    note: gang
`,
			counts: map[string]int32{"node": 1},
			want: result{
				Labels:                 map[string]string{"runtime": "torch", "team": "ml"},
				Annotations:            map[string]string{"note": "gang"},
				MinMember:              1,
				MinResources:           map[string]string{"cpu": "1", "memory": "2Gi"},
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
		{
			name: "no requests, no minResources",
			runtime: runtimeYAML(gangPolicy, rj("node", trainer.TrainerStep, 0, 0, `containers:
- name: node
  image: pytorch/pytorch`)),
			counts: map[string]int32{"node": 2},
			want: result{
				MinMember:              2,
				ScheduleTimeoutSeconds: 60,
				PodLabels:              map[string]map[string]string{"node": gangLabel("job")},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			jobYAML := tc.job
			if jobYAML == "" {
				jobYAML = job
			}
			tj := frameworktest.TrainJob(t, jobYAML)
			spec := frameworktest.Runtime(t, tc.runtime)
			info, objs := run(t, configured(t, tc.args), tj, spec, tc.counts, tc.elastic)
			got := summarize(t, info, objs)
			tc.want.Name, tc.want.Namespace = "job", "ns"
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A runtime that does not ask for coscheduling is none of the plugin's
// business, even if a runner calls it.
func TestOtherPolicies(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []string{"", "podGroupPolicy:\n  volcano: {}", "podGroupPolicy:\n  kai: {queue: q}"} {
		t.Run(policy, func(t *testing.T) {
			spec := frameworktest.Runtime(t, runtimeYAML(policy, rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)))
			job := &trainer.TrainJob{}
			job.Name, job.Namespace = "job", "ns"
			info := frameworktest.NewInfo(t, job, spec)
			p := configured(t, `{"schedulerName": "gang"}`)
			if err := p.EnforcePodGroupPolicy(ctx, info, job); err != nil {
				t.Fatal(err)
			}
			if ps := info.TrainerPodSet(); ps.PodLabels != nil || ps.SchedulerName != "" {
				t.Errorf("Enforce changed the trainer PodSet: labels %v, scheduler %q", ps.PodLabels, ps.SchedulerName)
			}
			objs, err := p.Build(ctx, info, job)
			if err != nil || objs != nil {
				t.Errorf("Build = %v, %v; want nothing", objs, err)
			}
			if _, errs, _ := p.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job}); len(errs) > 0 {
				t.Errorf("Validate: %v", errs)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	job := &trainer.TrainJob{}
	job.Name, job.Namespace = "job", "ns"
	job.Spec.RuntimeRef.Name = "rt"

	t.Run("no trainer step", func(t *testing.T) {
		spec := frameworktest.Runtime(t, runtimeYAML(gangPolicy,
			rj("prepare", trainer.DatasetInitializerStep, 0, 0, initializer("dataset-initializer"))+
				rj("work", "", 0, 0, nodeCPU1Mem2)))
		info := frameworktest.NewInfo(t, job, spec)
		p := configured(t, "")
		const want = "the runtime has none: label a replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer"
		if err := p.EnforcePodGroupPolicy(ctx, info, job); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("EnforcePodGroupPolicy: %v, want %q", err, want)
		}
		if _, err := p.Build(ctx, info, job); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Build: %v, want %q", err, want)
		}
		_, errs, _ := p.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job})
		if len(errs) != 1 || errs[0].Field != "spec.runtimeRef" || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("Validate: %v", errs)
		}
		if ps := info.PodSet("prepare"); ps.PodLabels != nil {
			t.Errorf("the initializer got labels %v", ps.PodLabels)
		}
	})

	t.Run("negative timeout", func(t *testing.T) {
		spec := frameworktest.Runtime(t, runtimeYAML("podGroupPolicy:\n  coscheduling:\n    scheduleTimeoutSeconds: -5", rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)))
		info := frameworktest.NewInfo(t, job, spec)
		p := configured(t, "")
		const path = "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds"
		_, errs, _ := p.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job})
		if len(errs) != 1 || errs[0].Field != path {
			t.Errorf("Validate: %v, want one error at %s", errs, path)
		}
		if _, err := p.Build(ctx, info, job); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Build: %v, want an error naming %s", err, path)
		}
	})

	t.Run("no pods", func(t *testing.T) {
		spec := frameworktest.Runtime(t, runtimeYAML(gangPolicy, rj("node", trainer.TrainerStep, 0, 0, nodeCPU1Mem2)))
		info := frameworktest.NewInfo(t, job, spec)
		info.TrainerPodSet().Count = 0
		if _, err := configured(t, "").Build(ctx, info, job); err == nil || !strings.Contains(err.Error(), "no pods") {
			t.Errorf("Build: %v, want a no-pods error", err)
		}
	})
}

func TestConfigure(t *testing.T) {
	cases := []struct {
		name    string
		args    string
		want    Args
		wantErr []string // substrings of the error
	}{
		{name: "nil"},
		{name: "empty object", args: "{}"},
		{name: "null", args: "null"},
		{
			name: "both",
			args: `{"scheduleTimeoutSeconds": 90, "schedulerName": "scheduler-plugins-scheduler"}`,
			want: Args{ScheduleTimeoutSeconds: ptr(int32(90)), SchedulerName: "scheduler-plugins-scheduler"},
		},
		{name: "unknown field", args: `{"scheduleTimeout": 90}`, wantErr: []string{`unknown field "scheduleTimeout"`}},
		{name: "wrong type", args: `{"scheduleTimeoutSeconds": "90"}`, wantErr: []string{"scheduleTimeoutSeconds"}},
		{name: "negative timeout", args: `{"scheduleTimeoutSeconds": -1}`, wantErr: []string{"args.scheduleTimeoutSeconds", "-1"}},
		{name: "bad scheduler name", args: `{"schedulerName": "Gang_Scheduler"}`, wantErr: []string{"args.schedulerName", "Gang_Scheduler", "RFC 1123"}},
		{
			name:    "every error at once",
			args:    `{"scheduleTimeoutSeconds": -1, "schedulerName": "-x"}`,
			wantErr: []string{"args.scheduleTimeoutSeconds", "args.schedulerName"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := New().(*Coscheduling)
			var raw json.RawMessage
			if tc.args != "" {
				raw = json.RawMessage(tc.args)
			}
			err := p.Configure(context.Background(), raw)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Configure: %v", err)
				}
				if diff := cmp.Diff(tc.want, p.args); diff != "" {
					t.Errorf("args (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("Configure(%s) succeeded, want an error", tc.args)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if diff := cmp.Diff(Args{}, p.args); diff != "" {
				t.Errorf("bad args were kept (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	want := framework.Description{
		Name:               "Coscheduling",
		Version:            "v0.1.0",
		PodGroupPolicyKeys: []string{"coscheduling"},
		Builds:             []schema.GroupVersionKind{{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}},
	}
	if diff := cmp.Diff(want, New().Describe()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }
