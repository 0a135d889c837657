package trainjobstatus

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// checkpointing is a runtime that opts into the checkpoint contract: its
// trainer step mounts a claim in the main container, read-only in a
// sidecar, and gives its pods 120 s to stop.
const checkpointing = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: ckpt
spec:
  template:
    metadata:
      annotations:
        trainforge.dev/checkpoint-volume: checkpoints
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
                  terminationGracePeriodSeconds: 120
                  volumes:
                    - name: checkpoints
                      persistentVolumeClaim: {claimName: llm-checkpoints}
                    - name: scratch
                      emptyDir: {}
                  containers:
                    - name: node
                      image: python:3.12
                      volumeMounts:
                        - {name: checkpoints, mountPath: /checkpoints}
                    - name: uploader
                      image: busybox
                      volumeMounts:
                        - {name: checkpoints, mountPath: /ckpt, readOnly: true}
`

func envOf(c framework.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		out[e.Name] = e.Value
	}
	return out
}

func TestEnforceTellsTheTrainerWhereToCheckpoint(t *testing.T) {
	_, job := frameworktest.Seed(t, frameworktest.SeedPlainML)
	info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, checkpointing))
	if err := configured(t).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatalf("EnforceMLPolicy: %v", err)
	}
	node, uploader := info.PodSet("node").Containers[0], info.PodSet("node").Containers[1]
	if env := envOf(node); env["TRAINFORGE_CHECKPOINT_DIR"] != "/checkpoints" || env["TRAINFORGE_CHECKPOINT_GRACE_SECONDS"] != "120" {
		t.Errorf("container node: %v, want TRAINFORGE_CHECKPOINT_DIR=/checkpoints, TRAINFORGE_CHECKPOINT_GRACE_SECONDS=120", env)
	}
	if env := envOf(uploader); env["TRAINFORGE_CHECKPOINT_DIR"] != "" || env["TRAINFORGE_CHECKPOINT_GRACE_SECONDS"] != "" {
		t.Errorf("container uploader mounts the volume read-only, yet got %v", env)
	}
	if env := envOf(uploader); env["KUBEFLOW_TRAINER_SERVER_URL"] == "" {
		t.Error("container uploader lost the progress variables")
	}
}

func TestEnforceGraceDefaultsToTheAPIServers(t *testing.T) {
	_, job := frameworktest.Seed(t, frameworktest.SeedPlainML)
	info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, strings.Replace(checkpointing, "terminationGracePeriodSeconds: 120", "", 1)))
	if err := configured(t).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatalf("EnforceMLPolicy: %v", err)
	}
	if got := envOf(info.PodSet("node").Containers[0])["TRAINFORGE_CHECKPOINT_GRACE_SECONDS"]; got != "30" {
		t.Errorf("TRAINFORGE_CHECKPOINT_GRACE_SECONDS = %q, want 30, the API server's default", got)
	}
}

// TestEnforceWithoutTheAnnotationAddsNoCheckpointVariable: a runtime that
// does not opt in gets the pods it got before.
func TestEnforceWithoutTheAnnotationAddsNoCheckpointVariable(t *testing.T) {
	_, job := frameworktest.Seed(t, frameworktest.SeedPlainML)
	info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, strings.Replace(checkpointing, "trainforge.dev/checkpoint-volume: checkpoints", "team: ml", 1)))
	if err := configured(t).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatalf("EnforceMLPolicy: %v", err)
	}
	for _, c := range info.PodSet("node").Containers {
		if len(c.Env) != 3 {
			t.Errorf("container %s: %v, want only the 3 progress variables", c.Name, c.Env)
		}
	}
}

// TestCheckpointVolumeMustOutliveThePods: each bad annotation is an error
// on the field that set it, and the same at Enforce.
func TestCheckpointVolumeMustOutliveThePods(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"empty", "checkpoint-volume: checkpoints", `checkpoint-volume: ""`, `must name a volume of the trainer step's pod template`},
		{"missing", "checkpoint-volume: checkpoints", "checkpoint-volume: ckpt", `the trainer step (replicatedJob node) has no volume "ckpt"; it has checkpoints, scratch`},
		{"emptyDir", "checkpoint-volume: checkpoints", "checkpoint-volume: scratch", `volume "scratch" is an emptyDir volume; checkpoints need a volume that outlives pods and restarts`},
		{"read-only claim", "{claimName: llm-checkpoints}", "{claimName: llm-checkpoints, readOnly: true}", `volume "checkpoints" is read-only`},
		{"not mounted read-write", "{name: checkpoints, mountPath: /checkpoints}", "{name: checkpoints, mountPath: /checkpoints, readOnly: true}", `no container of the trainer step (replicatedJob node) mounts volume "checkpoints" read-write`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, job := frameworktest.Seed(t, frameworktest.SeedPlainML)
			info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, strings.Replace(checkpointing, tc.from, tc.to, 1)))
			p := configured(t)
			_, errs, err := p.Validate(context.Background(), framework.ValidateRequest{Kind: framework.ValidateRuntime, Info: info, NewJob: job})
			if err != nil || len(errs) != 1 {
				t.Fatalf("Validate: %v, %v; want one field error", errs, err)
			}
			if got := errs[0].Field; got != "spec.template.metadata.annotations[trainforge.dev/checkpoint-volume]" {
				t.Errorf("error on %s, want the runtime's annotation", got)
			}
			if !strings.Contains(errs[0].Error(), tc.want) {
				t.Errorf("Validate: %q, want it to contain %q", errs[0].Error(), tc.want)
			}
			_, errs, _ = p.Validate(context.Background(), framework.ValidateRequest{Kind: framework.ValidateTrainJob, Info: info, NewJob: job})
			if len(errs) != 1 || errs[0].Field != "spec.runtimeRef" || !strings.Contains(errs[0].Error(), "the runtime's spec.template.metadata.annotations[trainforge.dev/checkpoint-volume]") || !strings.Contains(errs[0].Error(), tc.want) {
				t.Errorf("Validate of a TrainJob of it: %v, want one error on spec.runtimeRef naming the runtime's annotation", errs)
			}
			err = p.EnforceMLPolicy(context.Background(), info, job)
			if err == nil || !framework.IsInvalidJob(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("EnforceMLPolicy: %v, want an invalid-job error containing %q", err, tc.want)
			}
		})
	}
}

