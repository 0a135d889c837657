package jobset

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// A runtime in the current convention: labelled initializer and trainer
// steps, a sidecar, a shared volume and JobSet features that the plugin
// must carry over unchanged (network, dependsOn, successPolicy).
const stepsRuntime = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: torch-llm
  namespace: team-a
spec:
  mlPolicy:
    numNodes: 2
    torch: {}
  template:
    metadata:
      labels:
        team: ml
        tier: gold
      annotations:
        owner: platform
    spec:
      network:
        publishNotReadyAddresses: true
      successPolicy:
        operator: All
        targetReplicatedJobs: [node]
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
                      env:
                        - name: LOG_LEVEL
                          value: info
                      volumeMounts:
                        - name: initializer
                          mountPath: /workspace
                  volumes:
                    - name: initializer
                      persistentVolumeClaim:
                        claimName: initializer
        - name: model-initializer
          dependsOn:
            - name: dataset-initializer
              status: Complete
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
                      volumeMounts:
                        - name: initializer
                          mountPath: /workspace
                  volumes:
                    - name: initializer
                      persistentVolumeClaim:
                        claimName: initializer
        - name: node
          dependsOn:
            - name: model-initializer
              status: Complete
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              parallelism: 2
              template:
                metadata:
                  labels:
                    app: trainer
                spec:
                  restartPolicy: Never
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7
                      command: [torchrun, /workspace/train.py]
                      workingDir: /workspace
                      securityContext:
                        runAsNonRoot: true
                      resources:
                        limits:
                          nvidia.com/gpu: "1"
                      volumeMounts:
                        - name: initializer
                          mountPath: /workspace
                    - name: metrics
                      image: prom/node-exporter
                  volumes:
                    - name: initializer
                      persistentVolumeClaim:
                        claimName: initializer
`

// The JobSet built from stepsRuntime for a TrainJob named "llm" that
// overrides nothing, in parts that the cases below assemble: the header
// up to spec.replicatedJobs, then one part per replicatedJob.
const (
	stepsDatasetJob = `
  - name: dataset-initializer
    replicas: 1
    template:
      metadata:
        labels:
          trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
      spec:
        parallelism: 1
        completions: 1
        template:
          metadata: {}
          spec:
            containers:
            - name: dataset-initializer
              image: ghcr.io/kubeflow/trainer/dataset-initializer
              env:
              - name: LOG_LEVEL
                value: info
              resources: {}
              volumeMounts:
              - name: initializer
                mountPath: /workspace
            volumes:
            - name: initializer
              persistentVolumeClaim:
                claimName: initializer`
	stepsModelJob = `
  - name: model-initializer
    replicas: 1
    dependsOn:
    - name: dataset-initializer
      status: Complete
    template:
      metadata:
        labels:
          trainer.kubeflow.org/trainjob-ancestor-step: model-initializer
      spec:
        parallelism: 1
        completions: 1
        template:
          metadata: {}
          spec:
            containers:
            - name: model-initializer
              image: ghcr.io/kubeflow/trainer/model-initializer
              resources: {}
              volumeMounts:
              - name: initializer
                mountPath: /workspace
            volumes:
            - name: initializer
              persistentVolumeClaim:
                claimName: initializer`
	stepsNodeJob = `
  - name: node
    replicas: 1
    dependsOn:
    - name: model-initializer
      status: Complete
    template:
      metadata:
        labels:
          trainer.kubeflow.org/trainjob-ancestor-step: trainer
      spec:
        parallelism: 2
        completions: 2
        template:
          metadata:
            labels:
              app: trainer
          spec:
            restartPolicy: Never
            containers:
            - name: node
              image: pytorch/pytorch:2.7
              command: [torchrun, /workspace/train.py]
              workingDir: /workspace
              securityContext:
                runAsNonRoot: true
              resources:
                limits:
                  nvidia.com/gpu: "1"
              volumeMounts:
              - name: initializer
                mountPath: /workspace
            - name: metrics
              image: prom/node-exporter
              resources: {}
            volumes:
            - name: initializer
              persistentVolumeClaim:
                claimName: initializer`
	stepsHeader = `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
  labels:
    team: ml
    tier: gold
  annotations:
    owner: platform
