package flux

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

func TestDescribe(t *testing.T) {
	want := framework.Description{
		Name: "Flux", Version: "v0.1.0", MLPolicyKeys: []string{"flux"},
		Builds: []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"}},
	}
	if diff := cmp.Diff(want, New().Describe()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

// TestKubeflowPods: Kubeflow Trainer's LAMMPS example gets Kubeflow
// Trainer's pods: the names of the objects, volumes and containers, the
// installer's image and command, the wrapped command, the mounts (but
// /dev/shm's, writable here).
func TestKubeflowPods(t *testing.T) {
	spec, job := load(t, kubeflow)
	b := run(t, spec, job)

	if b.ps.Replicas != 1 || b.ps.Count != 2 {
		t.Errorf("trainer step runs %d replicas of %d pods, want 1 of 2 (spec.trainer.numNodes)", b.ps.Replicas, b.ps.Count)
	}
	wantC := framework.Container{
		Name:  "node",
		Image: "ghcr.io/converged-computing/metric-lammps:latest",
		Command: []string{"/bin/bash", "/etc/flux-config/entrypoint.sh",
			"lmp -v x 4 -v y 4 -v z 4 -in in.reaxc.hns -nocite"},
		Env: []corev1.EnvVar{{Name: "FLUX_VIEW_IMAGE", Value: "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy"}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "flux-install", MountPath: "/mnt/flux"},
			{Name: "spack-install", MountPath: "/opt/software"},
			{Name: "lammps-flux-flux-entrypoint", MountPath: "/etc/flux-config", ReadOnly: true},
			{Name: "flux-curve", MountPath: "/curve", ReadOnly: true},
			{Name: "shared-memory", MountPath: "/dev/shm"},
		},
	}
	if diff := cmp.Diff(wantC, *b.c, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("trainer container (-want +got):\n%s", diff)
	}
	wantInit := []framework.Container{{
		Name:    "flux-installer",
		Image:   "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy",
		Command: []string{"/bin/bash", "/etc/flux-config/init.sh"},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "flux-install", MountPath: "/mnt/flux"},
			{Name: "lammps-flux-flux-entrypoint", MountPath: "/etc/flux-config", ReadOnly: true},
		},
	}}
	if diff := cmp.Diff(wantInit, b.ps.InitContainers, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("init containers (-want +got):\n%s", diff)
	}
	wantVolumes := []corev1.Volume{
		{Name: "spack-install", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "flux-install", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "lammps-flux-flux-entrypoint", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "lammps-flux-flux-entrypoint"}, DefaultMode: ptr.To[int32](0o755),
		}}},
		{Name: "shared-memory", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		{Name: "flux-curve", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "lammps-flux-flux-curve", DefaultMode: ptr.To[int32](0o400),
		}}},
	}
	if diff := cmp.Diff(wantVolumes, b.ps.Volumes); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}

	// The objects the volumes name, with the keys the containers read.
	if b.cm.Name != "lammps-flux-flux-entrypoint" || b.secret.Name != "lammps-flux-flux-curve" {
		t.Errorf("built ConfigMap %q and Secret %q, want lammps-flux-flux-entrypoint and lammps-flux-flux-curve", b.cm.Name, b.secret.Name)
	}
	if keys := sortedKeys(b.cm.Data); !cmp.Equal(keys, []string{"entrypoint.sh", "init.sh"}) {
		t.Errorf("ConfigMap keys %v, want entrypoint.sh and init.sh", keys)
	}
	if _, ok := b.secret.Data["curve.cert"]; !ok || len(b.secret.Data) != 1 {
		t.Errorf("Secret keys %v, want curve.cert", sortedKeys(b.secret.Data))
	}
	if b.secret.Type != "" || b.secret.Immutable != nil {
		t.Errorf("Secret of type %q, immutable %v: want Kubeflow's, an Opaque Secret applied like any object", b.secret.Type, b.secret.Immutable)
	}
}

