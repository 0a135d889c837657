package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainforge/trainforge/builtin"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
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