spec:
  suspend: false
  network:
    publishNotReadyAddresses: true
  successPolicy:
    operator: All
    targetReplicatedJobs: [node]
  replicatedJobs:`
)

const llmJob = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: llm
  namespace: team-a
spec:
  runtimeRef:
    name: torch-llm
    kind: TrainingRuntime
`

func TestBuild(t *testing.T) {
	cases := []struct {
		name string
		// The runtime and the TrainJob: those of seed, a seed example,
		// unless runtime or job (YAML) replace them.
		seed, runtime, job string
		// enforce simulates the ML and gang plugins that run before Build.
		enforce func(*framework.Info)
		want    string
	}{
		{
			name:    "PlainML seed: the trainer step runs numNodes pods",
			seed:    frameworktest.SeedPlainML,
			enforce: func(info *framework.Info) { info.TrainerPodSet().Count = 2 },
			want: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: first-job
  namespace: default
spec:
  suspend: false
  replicatedJobs:
  - name: trainer-node
    replicas: 1
    template:
      metadata: {}
      spec:
        parallelism: 2
        completions: 2
        template:
          metadata: {}
          spec:
            containers:
            - name: trainer
              image: python:alpine3.20
              command: [/bin/sh, -c, "echo 'Hello From Training Runtime'"]
              resources: {}
`,
		},
		{
			name: "Torch seed: count, env and port of the ML plugin",
			seed: frameworktest.SeedTorch,
			enforce: func(info *framework.Info) {
				ps := info.TrainerPodSet()
				ps.Count = 3
				c := ps.TrainerContainer()
				c.UpsertEnv(
					corev1.EnvVar{Name: "PET_NNODES", Value: "3"},
					corev1.EnvVar{Name: "PET_NPROC_PER_NODE", Value: "5"},
					corev1.EnvVar{Name: "PET_NODE_RANK", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
						FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
					}}},
					corev1.EnvVar{Name: "PET_MASTER_ADDR", Value: "first-job-trainer-node-0-0.first-job"},
					corev1.EnvVar{Name: "PET_MASTER_PORT", Value: "29500"},
					corev1.EnvVar{Name: "TRAIN_JOB", Value: "env"},
				)
				c.UpsertPort(corev1.ContainerPort{ContainerPort: 29500})
			},
			want: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: first-job
  namespace: default
spec:
  suspend: false
  replicatedJobs:
  - name: trainer-node
    replicas: 1
    template:
      metadata: {}
      spec:
        parallelism: 3
        completions: 3
        template:
          metadata: {}
          spec:
            containers:
            - name: trainer
              image: docker.io/andreyvelichkevich/test-torch
              env:
              - name: PET_NNODES
                value: "3"
              - name: PET_NPROC_PER_NODE
                value: "5"
              - name: PET_NODE_RANK
                valueFrom:
                  fieldRef:
                    fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']
              - name: PET_MASTER_ADDR
                value: first-job-trainer-node-0-0.first-job
              - name: PET_MASTER_PORT
                value: "29500"
              - name: TRAIN_JOB
                value: env
              ports:
              - containerPort: 29500
              resources: {}
`,
		},
		{
			name:    "runtime with initializers, nothing overridden",
			runtime: stepsRuntime,
			job:     llmJob,
			want:    stepsHeader + stepsDatasetJob + stepsModelJob + stepsNodeJob,
		},
		{
			name:    "TrainJob image, command, args and resourcesPerNode on the trainer container only",
			runtime: stepsRuntime,
			job: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: llm
  namespace: team-a
spec:
  runtimeRef:
    name: torch-llm
    kind: TrainingRuntime
  trainer:
    image: registry.example.com/llm:v2
    command: [python]
    args: [-m, train, --epochs=3]
    resourcesPerNode:
      requests:
        cpu: "8"
        memory: 32Gi
      limits:
        nvidia.com/gpu: "4"
`,
			want: stepsHeader + stepsDatasetJob + stepsModelJob + `
  - name: node
    replicas: 1
    dependsOn:
    - name: model-initializer
      status: Complete
    template:
      metadata:
        labels:
          trainer.kubeflow.org/trainjob-ancestor-step: trainer
      spec:
        parallelism: 2
        completions: 2
        template:
          metadata:
            labels:
              app: trainer
          spec:
            restartPolicy: Never
            containers:
            - name: node
              image: registry.example.com/llm:v2
              command: [python]
              args: [-m, train, --epochs=3]
              workingDir: /workspace
              securityContext:
                runAsNonRoot: true
              resources:
                requests:
                  cpu: "8"
                  memory: 32Gi
                limits:
                  nvidia.com/gpu: "4"
              volumeMounts:
              - name: initializer
                mountPath: /workspace
            - name: metrics
              image: prom/node-exporter
              resources: {}
            volumes:
            - name: initializer
              persistentVolumeClaim:
                claimName: initializer`,
		},
		{
			name:    "initializers get STORAGE_URI, env and the secretRef",
			runtime: stepsRuntime,
			job: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: llm
  namespace: team-a
spec:
  runtimeRef:
    name: torch-llm
    kind: TrainingRuntime
  initializer:
    dataset:
      storageUri: hf://tatsu-lab/alpaca
      env:
        - name: LOG_LEVEL
          value: debug
        - name: SPLIT
          value: train
      secretRef:
        name: hf-token
    model:
      storageUri: hf://meta-llama/Llama-3.2-1B
      secretRef:
        name: hf-token
`,
			want: stepsHeader + `
  - name: dataset-initializer
    replicas: 1
    template:
      metadata:
        labels:
          trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
      spec:
        parallelism: 1
        completions: 1
        template:
          metadata: {}
          spec:
            containers:
            - name: dataset-initializer
              image: ghcr.io/kubeflow/trainer/dataset-initializer
              env:
              - name: LOG_LEVEL
                value: debug
              - name: STORAGE_URI
                value: hf://tatsu-lab/alpaca
              - name: SPLIT
                value: train
              envFrom:
              - secretRef:
                  name: hf-token
              resources: {}
              volumeMounts:
              - name: initializer
                mountPath: /workspace
            volumes:
            - name: initializer
              persistentVolumeClaim:
                claimName: initializer
  - name: model-initializer
    replicas: 1
    dependsOn:
    - name: dataset-initializer
      status: Complete
    template:
      metadata:
        labels:
          trainer.kubeflow.org/trainjob-ancestor-step: model-initializer
      spec:
        parallelism: 1
        completions: 1
        template:
          metadata: {}
          spec:
            containers:
            - name: model-initializer
              image: ghcr.io/kubeflow/trainer/model-initializer
              env:
              - name: STORAGE_URI
                value: hf://meta-llama/Llama-3.2-1B
              envFrom:
              - secretRef:
                  name: hf-token
              resources: {}
              volumeMounts:
              - name: initializer
                mountPath: /workspace
            volumes:
            - name: initializer
              persistentVolumeClaim:
                claimName: initializer` + stepsNodeJob,
		},
		{
			name:    "labels and annotations: template, TrainJob and plugins merged, Info wins",
			runtime: stepsRuntime,
			job: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: llm
  namespace: team-a
spec:
  runtimeRef:
    name: torch-llm
    kind: TrainingRuntime
  labels:
    tier: silver
    project: alpaca
  annotations:
    owner: alice
    ticket: ML-42
`,
			enforce: func(info *framework.Info) {
				framework.MergeMap(&info.Labels, map[string]string{"trainforge.dev/plugin": "yes"})
				framework.MergeMap(&info.Annotations, map[string]string{"trainforge.dev/note": "added"})
			},
			want: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm
  namespace: team-a
  labels:
    team: ml
    tier: silver
    project: alpaca
    trainforge.dev/plugin: "yes"
  annotations:
    owner: alice
    ticket: ML-42
    trainforge.dev/note: added
spec:
  suspend: false
  network:
    publishNotReadyAddresses: true
  successPolicy:
    operator: All
    targetReplicatedJobs: [node]
  replicatedJobs:` + stepsDatasetJob + stepsModelJob + stepsNodeJob,
		},
		{
			name:    "gang pod labels, annotations and schedulerName on the trainer PodSet only",
			runtime: stepsRuntime,
			job:     llmJob,
			enforce: func(info *framework.Info) {
				ps := info.TrainerPodSet()
				framework.MergeMap(&ps.PodLabels, map[string]string{"scheduling.x-k8s.io/pod-group": "llm", "app": "gang"})
				framework.MergeMap(&ps.PodAnnotations, map[string]string{"example.com/gang": "true"})
				ps.SchedulerName = "scheduler-plugins-scheduler"
			},
			want: stepsHeader + stepsDatasetJob + stepsModelJob + `
  - name: node
    replicas: 1
    dependsOn:
    - name: model-initializer
      status: Complete
    template:
      metadata:
        labels:
          trainer.kubeflow.org/trainjob-ancestor-step: trainer
      spec:
        parallelism: 2
        completions: 2
        template:
          metadata:
            labels:
              app: gang
              scheduling.x-k8s.io/pod-group: llm
            annotations:
              example.com/gang: "true"
          spec:
            schedulerName: scheduler-plugins-scheduler
            restartPolicy: Never
            containers:
            - name: node
              image: pytorch/pytorch:2.7
              command: [torchrun, /workspace/train.py]
              workingDir: /workspace
              securityContext:
                runAsNonRoot: true
              resources:
                limits:
                  nvidia.com/gpu: "1"
              volumeMounts:
              - name: initializer
                mountPath: /workspace
            - name: metrics
              image: prom/node-exporter
              resources: {}
            volumes:
            - name: initializer
              persistentVolumeClaim:
                claimName: initializer`,
		},
		{
			name: "suspend true reaches the JobSet",
			seed: frameworktest.SeedPlainML,
			job: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: queued
  namespace: default
spec:
  runtimeRef:
    name: first-runtime
  suspend: true
`,
			want: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: queued
  namespace: default
spec:
  suspend: true
  replicatedJobs:
  - name: trainer-node
    replicas: 1
    template:
      metadata: {}
      spec:
        parallelism: 1
        completions: 1
        template:
          metadata: {}
          spec:
            containers:
            - name: trainer
              image: python:alpine3.20
              command: [/bin/sh, -c, "echo 'Hello From Training Runtime'"]
              resources: {}
`,
		},
		{
			name: "suspend false set explicitly",
			seed: frameworktest.SeedPlainML,
			job: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: resumed
  namespace: default
spec:
  runtimeRef:
    name: first-runtime
  suspend: false
`,
			want: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: resumed
  namespace: default
spec:
  suspend: false
  replicatedJobs:
  - name: trainer-node
    replicas: 1
    template:
      metadata: {}
      spec:
        parallelism: 1
        completions: 1
        template:
          metadata: {}
          spec:
            containers:
            - name: trainer
              image: python:alpine3.20
              command: [/bin/sh, -c, "echo 'Hello From Training Runtime'"]
              resources: {}
`,
		},
		{
			name: "runtimePatches: a nodeSelector on the trainer pod, two patches applied in order",
			seed: frameworktest.SeedPlainML,
			job: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: patched
  namespace: default
spec:
  runtimeRef:
    name: first-runtime
  runtimePatches:
    - manager: kueue.x-k8s.io/manager
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: trainer-node
                template:
                  spec:
                    template:
                      spec:
                        nodeSelector:
                          pool: a
                          zone: x
                        tolerations:
                          - key: pool-a
                            operator: Exists
    - manager: example.com/second
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: trainer-node
                template:
                  spec:
                    template:
                      spec:
                        nodeSelector:
                          pool: b
                        tolerations:
                          - key: pool-b
                            operator: Exists
`,
			want: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: patched
  namespace: default
spec:
  suspend: false
  replicatedJobs:
  - name: trainer-node
    replicas: 1
    template:
      metadata: {}
      spec:
        parallelism: 1
        completions: 1
        template:
          metadata: {}
          spec:
            nodeSelector:
              pool: b
              zone: x
            tolerations:
            - key: pool-b
              operator: Exists
            containers:
            - name: trainer
              image: python:alpine3.20
              command: [/bin/sh, -c, "echo 'Hello From Training Runtime'"]
              resources: {}
`,
		},
		{
			name: "Info is authoritative: replicas, init containers, added container, volumes",
			runtime: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: multi
spec:
  template:
    spec:
      replicatedJobs:
        - name: trainer-node
          replicas: 2
          template:
            spec:
              parallelism: 4
              completions: 4
              template:
                spec:
                  initContainers:
                    - name: fetch
                      image: busybox
                      env:
                        - name: A
                          value: "1"
                  containers:
                    - name: trainer
                      image: trainer:v1
                  volumes:
                    - name: scratch
                      emptyDir: {}
`,
			job: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: multi
  namespace: default
spec:
  runtimeRef:
    name: multi
`,
			enforce: func(info *framework.Info) {
				ps := info.TrainerPodSet()
				ps.Count = 3
				ps.InitContainers[0].UpsertEnv(corev1.EnvVar{Name: "B", Value: "2"})
				ps.Containers = append(ps.Containers, framework.Container{
					Name:         "launcher",
					Image:        "launcher:v1",
					VolumeMounts: []corev1.VolumeMount{{Name: "hostfile", MountPath: "/etc/mpi"}},
				})
				ps.Volumes = append(ps.Volumes, corev1.Volume{Name: "hostfile", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "multi-hostfile"}},
				}})
			},
			want: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: multi
  namespace: default
