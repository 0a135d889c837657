package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
)

// TestWasmModulesPass checks vendor plugins built as WebAssembly: the tool
// runs a .wasm file through the controller's wasm host as it runs a
// binary, and the module has every property its binary has.
func TestWasmModulesPass(t *testing.T) {
	defer wasmtest.Cleanup()
	var mpiCases []string
	for _, f := range []string{"deepspeed-distributed", "mlx-distributed", "mpi-launcher"} {
		mpiCases = append(mpiCases, "--case", filepath.Join("..", "..", "plugins", "mpi", "testdata", f+".yaml"))
	}
	for _, tc := range []struct {
		pkg, name string
		args      []string
		want      string
	}{
		{"github.com/trainforge/trainforge/cmd/trainforge-plugin-jax", "JAX", nil, "PASS Enforce/idempotent (case mlpolicy-jax-4-nodes-2-gpus)\n"},
		{"github.com/trainforge/trainforge/cmd/trainforge-plugin-mpi", "MPI", mpiCases, "PASS Build/deterministic (case deepspeed-distributed)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := wasmtest.Build(t, tc.pkg)
			code, out, _ := conformance(t, append(tc.args, "--", m.Path)...)
			if code != 0 {
				t.Fatalf("exit %d, want 0", code)
			}
			requireLines(t, out, "plugin "+tc.name+" v", ", 0 failed,", tc.want)
		})
	}
}

// TestWasmNotAModule: a .wasm file that is not a module is refused at the
// start, naming the file.
func TestWasmNotAModule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plugin.wasm")
	if err := os.WriteFile(path, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := conformance(t, "--", path)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	requireLines(t, out, "FAIL start: ", path, "is not a WebAssembly module")
}
