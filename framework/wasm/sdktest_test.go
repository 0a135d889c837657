package wasm

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// TestVendorPluginAsWasm runs the JAX plugin built as WebAssembly through
// sdktest, as its own tests run it in process: it has every property, and
// makes of each case exactly what its golden files (written from the
// plugin in process) hold.
func TestVendorPluginAsWasm(t *testing.T) {
	m := wasmtest.Build(t, "github.com/trainforge/trainforge/cmd/trainforge-plugin-jax")
	opts, _ := options(m, "JAX")
	p := start(t, opts)

	dir := filepath.Join("..", "..", "plugins", "jax", "testdata")
	var cases []sdktest.Case
	for _, name := range []string{"one-node", "four-nodes", "two-gpus-per-node", "user-env"} {
		cases = append(cases, sdktest.CaseFromFiles(t, name, filepath.Join(dir, "jax-distributed.yaml"), filepath.Join(dir, name+".yaml")))
	}
	for _, r := range sdktest.Run(context.Background(), p.RPC(), cases...) {
		if r.Skipped == "" && !r.Passed() {
			t.Errorf("%s", r)
		}
	}
	sdktest.GoldenRPC(t, p.RPC(), dir, cases...)
}
