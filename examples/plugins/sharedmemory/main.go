// Command sharedmemory is the SharedMemory plugin of Trainforge, the
// example of docs/writing-a-plugin.md: it gives the trainer pods of every
// TrainJob a memory-backed /dev/shm.
//
// A container's /dev/shm is 64 MiB by default, and PyTorch's DataLoader
// workers pass batches through it: a job with several workers fails with
// "bus error" or "No space left on device" unless the pod mounts a larger
// one. This plugin mounts an emptyDir with medium Memory at /dev/shm in the
// trainer container, sized by its args, in its entry of the controller's
// configuration file:
//
//	plugins:
//	- name: SharedMemory
//	  args:
//	    sizeLimit: 16Gi     # optional; without it the volume is bounded only by the pod's memory limit
//	  external:
//	    command: /plugins/sharedmemory
//
// It owns no policy key, so it takes part in every TrainJob. A runtime
// whose trainer container already mounts something at /dev/shm keeps its
// own mount.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/sdk"
)

const (
	// Name is the plugin's name in the configuration file.
	Name = "SharedMemory"
	// VolumeName is the name of the volume it adds to the trainer pods.
	VolumeName = "dshm"
	// MountPath is where the volume is mounted.
	MountPath = "/dev/shm"
)

// Args are the plugin's args in the configuration file.
type Args struct {
	// SizeLimit bounds the volume, for example "16Gi".
	SizeLimit *resource.Quantity `json:"sizeLimit,omitempty"`
}

type sharedMemory struct {
	args Args
}

// Describe says who the plugin is. It owns no policy key: it takes part in
// every TrainJob.
func (*sharedMemory) Describe() framework.Description {
	return framework.Description{Name: Name, Version: "v0.1.0"}
}

// Configure takes the args; a bad one fails the controller's start-up with
// this message.
func (p *sharedMemory) Configure(_ context.Context, raw json.RawMessage) error {
	var args Args
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&args); err != nil {
			return field.Invalid(field.NewPath("args"), string(raw), fmt.Sprintf("%v; the args are {\"sizeLimit\": \"16Gi\"}", err))
		}
	}
	if args.SizeLimit != nil && args.SizeLimit.Sign() <= 0 {
		return field.Invalid(field.NewPath("args", "sizeLimit"), args.SizeLimit.String(), "must be a positive quantity such as 16Gi")
	}
	p.args = args
	return nil
}

// EnforceMLPolicy mounts the memory-backed volume at /dev/shm in the
// trainer container.
func (p *sharedMemory) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	ps, c, err := info.Trainer()
	if err != nil {
		return err
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == MountPath {
			return nil // the runtime's own /dev/shm wins
		}
	}
	ps.UpsertVolume(corev1.Volume{Name: VolumeName, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: p.args.SizeLimit},
	}})
	c.UpsertVolumeMount(corev1.VolumeMount{Name: VolumeName, MountPath: MountPath})
	return nil
}

func main() {
	sdk.Serve(&sharedMemory{})
}
