package flux_test

import (
	"testing"

	"github.com/trainforge/trainforge/plugins/flux"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// cases are the runtimes of testdata, each with its TrainJob in the same
// file: Kubeflow Trainer's flux-distributed with its LAMMPS TrainJob, and
// one with GPUs, settings on the runtime and a subdomain of its own. The
// files, as they are, are cases of trainforge-plugin-conformance too
// (-case).
func cases(t *testing.T) []sdktest.Case {
	var out []sdktest.Case
	for _, name := range []string{"flux-distributed", "flux-gpus"} {
		file := "testdata/" + name + ".yaml"
		out = append(out, sdktest.CaseFromFiles(t, name, file, file))
	}
	return out
}

// TestSDKProperties checks, over gRPC as the host calls an external
// plugin, the properties every plugin must have.
func TestSDKProperties(t *testing.T) {
	sdktest.Check(t, flux.New(), cases(t)...)
}

// TestGolden pins what the plugin makes of each case:
// testdata/<case>.golden.yaml. After an intended change, rewrite them with
//
//	go test ./plugins/flux -run Golden -update
func TestGolden(t *testing.T) {
	sdktest.Golden(t, flux.New(), "testdata", cases(t)...)
}
