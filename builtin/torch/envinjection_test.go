package torch

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// injectionRuntime has a trainer with an init container and a sidecar
// next to its main container, and an initializer with an init container.
const injectionRuntime = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
spec:
  mlPolicy:
    numNodes: 2
    torch:
      numProcPerNode: 4
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
                  initContainers:
                    - name: preflight
                      image: busybox
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
                  initContainers:
                    - name: wait-for-master
                      image: busybox
                      env:
                        - name: TIMEOUT
                          value: "60"
                    - name: untouched
                      image: busybox
                  containers:
                    - name: node
                      image: pytorch/pytorch
                    - name: metrics
                      image: prom/node-exporter
`

func targets(t ...trainer.EnvInjectionTarget) *trainer.EnvInjection {
	return &trainer.EnvInjection{Targets: t}
}

func target(job string, containers ...string) trainer.EnvInjectionTarget {
	return trainer.EnvInjectionTarget{JobName: job, ContainerNames: containers}
}

// injectedEnv is what every target gets from injectionRuntime with 2
// nodes of 4 processes, for a TrainJob named llm.
func injectedEnv() []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: EnvNumNodes, Value: "2"},
		{Name: EnvNumProcPerNode, Value: "4"},
		nodeRank(),
		{Name: EnvMasterAddr, Value: "llm-node-0-0.llm"},
		{Name: EnvMasterPort, Value: "29500"},
	}
}

// TestEnforceEnvInjection gives the variables to a sidecar (a regular
// container), an init container and a container of another replicatedJob,
// and to nothing else.
func TestEnforceEnvInjection(t *testing.T) {
	cases := []struct {
		name      string
		injection *trainer.EnvInjection
		command   []string
		// want is the env of each container, by PodSet and name; the
		// containers not listed keep the runtime's env.
		want map[[2]string][]corev1.EnvVar
	}{
		{name: "no envInjection: the main container only",
			want: map[[2]string][]corev1.EnvVar{}},
		{name: "empty targets: the main container only", injection: targets(),
			want: map[[2]string][]corev1.EnvVar{}},
		{name: "a sidecar", injection: targets(target("node", "metrics")),
			want: map[[2]string][]corev1.EnvVar{{"node", "metrics"}: injectedEnv()}},
		{name: "an init container, after its own env", injection: targets(target("node", "wait-for-master")),
			want: map[[2]string][]corev1.EnvVar{
				{"node", "wait-for-master"}: append([]corev1.EnvVar{{Name: "TIMEOUT", Value: "60"}}, injectedEnv()...),
			}},
		{name: "several targets in several replicatedJobs",
			injection: targets(target("node", "metrics", "wait-for-master"), target("dataset-initializer", "preflight", "dataset-initializer")),
			want: map[[2]string][]corev1.EnvVar{
				{"node", "metrics"}:                            injectedEnv(),
				{"node", "wait-for-master"}:                    append([]corev1.EnvVar{{Name: "TIMEOUT", Value: "60"}}, injectedEnv()...),
				{"dataset-initializer", "preflight"}:           injectedEnv(),
				{"dataset-initializer", "dataset-initializer"}: injectedEnv(),
			}},
		{name: "torchtune: the targets still get the master variables",
			injection: targets(target("node", "metrics")), command: TuneEntrypoint,
			want: map[[2]string][]corev1.EnvVar{{"node", "metrics"}: injectedEnv()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := frameworktest.Runtime(t, injectionRuntime)
			spec.MLPolicy.Torch.EnvInjection = tc.injection
			job := frameworktest.TrainJob(t, labelledJob)
			job.Spec.RuntimeRef.Name = "torchtune-llama3.2-1b"
			job.Spec.Trainer = &trainer.Trainer{Command: tc.command}
			info := frameworktest.NewInfo(t, job, spec)
			before := frameworktest.NewInfo(t, job, spec)
			if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
				t.Fatal(err)
			}
			for k := range info.PodSets {
				ps := &info.PodSets[k]
				for _, list := range []struct{ got, before []framework.Container }{
					{ps.Containers, before.PodSets[k].Containers},
					{ps.InitContainers, before.PodSets[k].InitContainers},
				} {
					for i, c := range list.got {
						if ps.AncestorStep == trainer.TrainerStep && c.Name == "node" {
							continue // the main container: see the other tests
						}
						want, ok := tc.want[[2]string{ps.Name, c.Name}]
						if !ok {
							want = list.before[i].Env
						}
						if diff := cmp.Diff(want, c.Env); diff != "" {
							t.Errorf("env of %s/%s (-want +got):\n%s", ps.Name, c.Name, diff)
						}
					}
				}
			}
			// The main container gets the master variables unless torchtune
			// runs in it.
			_, main := trainerOrDie(t, info)
			_, hasMaster := env(main, EnvMasterAddr)
			if wantMaster := tc.command == nil; hasMaster != wantMaster {
				t.Errorf("main container has %s: %t, want %t", EnvMasterAddr, hasMaster, wantMaster)
			}
		})
	}
}

// TestEnforceEnvInjectionValueFromIsNotShared: each container gets its
// own PET_NODE_RANK valueFrom, so that a later change to one cannot
// change another.
func TestEnforceEnvInjectionValueFromIsNotShared(t *testing.T) {
	spec := frameworktest.Runtime(t, injectionRuntime)
	spec.MLPolicy.Torch.EnvInjection = targets(target("node", "metrics"))
	job := frameworktest.TrainJob(t, labelledJob)
	info := frameworktest.NewInfo(t, job, spec)
	if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	ps := info.PodSet("node")
	main, _ := env(&ps.Containers[0], EnvNodeRank)
	sidecar, _ := env(&ps.Containers[1], EnvNodeRank)
	if main.ValueFrom == nil || main.ValueFrom == sidecar.ValueFrom {
		t.Errorf("%s of the main container and of the sidecar share valueFrom %p", EnvNodeRank, main.ValueFrom)
	}
}

// injectionErrorCases are the envInjection targets that the runtime
// cannot honour, with the error Validate gives for each.
func injectionErrorCases() []struct {
	name      string
	runtime   string
	injection *trainer.EnvInjection
	want      field.ErrorList
} {
	targetsPath := field.NewPath("spec", "mlPolicy", "torch", "envInjection", "targets")
	return []struct {
		name      string
		runtime   string
		injection *trainer.EnvInjection
		want      field.ErrorList
	}{
		{name: "unknown replicatedJob", runtime: injectionRuntime,
			injection: targets(target("node", "metrics"), target("launcher", "x")),
			want: field.ErrorList{field.Invalid(targetsPath.Index(1).Child("jobName"), "launcher",
				`the runtime has no replicatedJob of that name; it has "dataset-initializer", "node"`)}},
		{name: "unknown container", runtime: injectionRuntime,
			injection: targets(target("node", "metrics", "log-shipper")),
			want: field.ErrorList{field.Invalid(targetsPath.Index(0).Child("containerNames").Index(1), "log-shipper",
				`replicatedJob "node" has no container or init container of that name; it has containers "node", "metrics"; initContainers "wait-for-master", "untouched"`)}},
		{name: "a container of another replicatedJob", runtime: injectionRuntime,
			injection: targets(target("dataset-initializer", "wait-for-master")),
			want: field.ErrorList{field.Invalid(targetsPath.Index(0).Child("containerNames").Index(0), "wait-for-master",
				`replicatedJob "dataset-initializer" has no container or init container of that name; it has containers "dataset-initializer"; initContainers "preflight"`)}},
		{name: "the main container of a legacy runtime, named trainer", runtime: legacyRuntime,
			injection: targets(target("trainer-node", "trainer")),
			want: field.ErrorList{field.Invalid(targetsPath.Index(0).Child("containerNames").Index(0), "trainer",
				`is the trainer's main container, which always gets the PET_* variables; name only the other containers of replicatedJob "trainer-node"`)}},
		{name: "every error, in order", runtime: injectionRuntime,
			injection: targets(target("node", "x", "metrics", "y"), target("z", "a")),
			want: field.ErrorList{
				field.Invalid(targetsPath.Index(0).Child("containerNames").Index(0), "x",
					`replicatedJob "node" has no container or init container of that name; it has containers "node", "metrics"; initContainers "wait-for-master", "untouched"`),
				field.Invalid(targetsPath.Index(0).Child("containerNames").Index(2), "y",
					`replicatedJob "node" has no container or init container of that name; it has containers "node", "metrics"; initContainers "wait-for-master", "untouched"`),
				field.Invalid(targetsPath.Index(1).Child("jobName"), "z",
					`the runtime has no replicatedJob of that name; it has "dataset-initializer", "node"`),
			}},
	}
}