// TestATrainJobMayNameItsOwnCheckpointVolume: spec.annotations wins over
// the runtime's, and an error is then on the TrainJob's field.
func TestATrainJobMayNameItsOwnCheckpointVolume(t *testing.T) {
	_, job := frameworktest.Seed(t, frameworktest.SeedPlainML)
	job.Spec.Annotations = map[string]string{"trainforge.dev/checkpoint-volume": "scratch"}
	info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, checkpointing))
	_, errs, _ := configured(t).Validate(context.Background(), framework.ValidateRequest{Info: info, NewJob: job})
	if len(errs) != 1 || errs[0].Field != "spec.annotations[trainforge.dev/checkpoint-volume]" {
		t.Fatalf("Validate: %v, want one error on the TrainJob's annotation", errs)
	}

	rt := frameworktest.Runtime(t, strings.Replace(checkpointing, "trainforge.dev/checkpoint-volume: checkpoints", "team: ml", 1))
	rt.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Volumes[1] = corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{
		NFS: &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/llm"},
	}}
	rt.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/mnt/nfs"}}
	info = frameworktest.NewInfo(t, job, rt)
	p := configured(t)
	if _, errs, err := p.Validate(context.Background(), framework.ValidateRequest{Info: info, NewJob: job}); len(errs) != 0 || err != nil {
		t.Fatalf("Validate of an nfs volume: %v, %v", errs, err)
	}
	if err := p.EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"TRAINFORGE_CHECKPOINT_DIR": "/mnt/nfs", "TRAINFORGE_CHECKPOINT_GRACE_SECONDS": "120"},
		envOf(info.PodSet("node").Containers[0]), cmp.FilterPath(func(p cmp.Path) bool {
			return strings.HasPrefix(p.Last().String(), `["KUBEFLOW`)
		}, cmp.Ignore())); diff != "" {
		t.Errorf("variables (-want +got):\n%s", diff)
	}
}
