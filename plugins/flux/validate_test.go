package flux

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

func TestValidate(t *testing.T) {
	const divide = "must divide the 4 GPUs of a node, so that every Flux task gets the same number of GPUs (flux run -g)"
	cases := []struct {
		name         string
		file         string
		change       func(*trainer.TrainingRuntimeSpec, *trainer.TrainJob)
		runtimeCheck bool
		want         []string
	}{
		{name: "Kubeflow's LAMMPS example", file: kubeflow},
		{name: "GPUs, settings on the runtime", file: gpus},
		{name: "a runtime check of Kubeflow's flux-distributed", file: kubeflow, runtimeCheck: true},
		{name: "a TrainJob without spec.trainer", file: kubeflow,
			change: func(_ *trainer.TrainingRuntimeSpec, j *trainer.TrainJob) { j.Spec.Trainer = nil }},
		{name: "no trainer step", file: kubeflow, runtimeCheck: true,
			change: func(s *trainer.TrainingRuntimeSpec, _ *trainer.TrainJob) {
				rj := &s.Template.Spec.ReplicatedJobs[0]
				rj.Name, rj.Template.Labels = "workers", nil
			},
			want: []string{`spec.template.spec.replicatedJobs: Required value: the runtime has no trainer step: label a replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer (or name it "node" or "trainer-node")`}},
		{name: "the runtime's own flux-installer", file: gpus,
			change: func(s *trainer.TrainingRuntimeSpec, _ *trainer.TrainJob) {
				s.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.InitContainers[0].Name = "flux-installer"
			},
			want: []string{`spec.runtimeRef: Invalid value: "flux-gpus": replicatedJob "trainer" has an init container named "flux-installer", the name of the one the Flux plugin adds to install Flux: rename it`}},
		{name: "a runtime's numProcPerNode 0", file: kubeflow, runtimeCheck: true,
			change: func(s *trainer.TrainingRuntimeSpec, _ *trainer.TrainJob) {
				s.MLPolicy.Flux.NumProcPerNode = ptr.To[int32](0)
			},
			want: []string{`spec.mlPolicy.flux.numProcPerNode: Invalid value: 0: must be at least 1`}},
		{name: "a TrainJob's numProcPerNode 0", file: kubeflow,
			change: func(_ *trainer.TrainingRuntimeSpec, j *trainer.TrainJob) { j.Spec.Trainer.NumProcPerNode = ioi(0) },
			want:   []string{`spec.trainer.numProcPerNode: Invalid value: "0": must be a positive integer, "auto" or "gpu" (the GPUs of one node, 1 without GPUs)`}},
		{name: "a TrainJob's numProcPerNode cpu", file: kubeflow,
			change: func(_ *trainer.TrainingRuntimeSpec, j *trainer.TrainJob) { j.Spec.Trainer.NumProcPerNode = ios("cpu") },
			want:   []string{`spec.trainer.numProcPerNode: Invalid value: "cpu": must be a positive integer, "auto" or "gpu" (the GPUs of one node, 1 without GPUs)`}},
		{name: "tasks that cannot share the GPUs evenly", file: gpus,
			change: func(_ *trainer.TrainingRuntimeSpec, j *trainer.TrainJob) { j.Spec.Trainer.NumProcPerNode = ioi(3) },
			want:   []string{`spec.trainer.numProcPerNode: Invalid value: 3: ` + divide}},
		{name: "the runtime's tasks and the TrainJob's GPUs", file: gpus,
			change: func(_ *trainer.TrainingRuntimeSpec, j *trainer.TrainJob) {
				j.Spec.Trainer.NumProcPerNode = nil
				j.Spec.Trainer.ResourcesPerNode = limits("nvidia.com/gpu", "2")
			},
			want: []string{`spec.mlPolicy.flux.numProcPerNode: Invalid value: 4: must divide the 2 GPUs of a node, so that every Flux task gets the same number of GPUs (flux run -g)`}},
		{name: "numNodes 0", file: kubeflow,
			change: func(_ *trainer.TrainingRuntimeSpec, j *trainer.TrainJob) { j.Spec.Trainer.NumNodes = ptr.To[int32](0) },
			want:   []string{`spec.trainer.numNodes: Invalid value: 0: must be at least 1`}},
		{name: "a name too long for the scripts' volume", file: kubeflow,
			change: func(_ *trainer.TrainingRuntimeSpec, j *trainer.TrainJob) { j.Name = strings.Repeat("a", 48) },
			want:   []string{`metadata.name: Too long: may not be more than 47 bytes`}},
		{name: "a name just short enough", file: kubeflow,
			change: func(_ *trainer.TrainingRuntimeSpec, j *trainer.TrainJob) { j.Name = strings.Repeat("a", 47) }},
		{name: "bad settings in the TrainJob", file: kubeflow,
			change: func(_ *trainer.TrainingRuntimeSpec, j *trainer.TrainJob) {
				j.Spec.Trainer.Env = []corev1.EnvVar{
					{Name: "FLUX_QUEUE_POLICY", Value: "lifo"},
					{Name: "FLUX_NETWORK_DEVICE", Value: "eth0; rm -rf /"},
					{Name: "FLUX_VIEW_IMAGE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "image"}}},
					{Name: "FLUX_VIEW_IMAGE", Value: " "},
				}
			},
			want: []string{
				`spec.trainer.env[0]: Invalid value: "lifo": FLUX_QUEUE_POLICY must be one of Fluxion's queue policies: fcfs, easy, hybrid, conservative`,
				`spec.trainer.env[1]: Invalid value: "eth0; rm -rf /": FLUX_NETWORK_DEVICE must be a network interface name (1 to 15 letters, digits, '.', '_' or '-'), such as eth0`,
				`spec.trainer.env[2]: Invalid value: "": FLUX_VIEW_IMAGE must be a plain value: the Flux plugin writes it into the pods and their scripts, and cannot read it from a Secret, ConfigMap or field`,
				`spec.trainer.env[3]: Invalid value: " ": FLUX_VIEW_IMAGE must name an image, such as ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy`,
			}},
		{name: "a bad setting in the runtime", file: gpus, runtimeCheck: true,
			change: func(s *trainer.TrainingRuntimeSpec, _ *trainer.TrainJob) {
				s.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Env[1].Value = "ib 0"
			},
			want: []string{`spec.template.spec.replicatedJobs: Required value: the trainer container's env: FLUX_NETWORK_DEVICE must be a network interface name (1 to 15 letters, digits, '.', '_' or '-'), such as eth0`}},
		{name: "a bad setting in the runtime that the TrainJob replaces", file: gpus,
			change: func(s *trainer.TrainingRuntimeSpec, j *trainer.TrainJob) {
				s.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Env[1].Value = "ib 0"
				j.Spec.Trainer.Env = append(j.Spec.Trainer.Env, corev1.EnvVar{Name: "FLUX_NETWORK_DEVICE", Value: "ib0"})
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, job := load(t, tc.file)
			if tc.change != nil {
				tc.change(spec, job)
			}
			kind := framework.ValidateTrainJob
			if tc.runtimeCheck {
				job = framework.RuntimeCheckJob(job.Spec.RuntimeRef.Name)
				kind = framework.ValidateRuntime
			}
			info, err := framework.NewInfo(job, spec)
			if err != nil {
				t.Fatal(err)
			}
			warnings, errs, _ := New().(framework.Validator).Validate(context.Background(), framework.ValidateRequest{Kind: kind, Info: info, NewJob: job})
			if len(warnings) > 0 {
				t.Errorf("warnings %q, want none", warnings)
			}
			if diff := cmp.Diff(tc.want, messages(errs)); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
			// Enforce refuses what Validate rejects, as a field error (the
			// host reports it as a problem with the input).
			if tc.runtimeCheck {
				return
			}
			err = New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job)
			var fe *field.Error
			switch {
			case len(tc.want) == 0 && err != nil:
				t.Errorf("EnforceMLPolicy: %v", err)
			case len(tc.want) > 0 && (!errors.As(err, &fe) || !strings.HasPrefix(err.Error(), tc.want[0])):
				t.Errorf("EnforceMLPolicy = %v, want the field error %q", err, tc.want[0])
			}
		})
	}
}

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
