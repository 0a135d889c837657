package trainjobstatus

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// The checkpoint contract (trainer.CheckpointVolumeAnnotation): a runtime
// that names, in the annotation trainforge.dev/checkpoint-volume of its
// JobSet template, a volume of its trainer step that outlives the pods
// gives every trainer container that mounts it read-write two more
// variables:
//
//   - TRAINFORGE_CHECKPOINT_DIR: the volume's mount path in that container;
//   - TRAINFORGE_CHECKPOINT_GRACE_SECONDS: the trainer pods'
//     terminationGracePeriodSeconds (30 when the template sets none), the
//     time between SIGTERM and SIGKILL in which to write a last checkpoint.
//
// The training code reports each checkpoint it completes through the same
// endpoint as its progress (statusserver), into status.lastCheckpoint.

var _ framework.Validator = (*plugin)(nil)

// Validate checks the checkpoint volume a runtime, or a TrainJob's
// spec.annotations, names: the error is on the annotation of whichever set
// it (on a TrainJob's spec.runtimeRef when its runtime did).
func (*plugin) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	if req.Info == nil {
		return nil, nil, nil
	}
	name, set := req.Info.Annotations[trainer.CheckpointVolumeAnnotation]
	if !set {
		return nil, nil, nil
	}
	_, msg := checkpointVolume(req.Info, name)
	if msg == "" {
		return nil, nil, nil
	}
	job := req.NewJob
	if job != nil && !req.IsRuntime() {
		if _, own := job.Spec.Annotations[trainer.CheckpointVolumeAnnotation]; own {
			return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "annotations").Key(trainer.CheckpointVolumeAnnotation), name, msg)}, nil
		}
		runtimePath := field.NewPath("spec", "template", "metadata", "annotations").Key(trainer.CheckpointVolumeAnnotation)
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "runtimeRef"), job.Spec.RuntimeRef.Name,
			fmt.Sprintf("the runtime's %s: Invalid value: %q: %s", runtimePath, name, msg))}, nil
	}
	return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "template", "metadata", "annotations").Key(trainer.CheckpointVolumeAnnotation), name, msg)}, nil
}

// enforceCheckpoint gives the trainer containers that mount the checkpoint
// volume its directory and the grace period; nothing without the
// annotation.
func enforceCheckpoint(info *framework.Info, ps *framework.PodSet) error {
	name, set := info.Annotations[trainer.CheckpointVolumeAnnotation]
	if !set {
		return nil
	}
	if _, msg := checkpointVolume(info, name); msg != "" {
		return &framework.InvalidJobError{Err: fmt.Errorf("annotation %s=%q: %s", trainer.CheckpointVolumeAnnotation, name, msg)}
	}
	grace, err := gracePeriod(info, ps.Name)
	if err != nil {
		return err
	}
	for i := range ps.Containers {
		c := &ps.Containers[i]
		if dir, ok := writableMount(c, name); ok {
			c.UpsertEnv(
				corev1.EnvVar{Name: trainer.CheckpointDirEnv, Value: dir},
				corev1.EnvVar{Name: trainer.CheckpointGraceSecondsEnv, Value: strconv.FormatInt(grace, 10)},
			)
		}
	}
	return nil
}

// checkpointVolume returns the trainer step's volume name, or why it
// cannot hold checkpoints.
func checkpointVolume(info *framework.Info, name string) (*corev1.Volume, string) {
	if name == "" {
		return nil, "must name a volume of the trainer step's pod template that outlives the pods (a persistentVolumeClaim or an nfs volume)"
	}
	ps := info.TrainerPodSet()
	if ps == nil {
		return nil, "the runtime has no trainer step to write checkpoints: label a replicatedJob " + trainer.AncestorStepLabel + "=" + trainer.TrainerStep
	}
	i := slices.IndexFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Name == name })
	if i < 0 {
		names := make([]string, 0, len(ps.Volumes))
		for _, v := range ps.Volumes {
			names = append(names, v.Name)
		}
		has := "it has none"
		if len(names) > 0 {
			has = "it has " + strings.Join(names, ", ")
		}
		return nil, fmt.Sprintf("the trainer step (replicatedJob %s) has no volume %q; %s", ps.Name, name, has)
	}
	v := &ps.Volumes[i]
	switch {
	case v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ReadOnly, v.NFS != nil && v.NFS.ReadOnly:
		return nil, fmt.Sprintf("volume %q is read-only; the trainer writes its checkpoints there", name)
	case v.PersistentVolumeClaim == nil && v.NFS == nil:
		return nil, fmt.Sprintf("volume %q is %s volume; checkpoints need a volume that outlives pods and restarts, wherever the new pods run: a persistentVolumeClaim or an nfs volume", name, sourceKind(v.VolumeSource))
	}
	for _, c := range ps.Containers {
		if _, ok := writableMount(&c, name); ok {
			return v, ""
		}
	}
	return nil, fmt.Sprintf("no container of the trainer step (replicatedJob %s) mounts volume %q read-write; mount it in the container that writes the checkpoints", ps.Name, name)
}

// writableMount returns where c mounts the volume read-write.
func writableMount(c *framework.Container, volume string) (string, bool) {
	for _, m := range c.VolumeMounts {
		if m.Name == volume && !m.ReadOnly {
			return m.MountPath, true
		}
	}
	return "", false
}

// gracePeriod is the terminationGracePeriodSeconds of a replicatedJob's
// pods, the API server's default when the template sets none.
func gracePeriod(info *framework.Info, replicatedJob string) (int64, error) {
	tmpl, err := info.TemplateSpec()
	if err != nil {
		return 0, err
	}
	for _, rj := range tmpl.Spec.ReplicatedJobs {
		if rj.Name == replicatedJob {
			if g := rj.Template.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
				return *g, nil
			}
		}
	}
	return corev1.DefaultTerminationGracePeriodSeconds, nil
}

// sourceKind names the kind of a volume source, "an emptyDir", as the pod
// spec spells it.
func sourceKind(src corev1.VolumeSource) string {
	v := reflect.ValueOf(src)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name := strings.Split(v.Type().Field(i).Tag.Get("json"), ",")[0]
			if strings.ContainsRune("aeiou", rune(name[0])) {
				return "an " + name
			}
			return "a " + name
		}
	}
	return "an unknown"
}
