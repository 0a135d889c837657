package mpi

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

func TestDescribe(t *testing.T) {
	want := framework.Description{
		Name: "MPI", Version: "v0.1.0", MLPolicyKeys: []string{"mpi"},
		Builds: []schema.GroupVersionKind{{Version: "v1", Kind: "Secret"}, {Version: "v1", Kind: "ConfigMap"}},
	}
	if diff := cmp.Diff(want, New().Describe()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

func TestCounts(t *testing.T) {
	cases := []struct {
		name       string
		runtime    string
		change     func(*trainer.TrainingRuntimeSpec)
		numNodes   *int32
		wantWorker int32
	}{
		{name: "launcher as node: one of the nodes is the launcher", runtime: deepspeed, numNodes: ptr.To[int32](3), wantWorker: 2},
		{name: "launcher as node, two nodes", runtime: deepspeed, numNodes: ptr.To[int32](2), wantWorker: 1},
		{name: "launcher apart: the runtime's numNodes workers", runtime: launcher, wantWorker: 2},
		{name: "launcher apart: the TrainJob's numNodes workers", runtime: launcher, numNodes: ptr.To[int32](5), wantWorker: 5},
		{name: "the template's replicas and parallelism give way", runtime: launcher, numNodes: ptr.To[int32](3), wantWorker: 3,
			change: func(s *trainer.TrainingRuntimeSpec) {
				for i := range s.Template.Spec.ReplicatedJobs {
					s.Template.Spec.ReplicatedJobs[i].Replicas = 2
					s.Template.Spec.ReplicatedJobs[i].Template.Spec.Parallelism = ptr.To[int32](4)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := runtimeSpec(t, tc.runtime)
			if tc.change != nil {
				tc.change(spec)
			}
			info, _, _ := run(t, spec, newJob(&trainer.Trainer{NumNodes: tc.numNodes}))
			got := map[string][2]int32{}
			for _, ps := range info.PodSets {
				got[ps.Name] = [2]int32{ps.Replicas, ps.Count}
				if len(ps.Endpoints) != int(ps.Pods()) {
					t.Errorf("%s: %d endpoints for %d pods", ps.Name, len(ps.Endpoints), ps.Pods())
				}
			}
			want := map[string][2]int32{"launcher": {1, 1}, "node": {1, tc.wantWorker}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("replicas and count (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSlots(t *testing.T) {
	cases := []struct {
		name       string
		runtimeNPP *int32
		trainer    *trainer.Trainer
		want       string
	}{
		{name: "runtime's 1 becomes a worker's GPUs (the runtime's 2)", want: "2"},
		{name: "runtime's 1 becomes the GPUs of resourcesPerNode", trainer: &trainer.Trainer{ResourcesPerNode: limits("nvidia.com/gpu", "8")}, want: "8"},
		{name: "runtime's 1 stays 1 without GPUs", trainer: &trainer.Trainer{ResourcesPerNode: limits("cpu", "16")}, want: "1"},
		{name: "runtime's 1 stays 1 with one GPU", trainer: &trainer.Trainer{ResourcesPerNode: limits("nvidia.com/gpu", "1")}, want: "1"},
		{name: "runtime's other value stays", runtimeNPP: ptr.To[int32](3), want: "3"},
		{name: "TrainJob's integer wins", runtimeNPP: ptr.To[int32](3), trainer: &trainer.Trainer{NumProcPerNode: ioi(6)}, want: "6"},
		{name: "TrainJob's integer string", trainer: &trainer.Trainer{NumProcPerNode: ios("5")}, want: "5"},
		{name: "TrainJob's integer is not replaced by the GPUs", trainer: &trainer.Trainer{NumProcPerNode: ioi(1)}, want: "1"},
		{name: "TrainJob's auto: the GPUs", trainer: &trainer.Trainer{NumProcPerNode: ios("auto")}, want: "2"},
		{name: "TrainJob's gpu: the GPUs of resourcesPerNode", trainer: &trainer.Trainer{NumProcPerNode: ios("gpu"), ResourcesPerNode: limits("amd.com/gpu", "4")}, want: "4"},
		{name: "TrainJob's gpu without GPUs: 1", trainer: &trainer.Trainer{NumProcPerNode: ios("gpu"), ResourcesPerNode: limits("cpu", "4")}, want: "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := runtimeSpec(t, launcher)
			spec.MLPolicy.MPI.NumProcPerNode = tc.runtimeNPP
			info, _, cm := run(t, spec, newJob(tc.trainer))
			_, lc := podSet(t, info, "launcher")
			if got := env(lc, "OMPI_MCA_orte_set_default_slots"); got != tc.want {
				t.Errorf("OMPI_MCA_orte_set_default_slots = %q, want %q", got, tc.want)
			}
			want := "train-node-0-0.train slots=" + tc.want + "\ntrain-node-0-1.train slots=" + tc.want + "\n"
			if diff := cmp.Diff(want, cm.Data["hostfile"]); diff != "" {
				t.Errorf("hostfile (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEnv: the TrainJob's env reaches the launcher and the workers; the
// launcher then gets the variables of its implementation, the workers none.
func TestEnv(t *testing.T) {
	userEnv := []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}, {Name: "EXTRA", Value: "1"}}
	cases := []struct {
		implementation string
		want           []corev1.EnvVar
	}{
		{implementation: OpenMPI, want: []corev1.EnvVar{
			{Name: "OMPI_MCA_orte_default_hostfile", Value: "/etc/mpi/hostfile"},
			{Name: "OMPI_MCA_orte_keep_fqdn_hostnames", Value: "true"},
			{Name: "OMPI_MCA_orte_set_default_slots", Value: "2"},
			{Name: "OMPI_MCA_plm_rsh_args", Value: "-o ConnectionAttempts=10"},
		}},
		{implementation: IntelMPI, want: []corev1.EnvVar{
			{Name: "I_MPI_HYDRA_HOST_FILE", Value: "/etc/mpi/hostfile"},
			{Name: "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", Value: "-o ConnectionAttempts=10"},
			{Name: "I_MPI_PERHOST", Value: "2"},
		}},
		{implementation: MPICH, want: []corev1.EnvVar{
			{Name: "HYDRA_HOST_FILE", Value: "/etc/mpi/hostfile"},
			{Name: "HYDRA_LAUNCH_EXTRA_ARGS", Value: "-o ConnectionAttempts=10"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.implementation, func(t *testing.T) {
			spec := runtimeSpec(t, launcher)
			spec.MLPolicy.MPI.MPIImplementation = ptr.To(tc.implementation)
			info, _, _ := run(t, spec, newJob(&trainer.Trainer{Env: userEnv}))
			_, lc := podSet(t, info, "launcher")
			// The runtime's LOG_LEVEL=info is replaced in place.
			if diff := cmp.Diff(append(append([]corev1.EnvVar{}, userEnv...), tc.want...), lc.Env); diff != "" {
				t.Errorf("launcher env (-want +got):\n%s", diff)
			}
			_, wc := podSet(t, info, "node")
			if diff := cmp.Diff(userEnv, wc.Env); diff != "" {
				t.Errorf("worker env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVolumes(t *testing.T) {
	ssh := corev1.Volume{Name: "mpi-ssh-auth", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  "train-mpi-ssh-auth",
		DefaultMode: ptr.To[int32](0o400),
		Items: []corev1.KeyToPath{
			{Key: "ssh-privatekey", Path: "id_rsa", Mode: ptr.To[int32](0o640)},
			{Key: "ssh-publickey", Path: "id_rsa.pub", Mode: ptr.To[int32](0o644)},
			{Key: "ssh-publickey", Path: "authorized_keys", Mode: ptr.To[int32](0o644)},
		},
	}}}
	hostfile := corev1.Volume{Name: "mpi-hostfile", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "train-mpi-hostfile"},
		Items:                []corev1.KeyToPath{{Key: "hostfile", Path: "hostfile", Mode: ptr.To[int32](0o444)}},
	}}}
	hostfileMount := corev1.VolumeMount{Name: "mpi-hostfile", MountPath: "/etc/mpi"}
	for _, tc := range []struct {
		name, runtime, sshPath string
		numNodes               int32
	}{
		{name: "the runtime's sshAuthMountPath", runtime: deepspeed, sshPath: "/home/mpiuser/.ssh", numNodes: 2},
		{name: "the default sshAuthMountPath", runtime: launcher, sshPath: "/root/.ssh", numNodes: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, secret, cm := run(t, runtimeSpec(t, tc.runtime), newJob(&trainer.Trainer{NumNodes: &tc.numNodes}))
			sshMount := corev1.VolumeMount{Name: "mpi-ssh-auth", MountPath: tc.sshPath}
			l, lc := podSet(t, info, "launcher")
			w, wc := podSet(t, info, "node")
			for _, c := range []struct {
				what string
				want any
				got  any
			}{
				{"launcher volumes", []corev1.Volume{ssh, hostfile}, l.Volumes},
				{"launcher mounts", []corev1.VolumeMount{sshMount, hostfileMount}, lc.VolumeMounts},
				{"worker volumes", []corev1.Volume{ssh}, w.Volumes},
				{"worker mounts", []corev1.VolumeMount{sshMount}, wc.VolumeMounts},
			} {
				if diff := cmp.Diff(c.want, c.got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", c.what, diff)
				}
			}
			// The volumes name the objects Build returns, and their keys.
			if secret.Name != ssh.Secret.SecretName || cm.Name != hostfile.ConfigMap.Name {
				t.Errorf("built Secret %q and ConfigMap %q, the volumes mount %q and %q", secret.Name, cm.Name, ssh.Secret.SecretName, hostfile.ConfigMap.Name)
			}
			for _, item := range ssh.Secret.Items {
				if _, ok := secret.Data[item.Key]; !ok {
					t.Errorf("the Secret has no key %q", item.Key)
				}
			}
			if _, ok := cm.Data["hostfile"]; !ok {
				t.Error(`the ConfigMap has no key "hostfile"`)
			}
		})
	}
}

func TestHostfile(t *testing.T) {
	cases := []struct {
		name, runtime, implementation string
		launcherAsNode                bool
		want                          string
	}{
		{name: "OpenMPI, launcher as node, in the runtime's order (node first)", runtime: deepspeed, implementation: OpenMPI, launcherAsNode: true,
			want: "train-node-0-0.train slots=1\ntrain-node-0-1.train slots=1\ntrain-launcher-0-0.train slots=1\n"},
		{name: "OpenMPI, launcher apart", runtime: deepspeed, implementation: OpenMPI,
			want: "train-node-0-0.train slots=1\ntrain-node-0-1.train slots=1\ntrain-node-0-2.train slots=1\n"},
		{name: "Intel, launcher as node", runtime: deepspeed, implementation: IntelMPI, launcherAsNode: true,
			want: "train-node-0-0.train:1\ntrain-node-0-1.train:1\ntrain-launcher-0-0.train:1\n"},
		{name: "Intel, launcher apart", runtime: deepspeed, implementation: IntelMPI,
			want: "train-node-0-0.train:1\ntrain-node-0-1.train:1\ntrain-node-0-2.train:1\n"},
		{name: "MPICH, launcher as node", runtime: deepspeed, implementation: MPICH, launcherAsNode: true,
			want: "train-node-0-0.train:1\ntrain-node-0-1.train:1\ntrain-launcher-0-0.train:1\n"},
		{name: "MPICH, launcher apart", runtime: deepspeed, implementation: MPICH,
			want: "train-node-0-0.train:1\ntrain-node-0-1.train:1\ntrain-node-0-2.train:1\n"},
		{name: "launcher as node, in the runtime's order (launcher first)", runtime: launcher, implementation: OpenMPI, launcherAsNode: true,
			want: "train-launcher-0-0.train slots=2\ntrain-node-0-0.train slots=2\ntrain-node-0-1.train slots=2\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := runtimeSpec(t, tc.runtime)
			spec.MLPolicy.MPI.MPIImplementation = ptr.To(tc.implementation)
			spec.MLPolicy.MPI.RunLauncherAsNode = ptr.To(tc.launcherAsNode)
			_, _, cm := run(t, spec, newJob(&trainer.Trainer{NumNodes: ptr.To[int32](3)}))
			if diff := cmp.Diff(map[string]string{"hostfile": tc.want}, cm.Data); diff != "" {
				t.Errorf("ConfigMap data (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResources(t *testing.T) {
	cpu1 := corev1.ResourceRequirements{Requests: list("cpu", "1")}
	gpu2 := corev1.ResourceRequirements{Limits: list("nvidia.com/gpu", "2")}
	gpu4 := corev1.ResourceRequirements{Limits: list("nvidia.com/gpu", "4")}
	cases := []struct {
		name                   string
		runtime                string
		launcherAsNode         bool
		perNode                *corev1.ResourceRequirements
		wantLauncher, wantNode corev1.ResourceRequirements
	}{
		{name: "the runtime's, without resourcesPerNode", runtime: launcher, wantLauncher: cpu1, wantNode: gpu2},
		{name: "resourcesPerNode to the workers; the launcher apart keeps its own", runtime: launcher, perNode: &gpu4, wantLauncher: cpu1, wantNode: gpu4},
		{name: "resourcesPerNode to the launcher that is a node too", runtime: launcher, launcherAsNode: true, perNode: &gpu4, wantLauncher: gpu4, wantNode: gpu4},
		{name: "none anywhere", runtime: deepspeed, launcherAsNode: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := runtimeSpec(t, tc.runtime)
			spec.MLPolicy.MPI.RunLauncherAsNode = ptr.To(tc.launcherAsNode)
			info, _, _ := run(t, spec, newJob(&trainer.Trainer{NumNodes: ptr.To[int32](2), ResourcesPerNode: tc.perNode}))
			_, lc := podSet(t, info, "launcher")
			_, wc := podSet(t, info, "node")
			if diff := cmp.Diff(tc.wantLauncher, lc.Resources); diff != "" {
				t.Errorf("launcher resources (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNode, wc.Resources); diff != "" {
				t.Errorf("worker resources (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEnforceIsIdempotent: the host enforces on every reconcile, and the
// launcher's resources come back from the template each time.
func TestEnforceIsIdempotent(t *testing.T) {
	job := newJob(&trainer.Trainer{ResourcesPerNode: limits("nvidia.com/gpu", "4"), Env: []corev1.EnvVar{{Name: "A", Value: "1"}}})
	info, _, _ := run(t, runtimeSpec(t, launcher), job)
	once, err := info.Copy()
	if err != nil {
		t.Fatal(err)
	}
	if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(once, info, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("a second Enforce changed Info (-once +twice):\n%s", diff)
	}
}

// TestNotMPI: the host calls the plugin only for runtimes that set "mpi";
// for any other it changes and builds nothing.
func TestNotMPI(t *testing.T) {
	spec := runtimeSpec(t, launcher)
	spec.MLPolicy.MPI = nil
	job := newJob(nil)
	info, err := framework.NewInfo(job, spec)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := info.Copy()
	p := New()
	if err := p.(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, info, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Info changed (-before +after):\n%s", diff)
	}
	if objs, err := p.(framework.Builder).Build(context.Background(), info, job); err != nil || len(objs) != 0 {
		t.Errorf("Build = %v, %v; want nothing", objs, err)
	}
}
