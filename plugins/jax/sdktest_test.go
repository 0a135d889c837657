package jax_test

import (
	"testing"

	"github.com/trainforge/trainforge/plugins/jax"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// cases are the TrainJobs of testdata on the jax-distributed runtime.
func cases(t *testing.T) []sdktest.Case {
	var out []sdktest.Case
	for _, name := range []string{"one-node", "four-nodes", "two-gpus-per-node", "user-env"} {
		out = append(out, jaxCase(t, name))
	}
	return out
}

// TestSDKProperties checks JAX's generic plugin properties over gRPC, as
// the host runs it.
func TestSDKProperties(t *testing.T) {
	sdktest.Check(t, jax.New(), cases(t)...)
}

// TestSDKGolden pins what JAX, served over gRPC, makes of each case:
// testdata/<case>.golden.yaml. After an intended change, rewrite them with
//
//	go test ./plugins/jax -run Golden -update
func TestSDKGolden(t *testing.T) {
	sdktest.Golden(t, jax.New(), "testdata", cases(t)...)
}
