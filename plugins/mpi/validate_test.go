package mpi

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

const launcherAsNodeMsg = `spec.trainer.numNodes: Invalid value: 1: must be at least 2: the runtime runs the MPI launcher as a node (mlPolicy.mpi.runLauncherAsNode), so one node is the launcher and the replicatedJob "node" runs the others`

func TestValidate(t *testing.T) {
	cases := []struct {
		name         string
		runtime      string
		change       func(*trainer.TrainingRuntimeSpec)
		trainer      *trainer.Trainer
		runtimeCheck bool
		want         []string
	}{
		{name: "valid", runtime: deepspeed, trainer: &trainer.Trainer{NumNodes: ptr.To[int32](2), NumProcPerNode: ios("gpu")}},
		{name: "a runtime check accepts deepspeed-distributed's numNodes 1", runtime: deepspeed, runtimeCheck: true},
		{name: "a TrainJob on it must raise numNodes", runtime: deepspeed, want: []string{launcherAsNodeMsg}},
		{name: "a TrainJob's numNodes 1 with the launcher as a node", runtime: deepspeed, trainer: &trainer.Trainer{NumNodes: ptr.To[int32](1)}, want: []string{launcherAsNodeMsg}},
		{name: "numNodes 1 is fine with the launcher apart", runtime: launcher, trainer: &trainer.Trainer{NumNodes: ptr.To[int32](1)}},
		{name: "unsupported implementation", runtime: launcher,
			change: func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.MPI.MPIImplementation = ptr.To("MVAPICH") },
			want:   []string{`spec.mlPolicy.mpi.mpiImplementation: Unsupported value: "MVAPICH": supported values: "OpenMPI", "Intel", "MPICH"`}},
		{name: "relative sshAuthMountPath", runtime: launcher,
			change: func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.MPI.SSHAuthMountPath = ptr.To(".ssh") },
			want:   []string{`spec.mlPolicy.mpi.sshAuthMountPath: Invalid value: ".ssh": must be an absolute path other than /etc/mpi, where the launcher's hostfile is mounted`}},
		{name: "sshAuthMountPath on the hostfile", runtime: launcher,
			change: func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.MPI.SSHAuthMountPath = ptr.To("/etc/mpi/") },
			want:   []string{`spec.mlPolicy.mpi.sshAuthMountPath: Invalid value: "/etc/mpi/": must be an absolute path other than /etc/mpi, where the launcher's hostfile is mounted`}},
		{name: "a runtime without a worker replicatedJob", runtime: launcher, runtimeCheck: true,
			change: func(s *trainer.TrainingRuntimeSpec) { s.Template.Spec.ReplicatedJobs[1].Name = "workers" },
			want:   []string{`spec.template.spec.replicatedJobs: Required value: the MPI workers run in a replicatedJob named "node" besides the launcher "launcher" (the trainer step, labelled trainer.kubeflow.org/trainjob-ancestor-step: trainer); the runtime has none`}},
		{name: "the only replicatedJob node is the launcher", runtime: launcher,
			change: func(s *trainer.TrainingRuntimeSpec) {
				s.Template.Spec.ReplicatedJobs = s.Template.Spec.ReplicatedJobs[1:]
			},
			want: []string{`spec.runtimeRef: Invalid value: "rt": the MPI workers run in a replicatedJob named "node" besides the launcher "node" (the trainer step, labelled trainer.kubeflow.org/trainjob-ancestor-step: trainer); the runtime has none`}},
		{name: "workers without a main container", runtime: launcher,
			change: func(s *trainer.TrainingRuntimeSpec) {
				pod := &s.Template.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec
				pod.Containers = []corev1.Container{{Name: "sshd"}, {Name: "sidecar"}}
			},
			want: []string{`spec.runtimeRef: Invalid value: "rt": replicatedJob "node" of the MPI workers has no main container: name it "node", or give the pod a single container`}},
		{name: "an unlabelled launcher: node is taken for the trainer step", runtime: launcher,
			change: func(s *trainer.TrainingRuntimeSpec) { s.Template.Spec.ReplicatedJobs[0].Template.Labels = nil },
			want:   []string{`spec.runtimeRef: Invalid value: "rt": the MPI workers run in a replicatedJob named "node" besides the launcher "node" (the trainer step, labelled trainer.kubeflow.org/trainjob-ancestor-step: trainer); the runtime has none`}},
		{name: "no launcher and no node", runtime: launcher,
			change: func(s *trainer.TrainingRuntimeSpec) {
				s.Template.Spec.ReplicatedJobs[0].Template.Labels = nil
				s.Template.Spec.ReplicatedJobs[1].Name = "workers"
			},
			want: []string{`spec.runtimeRef: Invalid value: "rt": the runtime has no trainer step: label a replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer (or name it "node" or "trainer-node")`}},
		{name: "runtime's numProcPerNode 0, on a runtime check too", runtime: launcher, runtimeCheck: true,
			change: func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.MPI.NumProcPerNode = ptr.To[int32](0) },
			want:   []string{`spec.mlPolicy.mpi.numProcPerNode: Invalid value: 0: must be at least 1`}},
		{name: "TrainJob's numProcPerNode 0", runtime: launcher, trainer: &trainer.Trainer{NumProcPerNode: ioi(0)},
			want: []string{`spec.trainer.numProcPerNode: Invalid value: "0": must be a positive integer, "auto" or "gpu" (the GPUs of one node, 1 without GPUs)`}},
		{name: "TrainJob's numProcPerNode cpu", runtime: launcher, trainer: &trainer.Trainer{NumProcPerNode: ios("cpu")},
			want: []string{`spec.trainer.numProcPerNode: Invalid value: "cpu": must be a positive integer, "auto" or "gpu" (the GPUs of one node, 1 without GPUs)`}},
		{name: "the variables of OpenMPI", runtime: launcher, trainer: &trainer.Trainer{Env: []corev1.EnvVar{
			{Name: "OK", Value: "1"}, {Name: "OMPI_MCA_orte_set_default_slots", Value: "9"}}},
			want: []string{`spec.trainer.env[1].name: Forbidden: OMPI_MCA_orte_set_default_slots is set by the MPI plugin, which sets OMPI_MCA_orte_default_hostfile, OMPI_MCA_orte_keep_fqdn_hostnames, OMPI_MCA_orte_set_default_slots, OMPI_MCA_plm_rsh_args itself; remove it from spec.trainer.env`}},
		{name: "the variables of Intel MPI, not OpenMPI's", runtime: launcher,
			change:  func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.MPI.MPIImplementation = ptr.To(IntelMPI) },
			trainer: &trainer.Trainer{Env: []corev1.EnvVar{{Name: "OMPI_MCA_plm_rsh_args", Value: "x"}, {Name: "I_MPI_PERHOST", Value: "9"}}},
			want:    []string{`spec.trainer.env[1].name: Forbidden: I_MPI_PERHOST is set by the MPI plugin, which sets I_MPI_HYDRA_HOST_FILE, I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS, I_MPI_PERHOST itself; remove it from spec.trainer.env`}},
		{name: "the variables of MPICH", runtime: launcher,
			change:  func(s *trainer.TrainingRuntimeSpec) { s.MLPolicy.MPI.MPIImplementation = ptr.To(MPICH) },
			trainer: &trainer.Trainer{Env: []corev1.EnvVar{{Name: "HYDRA_HOST_FILE", Value: "/tmp/h"}}},
			want:    []string{`spec.trainer.env[0].name: Forbidden: HYDRA_HOST_FILE is set by the MPI plugin, which sets HYDRA_HOST_FILE, HYDRA_LAUNCH_EXTRA_ARGS itself; remove it from spec.trainer.env`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := runtimeSpec(t, tc.runtime)
			if tc.change != nil {
				tc.change(spec)
			}
			job := newJob(tc.trainer)
			kind := framework.ValidateTrainJob
			if tc.runtimeCheck {
				job = framework.RuntimeCheckJob("rt")
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
			case len(tc.want) > 0 && (!errors.As(err, &fe) || err.Error() != tc.want[0]):
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
