package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// cases are the plugin's inputs: a PyTorch job, and a runtime that mounts
// its own /dev/shm. The plugin runs with a 16Gi limit.
func cases(t *testing.T) []sdktest.Case {
	pytorch := sdktest.CaseFromFiles(t, "pytorch", "testdata/pytorch.yaml", "testdata/pytorch.yaml")
	pytorch.Args = json.RawMessage(`{"sizeLimit": "16Gi"}`)
	own := sdktest.CaseFromFiles(t, "own-shm", "testdata/own-shm.yaml", "testdata/own-shm.yaml")
	return []sdktest.Case{pytorch, own}
}

// TestProperties checks what every plugin must satisfy, over gRPC as the
// controller calls it.
func TestProperties(t *testing.T) {
	sdktest.Check(t, &sharedMemory{}, cases(t)...)
}

// TestGolden pins what the plugin makes of each case:
// testdata/<case>.golden.yaml. After an intended change:
//
//	go test ./examples/plugins/sharedmemory -run TestGolden -update
func TestGolden(t *testing.T) {
	sdktest.Golden(t, &sharedMemory{}, "testdata", cases(t)...)
}

func TestMountsSharedMemory(t *testing.T) {
	c := cases(t)[0]
	info, err := framework.NewInfo(c.Job, c.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	client := sdktest.Connect(t, &sharedMemory{})
	if err := client.Configure(context.Background(), c.Args); err != nil {
		t.Fatal(err)
	}
	if err := client.EnforceMLPolicy(context.Background(), info, c.Job); err != nil {
		t.Fatal(err)
	}
	ps, ctr, err := info.Trainer()
	if err != nil {
		t.Fatal(err)
	}
	limit := resource.MustParse("16Gi")
	wantVolume := corev1.Volume{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}}
	if diff := cmp.Diff([]corev1.Volume{wantVolume}, ps.Volumes); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.VolumeMount{{Name: "dshm", MountPath: "/dev/shm"}}, ctr.VolumeMounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
}

func TestConfigureRejectsBadArgs(t *testing.T) {
	for args, want := range map[string]string{
		`{"sizeLimit": "lots"}`:  `args: Invalid value: "{\"sizeLimit\": \"lots\"}": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'; the args are {"sizeLimit": "16Gi"}`,
		`{"sizeLimit": "0"}`:     `args.sizeLimit: Invalid value: "0": must be a positive quantity such as 16Gi`,
		`{"size": "16Gi"}`:       `args: Invalid value: "{\"size\": \"16Gi\"}": json: unknown field "size"; the args are {"sizeLimit": "16Gi"}`,
		`{"sizeLimit": "512Mi"}`: "",
		``:                       "",
	} {
		err := (&sharedMemory{}).Configure(context.Background(), json.RawMessage(args))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("Configure(%s) = %q, want %q", args, got, want)
		}
	}
}