// legacyRuntime names its trainer step trainer-node and its main
// container trainer, as the seed examples do.
const legacyRuntime = `
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
        - name: trainer-node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: trainer
                      image: pytorch/pytorch
`

// TestValidateEnvInjection: Validate reports every target the runtime
// cannot honour, for a TrainJob and for the runtime alone.
func TestValidateEnvInjection(t *testing.T) {
	for _, tc := range injectionErrorCases() {
		for _, runtimeCheck := range []bool{false, true} {
			name := tc.name
			if runtimeCheck {
				name += " (runtime check)"
			}
			t.Run(name, func(t *testing.T) {
				spec := frameworktest.Runtime(t, tc.runtime)
				spec.MLPolicy.Torch.EnvInjection = tc.injection
				job := frameworktest.TrainJob(t, labelledJob)
				kind := framework.ValidateTrainJob
				if runtimeCheck {
					job = framework.RuntimeCheckJob("torch-distributed")
					kind = framework.ValidateRuntime
				}
				info := frameworktest.NewInfo(t, job, spec)
				_, errs, _ := New().(framework.Validator).Validate(context.Background(), framework.ValidateRequest{Kind: kind, Info: info, NewJob: job})
				if diff := cmp.Diff(tc.want, errs); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestEnforceEnvInjectionErrors: EnforceMLPolicy fails on the targets
// Validate rejects, with the same errors, and leaves Info as it was.
func TestEnforceEnvInjectionErrors(t *testing.T) {
	for _, tc := range injectionErrorCases() {
		t.Run(tc.name, func(t *testing.T) {
			spec := frameworktest.Runtime(t, tc.runtime)
			spec.MLPolicy.Torch.EnvInjection = tc.injection
			job := frameworktest.TrainJob(t, labelledJob)
			info := frameworktest.NewInfo(t, job, spec)
			before := frameworktest.NewInfo(t, job, spec)
			err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job)
			want := "the Torch plugin cannot inject its variables: " + tc.want.ToAggregate().Error()
			if err == nil || err.Error() != want {
				t.Errorf("error %v,\nwant %s", err, want)
			}
			if diff := cmp.Diff(before, info); diff != "" {
				t.Errorf("a failed enforce changed Info (-before +after):\n%s", diff)
			}
		})
	}
}