spec:
  suspend: false
  replicatedJobs:
  - name: trainer-node
    replicas: 2
    template:
      metadata: {}
      spec:
        parallelism: 3
        completions: 3
        template:
          metadata: {}
          spec:
            initContainers:
            - name: fetch
              image: busybox
              env:
              - name: A
                value: "1"
              - name: B
                value: "2"
              resources: {}
            containers:
            - name: trainer
              image: trainer:v1
              resources: {}
            - name: launcher
              image: launcher:v1
              resources: {}
              volumeMounts:
              - name: hostfile
                mountPath: /etc/mpi
            volumes:
            - name: scratch
              emptyDir: {}
            - name: hostfile
              configMap:
                name: multi-hostfile
`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, job := load(t, tc.seed, tc.runtime, tc.job)
			info := newInfo(t, job, spec, tc.enforce)
			objs, err := New().(framework.Builder).Build(context.Background(), info, job)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if len(objs) != 1 {
				t.Fatalf("Build returned %d objects, want 1", len(objs))
			}
			if gvk := objs[0].GroupVersionKind(); gvk != GVK {
				t.Errorf("kind = %v, want %v", gvk, GVK)
			}
			if diff := cmp.Diff(jsonMap(t, tc.want), jsonMap(t, objs[0].Object)); diff != "" {
				t.Errorf("JobSet (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildDoesNotMutateInfoAndIsDeterministic(t *testing.T) {
	spec := frameworktest.Runtime(t, stepsRuntime)
	job := frameworktest.TrainJob(t, `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: llm
  namespace: team-a
