package v1alpha1

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// fuzzSeedConfigs are real configuration files: the reference example of
// docs/configuration.md and the shapes the tests use.
var fuzzSeedConfigs = []string{
	"",
	"apiVersion: config.trainforge.dev/v1alpha1\nkind: Configuration\n",
	`apiVersion: config.trainforge.dev/v1alpha1
kind: Configuration
plugins:
- name: PlainML
- name: Torch
- name: JobSet
- name: Coscheduling
  args:
    scheduleTimeoutSeconds: 300
    schedulerName: scheduler-plugins-scheduler
- name: MPI
  failurePolicy: Ignore
  external:
    command: /plugins/trainforge-plugin-mpi
    args: ["--log-level=info"]
    sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
    startTimeout: 10s
    callTimeout: 2s
pluginHost:
  socketDir: /var/run/trainforge-plugins
  restartBackoff:
    initial: 1s
    max: 1m
  goMaxProcs: 1
metrics:
  bindAddress: ":8080"
health:
  healthProbeBindAddress: ":8081"
leaderElection:
  leaderElect: true
  resourceNamespace: trainforge-system
  resourceName: trainforge-controller.trainforge.dev
webhook:
  port: 9443
  certDir: /tmp/k8s-webhook-server/serving-certs
  certManagement:
    namespace: trainforge-system
    extraDNSNames: [localhost]
clientConnection:
  qps: 500
  burst: 1000
controller:
  workers: 16
`,
	"plugins:\n- name: Torch\n  failurPolicy: Fail\n",
	"plugins:\n- name: Torch\n- name: Torch\n",
	"plugins:\n- name: Widget\n  external:\n    command: w\n    startTimeout: soon\n",
	"pluginHost:\n  restartBackoff:\n    initial: 10s\n    max: 1s\n",
	"clientConnection:\n  qps: -1\n  burst: 0\n",
	`{"plugins":[{"name":"PlainML","args":null}],"webhook":{"port":0}}`,
	"plugins: [{name: A, name: B}]\n",
}

// FuzzDecode feeds arbitrary bytes to the configuration decoder, defaulting
// and validation, the path of --config. It must never panic, every error
// of validation must name a field, and a configuration it accepts must
// encode and decode back to itself, still valid.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeedConfigs {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Decode(data)
		if err != nil {
			if cfg != nil {
				t.Fatalf("Decode returned a configuration with its error %v", err)
			}
			return
		}
		SetDefaults(cfg)
		errs := Validate(cfg, builtins)
		for _, e := range errs {
			if e.Field == "" {
				t.Errorf("a validation error names no field: %v", e)
			}
		}
		if len(errs) > 0 {
			return
		}
		// Defaulting twice changes nothing.
		again := cfg.DeepCopy()
		SetDefaults(again)
		if diff := cmp.Diff(cfg, again); diff != "" {
			t.Fatalf("SetDefaults is not idempotent (-once +twice):\n%s", diff)
		}
		encoded, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("an accepted configuration does not encode: %v", err)
		}
		back, err := Decode(encoded)
		if err != nil {
			t.Fatalf("an accepted configuration, encoded as\n%s\ndoes not decode: %v", encoded, err)
		}
		SetDefaults(back)
		if diff := cmp.Diff(cfg, back, cmp.Comparer(sameJSON)); diff != "" {
			t.Fatalf("an accepted configuration changed through encode and decode (-before +after):\n%s\nencoded: %s", diff, encoded)
		}
		if errs := Validate(back, builtins); len(errs) > 0 {
			t.Fatalf("an accepted configuration is invalid after encode and decode: %v", errs.ToAggregate())
		}
	})
}

// sameJSON compares plugin args as JSON values: encoding may compact them.
func sameJSON(a, b apiextensionsv1.JSON) bool {
	var x, y any
	if json.Unmarshal(a.Raw, &x) != nil || json.Unmarshal(b.Raw, &y) != nil {
		return string(a.Raw) == string(b.Raw)
	}
	return cmp.Equal(x, y)
}
