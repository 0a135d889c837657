package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/test/testenv"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// testBinaries holds the misbehaving test plugin, built once (or by make
// test-bin).
var testBinaries = testenv.NewBinaries("test/plugins/faulty")

// faultyPlugin returns the path of the misbehaving test plugin.
func faultyPlugin(t *testing.T) string {
	t.Helper()
	path, err := testBinaries.Path("test/plugins/faulty")
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMain(m *testing.M) {
	code := m.Run()
	testBinaries.Cleanup()
	os.Exit(code)
}

func TestStartupErrorsNameTheProblem(t *testing.T) {
	const header = "apiVersion: config.trainforge.dev/v1alpha1\nkind: Configuration\n"
	for name, tc := range map[string]struct {
		config string
		want   []string
	}{
		"unknown field": {
			config: header + "plugins:\n- name: Torch\n  failurPolicy: Fail\n",
			want:   []string{`unknown field "plugins[0].failurPolicy"`},
		},
		"unknown plugin": {
			config: header + "plugins:\n- name: PlainML\n- name: Horovod\n",
			want:   []string{"plugins[1].name", "Horovod", "no built-in plugin has this name"},
		},
		"duplicate plugin": {
			config: header + "plugins:\n- name: Torch\n- name: Torch\n",
			want:   []string{"plugins[1].name", "Duplicate value", "Torch"},
		},
		"external plugin without a command": {
			config: header + "plugins:\n- name: PlainML\n- name: MPI\n  external:\n    args: [--verbose]\n",
			want:   []string{"plugins[1].external.command", "Required value"},
		},
		"external plugin whose Describe name differs": {
			config: header + "plugins:\n- name: PlainML\n- name: MPI\n  external:\n    command: " + faultyPlugin(t) + "\n    args: [--describe-name=Horovod]\n",
			want:   []string{"plugins[1] (MPI)", `plugin "MPI" describes itself as "Horovod"`},
		},
		"external plugin rejecting its args": {
			config: header + "plugins:\n- name: PlainML\n- name: MPI\n  args: {colour: red}\n  external:\n    command: " + faultyPlugin(t) + "\n    args: [--name=MPI]\n",
			want:   []string{"plugins[1] (MPI)", "MPI", `unknown arg "colour"`},
		},
		// A built-in's name with external runs the binary, not the built-in:
		// the built-in Torch would never describe itself as Horovod.
		"external entry named like a built-in": {
			config: header + "plugins:\n- name: PlainML\n- name: Torch\n  external:\n    command: " + faultyPlugin(t) + "\n    args: [--describe-name=Horovod]\n",
			want:   []string{"plugins[1] (Torch)", `plugin "Torch" describes itself as "Horovod"`},
		},
		"bad plugin args": {
			config: header + "plugins:\n- name: PlainML\n- name: JobSet\n- name: Coscheduling\n  args:\n    scheduleTimeout: 5\n",
			want:   []string{"plugin Coscheduling", "Configure", `unknown field "scheduleTimeout"`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := run([]string{"--config", writeConfig(t, tc.config), "--kubeconfig", "/nonexistent"}, io.Discard)
			if err == nil {
				t.Fatal("run succeeded, want a start-up error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestFlagsOverrideTheConfigFile(t *testing.T) {
	path := writeConfig(t, `apiVersion: config.trainforge.dev/v1alpha1
kind: Configuration
metrics:
  bindAddress: ":9000"
health:
  healthProbeBindAddress: ":9001"
`)
	o, err := parseFlags([]string{"--config", path, "--metrics-bind-address", "0", "--enable-webhooks=false"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.enableWebhooks {
		t.Error("--enable-webhooks=false was not honoured")
	}
	cfg, err := loadConfig(o, builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cfg.Metrics.BindAddress, cfg.Health.HealthProbeBindAddress}
	if diff := cmp.Diff([]string{"0", ":9001"}, got); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
}

func TestRejectsStrayArguments(t *testing.T) {
	if _, err := parseFlags([]string{"controller"}, io.Discard); err == nil {
		t.Error("a stray argument was accepted")
	}
}
