package mpi_test

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/trainforge/trainforge/plugins/mpi"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// cases are the runtimes of testdata, shaped like Kubeflow Trainer's
// deepspeed-distributed and mlx-distributed (the launcher is a node) and
// one whose launcher only runs mpirun, each with a TrainJob in the same
// file and with every implementation. The files, as they are, are cases
// of trainforge-plugin-conformance too (-case).
func cases(t *testing.T) []sdktest.Case {
	var out []sdktest.Case
	for _, c := range []struct{ name, file string }{
		{"deepspeed", "deepspeed-distributed.yaml"},
		{"mlx", "mlx-distributed.yaml"},
		{"launcher", "mpi-launcher.yaml"},
	} {
		for _, impl := range mpi.Implementations {
			tc := sdktest.CaseFromFiles(t, c.name+"-"+impl, "testdata/"+c.file, "testdata/"+c.file)
			tc.Runtime.MLPolicy.MPI.MPIImplementation = ptr.To(impl)
			out = append(out, tc)
		}
	}
	return out
}

// TestSDKProperties checks, over gRPC as the host calls an external
// plugin, the properties every plugin must have.
func TestSDKProperties(t *testing.T) {
	sdktest.Check(t, mpi.New(), cases(t)...)
}

// TestGolden pins what the plugin makes of each case:
// testdata/<case>.golden.yaml, where the SSH key's values show as masked
// (they differ on every Build). After an intended change, rewrite them with
//
//	go test ./plugins/mpi -run Golden -update
func TestGolden(t *testing.T) {
	sdktest.Golden(t, mpi.New(), "testdata", cases(t)...)
}