spec:
  runtimeRef:
    name: torch-llm
    kind: TrainingRuntime
  labels: {a: "1", b: "2", c: "3", d: "4", e: "5"}
  annotations: {a: "1", b: "2", c: "3", d: "4", e: "5"}
  trainer:
    image: registry.example.com/llm:v2
    resourcesPerNode:
      requests:
        cpu: "8"
  initializer:
    dataset:
      storageUri: hf://tatsu-lab/alpaca
      secretRef:
        name: hf-token
`)
	info := newInfo(t, job, spec, func(info *framework.Info) {
		ps := info.TrainerPodSet()
		ps.PodLabels = map[string]string{"x": "1", "y": "2", "z": "3"}
		ps.SchedulerName = "gang"
		ps.TrainerContainer().UpsertEnv(corev1.EnvVar{Name: "PET_NNODES", Value: "2"})
	})
	before := mustJSON(t, info)
	jobBefore := mustJSON(t, job)

	p := New().(framework.Builder)
	first, err := p.Build(context.Background(), info, job)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if diff := cmp.Diff(before, mustJSON(t, info)); diff != "" {
		t.Fatalf("Build changed Info (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(jobBefore, mustJSON(t, job)); diff != "" {
		t.Fatalf("Build changed the TrainJob (-before +after):\n%s", diff)
	}

	// The output shares no memory with Info: changing it leaves Info alone.
	scribble(first[0].Object)
	if diff := cmp.Diff(before, mustJSON(t, info)); diff != "" {
		t.Fatalf("changing the built JobSet changed Info (-before +after):\n%s", diff)
	}

	// Nor does the typed JobSet that Build is made from.
	js, err := NewJobSet(info, job)
	if err != nil {
		t.Fatalf("NewJobSet: %v", err)
	}
	scribbleJobSet(js)
	if diff := cmp.Diff(before, mustJSON(t, info)); diff != "" {
		t.Fatalf("changing the typed JobSet changed Info (-before +after):\n%s", diff)
	}

	// Same input, byte-identical output, every time.
	want := ""
	for i := range 20 {
		objs, err := p.Build(context.Background(), info, job)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		got, err := objs[0].MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = string(got)
			continue
		}
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Fatalf("build %d differs from the first (-first +this):\n%s", i, diff)
		}
	}
}

// scribbleJobSet overwrites, in place, every value that Build takes from
// Info.
func scribbleJobSet(js *jobsetv1alpha2.JobSet) {
	js.Labels["a"] = "scribbled"
	js.Annotations["a"] = "scribbled"
	for k := range js.Spec.ReplicatedJobs {
		pod := &js.Spec.ReplicatedJobs[k].Template.Spec.Template
		for key := range pod.Labels {
			pod.Labels[key] = "scribbled"
		}
		for i := range pod.Spec.Volumes {
			pod.Spec.Volumes[i].Name = "scribbled"
			if pvc := pod.Spec.Volumes[i].PersistentVolumeClaim; pvc != nil {
				pvc.ClaimName = "scribbled"
			}
		}
		for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range cs {
				c := &cs[i]
				for j := range c.Command {
					c.Command[j] = "scribbled"
				}
				for j := range c.Args {
					c.Args[j] = "scribbled"
				}
				for j := range c.Env {
					c.Env[j].Value = "scribbled"
				}
				for j := range c.EnvFrom {
					if c.EnvFrom[j].SecretRef != nil {
						c.EnvFrom[j].SecretRef.Name = "scribbled"
					}
				}
				for j := range c.Ports {
					c.Ports[j].ContainerPort = -1
				}
				for j := range c.VolumeMounts {
					c.VolumeMounts[j].MountPath = "scribbled"
				}
				for name := range c.Resources.Requests {
					c.Resources.Requests[name] = resource.MustParse("999")
				}
				for name := range c.Resources.Limits {
					c.Resources.Limits[name] = resource.MustParse("999")
				}
			}
		}
	}
}

// scribble overwrites every string and number in an unstructured object.
func scribble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch e.(type) {
			case string:
				x[k] = "scribbled"
			case int64:
				x[k] = int64(-1)
			default:
				scribble(e)
			}
		}
	case []any:
		for i, e := range x {
			switch e.(type) {
			case string:
				x[i] = "scribbled"
			default:
				scribble(e)
			}
		}
	}
}

func TestBuildErrors(t *testing.T) {
	spec, job := load(t, frameworktest.SeedPlainML, "", llmJob)
	info := newInfo(t, job, spec, nil)
	info.Template = []byte(`{"spec":{"replicatedJobs":"not a list"}}`)
	if _, err := New().(framework.Builder).Build(context.Background(), info, job); err == nil {
		t.Fatal("Build accepted an undecodable template")
	}
}

func TestDescribe(t *testing.T) {
	want := framework.Description{
		Name:    "JobSet",
		Version: "v0.1.0",
		Builds:  []schema.GroupVersionKind{{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}},
	}
	if diff := cmp.Diff(want, New().Describe()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
	p := New()
	if _, ok := p.(framework.Builder); !ok {
		t.Error("the plugin is not a Builder")
	}
	if _, ok := p.(framework.StatusReporter); !ok {
		t.Error("the plugin is not a StatusReporter")
	}
}
