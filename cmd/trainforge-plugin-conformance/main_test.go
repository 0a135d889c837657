package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trainforge/trainforge/test/testenv"
)

// pluginBinaries are the plugin binaries these tests check, built once
// (or by make test-bin).
var pluginBinaries = testenv.NewBinaries(
	"cmd/trainforge-builtin-plugin",
	"cmd/trainforge-plugin-jax",
	"cmd/trainforge-plugin-mpi",
	"cmd/trainforge-plugin-xgboost",
	"test/plugins/broken",
	"test/plugins/faulty",
)

// bin returns the path of the plugin binary named name.
func bin(t *testing.T, name string) string {
	t.Helper()
	dir, err := pluginBinaries.Dir()
	if err != nil {
		t.Fatalf("building the plugins: %v", err)
	}
	return filepath.Join(dir, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	pluginBinaries.Cleanup()
	os.Exit(code)
}

// conformance runs the command in process and returns its exit status and
// output.
func conformance(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	t.Logf("trainforge-plugin-conformance %s\nexit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	return code, stdout.String(), stderr.String()
}

func requireLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, want := range lines {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q", want)
		}
	}
}

func TestBuiltinPluginsPass(t *testing.T) {
	for _, name := range []string{"PlainML", "Torch", "JobSet", "Coscheduling"} {
		t.Run(name, func(t *testing.T) {
			code, out, _ := conformance(t, "--", bin(t, "trainforge-builtin-plugin"), name)
			if code != 0 {
				t.Fatalf("exit %d, want 0: every built-in has every property", code)
			}
			requireLines(t, out, "plugin "+name+" v", ", 0 failed,", "PASS Describe\n")
		})
	}
}

func TestVendorPluginsPass(t *testing.T) {
	for _, tc := range []struct{ binary, name string }{
		{"trainforge-plugin-jax", "JAX"},
		{"trainforge-plugin-xgboost", "XGBoost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, _ := conformance(t, "--", bin(t, tc.binary))
			if code != 0 {
				t.Fatalf("exit %d, want 0", code)
			}
			requireLines(t, out, "plugin "+tc.name+" v", ", 0 failed,", "PASS Enforce/idempotent (case mlpolicy-"+strings.ToLower(tc.name)+"-4-nodes-2-gpus)\n")
		})
	}
}

// TestMPIWithItsCases: MPI needs a launcher and a "node" worker
// replicatedJob, which the default cases lack, so it is checked on the
// Kubeflow-shaped runtimes of its testdata; on the default cases its
// Enforce fails, saying what the runtime lacks.
func TestMPIWithItsCases(t *testing.T) {
	mpi := bin(t, "trainforge-plugin-mpi")
	var args []string
	for _, f := range []string{"deepspeed-distributed", "mlx-distributed", "mpi-launcher"} {
		args = append(args, "--case", filepath.Join("..", "..", "plugins", "mpi", "testdata", f+".yaml"))
	}
	code, out, _ := conformance(t, append(args, "--", mpi)...)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	requireLines(t, out, "cases: deepspeed-distributed, mlx-distributed, mpi-launcher\n", "PASS Build/deterministic (case deepspeed-distributed)\n", ", 0 failed,")

	code, out, _ = conformance(t, "--", mpi)
	if code != 1 {
		t.Fatalf("exit %d on the default cases, want 1", code)
	}
	requireLines(t, out, "FAIL Enforce/applies (case mlpolicy-mpi): EnforceMLPolicy failed:")
}

func TestCasesFromFiles(t *testing.T) {
	seed := filepath.Join("..", "..", "framework", "frameworktest", "testdata", "seed-torch.yaml")
	code, out, _ := conformance(t, "--case", seed, "--", bin(t, "trainforge-builtin-plugin"), "Torch")
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	requireLines(t, out, "cases: seed-torch\n", "PASS Enforce/idempotent (case seed-torch)\n", "PASS Validate (case seed-torch)\n")
	if strings.Contains(out, "made from what the plugin owns") {
		t.Error("the default cases were used although --case was given")
	}
}

// TestBrokenPluginFails shows what the tool says about a plugin that lacks
// properties: one FAIL line for each, with the reason.
func TestBrokenPluginFails(t *testing.T) {
	code, out, _ := conformance(t, "--", bin(t, "broken"))
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	requireLines(t, out,
		"PASS Describe\n",
		"PASS Enforce/applies (case mlpolicy-broken)\n",
		"FAIL Enforce/idempotent (case mlpolicy-broken): enforcing the resulting Info again changed it (-once +twice)",
		"- name: STEP", // the diff (go-cmp varies its spacing on purpose)
		`FAIL Build/objects (case mlpolicy-broken): object 1 (Secret "conformance") is of kind v1/Secret, which the plugin does not declare in Description.Builds [v1/ConfigMap]`,
		"FAIL Build/deterministic (case mlpolicy-broken): two Build on the same input gave different objects (-first +second)",
		"FAIL Validate (case mlpolicy-broken): field error 0 (something is wrong somewhere) names no field",
		`FAIL Status (case mlpolicy-broken): with no owned objects, condition Complete has reason "all done", which the API server refuses`,
		"9 passed, 10 failed, 1 skipped\n",
	)
}

// TestHostChecks: what the host refuses fails the property, with the
// host's reason.
func TestHostChecks(t *testing.T) {
	code, out, _ := conformance(t, "--", bin(t, "faulty"), "--name=Outside", `--patch=[{"op":"add","path":"/trainJob","value":{}}]`)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	requireLines(t, out, `FAIL Enforce/applies (case mlpolicy-faulty): EnforceMLPolicy failed: patch operation 0 (add "/trainJob") is outside Info`)
}

func TestPluginThatDoesNotStart(t *testing.T) {
	code, out, _ := conformance(t, "--start-timeout=5s", "--", bin(t, "faulty"), "--not-a-plugin")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	requireLines(t, out, "FAIL start: the plugin did not start: starting ", "This usually means that the binary is not a Trainforge plugin")

	code, out, _ = conformance(t, "--args", `{"port": 1}`, "--", bin(t, "trainforge-builtin-plugin"), "Torch")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	requireLines(t, out, `FAIL start: plugin "Torch" rejected its args: the plugin takes no args`)
}

func TestUsageErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no command":    {nil, "no plugin command: give it after --"},
		"args not JSON": {[]string{"--args", "port=1", "--", "plugin"}, "--args port=1 is not JSON"},
		"missing case":  {[]string{"--case", "nope.yaml", "--", "plugin"}, "--case nope.yaml: open nope.yaml: no such file or directory"},
		"unknown flag":  {[]string{"--cases", "x", "--", "plugin"}, "flag provided but not defined: -cases"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := conformance(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr does not say %q", tc.want)
			}
		})
	}
}