// TestBrokerConfig: the brokers' TOML, read back as Flux reads it, is
// Kubeflow Trainer's for its LAMMPS example; the runtime's subdomain and
// the settings change what they must.
func TestBrokerConfig(t *testing.T) {
	kubeflowWant := map[string]any{
		"access":   map[string]any{"allow-guest-user": true, "allow-root-owner": true},
		"resource": map[string]any{"path": "/mnt/flux/config/etc/flux/system/R"},
		"bootstrap": map[string]any{
			"curve_cert":      "/mnt/flux/config/etc/curve/curve.cert",
			"default_port":    int64(8050),
			"default_bind":    "tcp://eth0:%p",
			"default_connect": "tcp://%h.lammps-flux.team-a.svc.cluster.local:%p",
			"hosts":           []any{map[string]any{"host": "lammps-flux-node-0-[0-1]"}},
		},
		"archive":                map[string]any{"dbpath": "/mnt/flux/config/var/lib/flux/job-archive.sqlite", "period": "1m", "busytimeout": "50s"},
		"sched-fluxion-qmanager": map[string]any{"queue-policy": "fcfs"},
	}
	gpusWant := map[string]any{}
	for k, v := range kubeflowWant {
		gpusWant[k] = v
	}
	gpusWant["bootstrap"] = map[string]any{
		"curve_cert":      "/mnt/flux/config/etc/curve/curve.cert",
		"default_port":    int64(8050),
		"default_bind":    "tcp://ib0:%p",
		"default_connect": "tcp://%h.hpc.team-b.svc.cluster.local:%p",
		"hosts":           []any{map[string]any{"host": "md-trainer-0-[0-2]"}},
	}
	gpusWant["sched-fluxion-qmanager"] = map[string]any{"queue-policy": "easy"}

	for _, tc := range []struct {
		file string
		want map[string]any
	}{{kubeflow, kubeflowWant}, {gpus, gpusWant}} {
		t.Run(tc.file, func(t *testing.T) {
			spec, job := load(t, tc.file)
			b := run(t, spec, job)
			init := b.cm.Data["init.sh"]
			_, rest, ok := strings.Cut(init, "<<'BROKER_TOML'\n")
			text, _, ok2 := strings.Cut(rest, "BROKER_TOML\n")
			if !ok || !ok2 {
				t.Fatalf("init.sh writes no broker.toml:\n%s", init)
			}
			var got map[string]any
			if err := toml.Unmarshal([]byte(text), &got); err != nil {
				t.Fatalf("broker.toml is not TOML: %v\n%s", err, text)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("broker.toml (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScripts: what the scripts run that depends on the job: the host
// list, the lead's hostname, the resources of a node and flux run's flags.
func TestScripts(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		change  func(*trainer.TrainJob)
		hosts   string
		lead    string
		encode  string
		runArgs string
	}{
		{name: "Kubeflow's LAMMPS: 2 nodes of 4 tasks", file: kubeflow,
			hosts: "lammps-flux-node-0-[0-1]", lead: "lammps-flux-node-0-0",
			encode: "--cores=0-3", runArgs: "-N 2 -n 8"},
		{name: "one node of one task", file: kubeflow,
			change: func(j *trainer.TrainJob) {
				j.Spec.Trainer.NumNodes, j.Spec.Trainer.NumProcPerNode = ptr.To[int32](1), ioi(1)
			},
			hosts: "lammps-flux-node-0-[0]", lead: "lammps-flux-node-0-0",
			encode: "--cores=0", runArgs: "-N 1 -n 1"},
		{name: "one GPU per node, one task: Kubeflow's GPU example", file: kubeflow,
			change: func(j *trainer.TrainJob) {
				j.Spec.Trainer.NumProcPerNode, j.Spec.Trainer.ResourcesPerNode = ioi(1), limits("nvidia.com/gpu", "1")
			},
			hosts: "lammps-flux-node-0-[0-1]", lead: "lammps-flux-node-0-0",
			encode: "--cores=0 --gpu=0", runArgs: "-N 2 -n 2 -g 1"},
		{name: "4 GPUs shared by 2 tasks, the runtime's replicatedJob and subdomain", file: gpus,
			hosts: "md-trainer-0-[0-2]", lead: "md-trainer-0-0",
			encode: "--cores=0-1 --gpu=0-3", runArgs: "-N 3 -n 6 -g 2"},
		{name: "gpu: a task per GPU", file: gpus,
			change: func(j *trainer.TrainJob) { j.Spec.Trainer.NumProcPerNode = ios("gpu") },
			hosts:  "md-trainer-0-[0-2]", lead: "md-trainer-0-0",
			encode: "--cores=0-3 --gpu=0-3", runArgs: "-N 3 -n 12 -g 1"},
		{name: "the runtime's numProcPerNode, the runtime's numNodes", file: gpus,
			change: func(j *trainer.TrainJob) { j.Spec.Trainer.NumProcPerNode, j.Spec.Trainer.NumNodes = nil, nil },
			hosts:  "md-trainer-0-[0-1]", lead: "md-trainer-0-0",
			encode: "--cores=0-3 --gpu=0-3", runArgs: "-N 2 -n 8 -g 1"},
		{name: "auto without GPUs: one task", file: kubeflow,
			change: func(j *trainer.TrainJob) { j.Spec.Trainer.NumProcPerNode = ios("auto") },
			hosts:  "lammps-flux-node-0-[0-1]", lead: "lammps-flux-node-0-0",
			encode: "--cores=0", runArgs: "-N 2 -n 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, job := load(t, tc.file)
			if tc.change != nil {
				tc.change(job)
			}
			b := run(t, spec, job)
			init, entry := b.cm.Data["init.sh"], b.cm.Data["entrypoint.sh"]
			for _, want := range []struct{ script, name, line string }{
				{init, "init.sh", "echo '" + tc.hosts + "' > \"$config/etc/flux/system/hostlist\"\n"},
				{entry, "entrypoint.sh", `flux R encode --hosts="$(cat "$config/etc/flux/system/hostlist")" ` + tc.encode + ` > "$config/etc/flux/system/R"` + "\n"},
				{entry, "entrypoint.sh", `if [ "$(hostname)" = "` + tc.lead + `" ]; then` + "\n"},
				{entry, "entrypoint.sh", `flux start -o --config "$cfg" $broker_options flux run ` + tc.runArgs + " $command\n"},
			} {
				if !strings.Contains(want.script, want.line) {
					t.Errorf("%s has no line\n\t%s\nit is:\n%s", want.name, want.line, want.script)
				}
			}
			// The lead is the first pod of Info: the one the others reach.
			if first := b.ps.Endpoints[0]; !strings.HasPrefix(first, tc.lead+".") {
				t.Errorf("the first pod is %s, the entrypoint's lead %s", first, tc.lead)
			}
		})
	}
}

// TestCommand: the entrypoint runs the command the container would have
// run, as one argument, as Kubeflow Trainer passes it; the runtime's args
// stay the container's when the TrainJob sets none.
func TestCommand(t *testing.T) {
	entrypoint := []string{"/bin/bash", "/etc/flux-config/entrypoint.sh"}
	cases := []struct {
		name     string
		file     string
		trainer  func(*trainer.Trainer)
		wantCmd  string
		wantArgs []string
	}{
		{name: "the TrainJob's command", file: kubeflow, wantCmd: "lmp -v x 4 -v y 4 -v z 4 -in in.reaxc.hns -nocite"},
		{name: "the TrainJob's command and args", file: kubeflow,
			trainer: func(t *trainer.Trainer) {
				t.Command, t.Args = []string{"python3"}, []string{"train.py", "--epochs", "3"}
			},
			wantCmd: "python3 train.py --epochs 3"},
		{name: "no command anywhere: an interactive cluster", file: kubeflow,
			trainer: func(t *trainer.Trainer) { t.Command = nil }, wantCmd: ""},
		{name: "the runtime's command; its args stay the container's", file: gpus,
			wantCmd: "lmp_gpu -k on g 2", wantArgs: []string{"-sf", "kk", "-in", "in.reaxff.hns"}},
		{name: "the TrainJob's args replace the runtime's", file: gpus,
			trainer: func(t *trainer.Trainer) { t.Args = []string{"-in", "in.small"} },
			wantCmd: "lmp_gpu -k on g 2 -in in.small"},
		{name: "the TrainJob's command keeps the runtime's args", file: gpus,
			trainer: func(t *trainer.Trainer) { t.Command = []string{"lmp"} },
			wantCmd: "lmp", wantArgs: []string{"-sf", "kk", "-in", "in.reaxff.hns"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, job := load(t, tc.file)
			if tc.trainer != nil {
				tc.trainer(job.Spec.Trainer)
			}
			before := job.DeepCopy()
			b := run(t, spec, job)
			if diff := cmp.Diff(append(entrypoint, tc.wantCmd), b.c.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantArgs, b.c.Args, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, job); diff != "" {
				t.Errorf("the plugin changed the TrainJob (-before +after):\n%s", diff)
			}
		})
	}
}

// TestSettings: FLUX_VIEW_IMAGE, FLUX_NETWORK_DEVICE and FLUX_QUEUE_POLICY
// from the runtime's trainer container, the TrainJob's env winning.
func TestSettings(t *testing.T) {
	cases := []struct {
		name                       string
		file                       string
		env                        []corev1.EnvVar
		image, device, queuePolicy string
	}{
		{name: "Kubeflow's defaults", file: kubeflow, env: []corev1.EnvVar{},
			image: "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy", device: "eth0", queuePolicy: "fcfs"},
		{name: "the runtime's, and the TrainJob's queue policy", file: gpus,
			image: "ghcr.io/converged-computing/flux-view-rocky:tag-9", device: "ib0", queuePolicy: "easy"},
		{name: "the TrainJob's win over the runtime's", file: gpus, env: []corev1.EnvVar{
			{Name: "FLUX_VIEW_IMAGE", Value: "ghcr.io/converged-computing/flux-view-rocky:arm-9"},
			{Name: "FLUX_NETWORK_DEVICE", Value: "eth1"},
		}, image: "ghcr.io/converged-computing/flux-view-rocky:arm-9", device: "eth1", queuePolicy: "fcfs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, job := load(t, tc.file)
			if tc.env != nil {
				job.Spec.Trainer.Env = tc.env
			}
			b := run(t, spec, job)
			if got := b.ps.InitContainers[len(b.ps.InitContainers)-1]; got.Name != "flux-installer" || got.Image != tc.image {
				t.Errorf("last init container %s runs %s, want flux-installer running %s", got.Name, got.Image, tc.image)
			}
			for _, line := range []string{
				"default_bind = 'tcp://" + tc.device + ":%p'\n",
				"queue-policy = '" + tc.queuePolicy + "'\n",
			} {
				if !strings.Contains(b.cm.Data["init.sh"], line) {
					t.Errorf("broker.toml has no line %q", line)
				}
			}
		})
	}
}

// TestEnforceIsIdempotent: the host enforces on every reconcile; a second
// pass must not wrap the wrapped command or add a second installer.
func TestEnforceIsIdempotent(t *testing.T) {
	for _, file := range []string{kubeflow, gpus} {
		t.Run(file, func(t *testing.T) {
			spec, job := load(t, file)
			b := run(t, spec, job)
			once, err := b.info.Copy()
			if err != nil {
				t.Fatal(err)
			}
			if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), b.info, job); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(once, b.info, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("a second Enforce changed Info (-once +twice):\n%s", diff)
			}
		})
	}
}

// TestNotFlux: the host calls the plugin only for runtimes that set
// "flux"; for any other it changes and builds nothing.
func TestNotFlux(t *testing.T) {
	spec, job := load(t, kubeflow)
	spec.MLPolicy.Flux = nil
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

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
