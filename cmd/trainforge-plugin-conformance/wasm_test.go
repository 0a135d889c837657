package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"

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
			code, out, _ := conformance(t, append(tc.args, "--wasm-cache-dir", wasmtest.CacheDir(), "--", m.Path)...)
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

// TestWasmCacheDir: --wasm-cache-dir becomes the wasm entry's
// pluginHost.wasmCacheDir, made absolute as the configuration requires.
func TestWasmCacheDir(t *testing.T) {
	module := filepath.Join(t.TempDir(), "plugin.wasm")
	if err := os.WriteFile(module, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	o, err := parseFlags([]string{"--wasm-cache-dir", "cache", "--", module}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := wasmOptions(o, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Join(wd, "cache"); opts.CacheDir != want {
		t.Errorf("the wasm entry's cache directory is %q, want %q", opts.CacheDir, want)
	}
}
