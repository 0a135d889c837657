package v1alpha1

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// registered is the knownPlugin function of the tests.
func registered(names ...string) func(string) bool {
	return func(n string) bool {
		for _, m := range names {
			if m == n {
				return true
			}
		}
		return false
	}
}

var builtins = registered("PlainML", "Torch", "JobSet", "Coscheduling", "TrainJobStatus", "MPI")

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func pluginNames(cfg *Configuration) []string {
	var out []string
	for _, p := range cfg.Plugins {
		out = append(out, p.Name)
	}
	return out
}

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// realSHA is a valid hex SHA-256 (of the empty input).
const realSHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// defaulted is the configuration Load returns without a file.
func defaulted() *Configuration {
	return &Configuration{
		TypeMeta: metav1.TypeMeta{APIVersion: "config.trainforge.dev/v1alpha1", Kind: "Configuration"},
		Plugins: []PluginConfig{
			{Name: "PlainML", FailurePolicy: FailurePolicyFail},
			{Name: "Torch", FailurePolicy: FailurePolicyFail},
			{Name: "JobSet", FailurePolicy: FailurePolicyFail},
			{Name: "Coscheduling", FailurePolicy: FailurePolicyFail},
			// No args: plugins learn the status endpoint from the host's
			// facts (TestLoadLeavesPluginArgsAlone).
			{Name: "TrainJobStatus", FailurePolicy: FailurePolicyFail},
		},
		PluginHost: PluginHostConfig{
			RestartBackoff: RestartBackoff{Initial: dur(time.Second), Max: dur(time.Minute)}, GoMaxProcs: ptr.To(DefaultPluginGoMaxProcs),
			WasmMemoryBudget: ptr.To(resource.MustParse("256Mi")),
			Limits: PluginLimits{
				MaxMessageBytes: ptr.To[int32](4194304), MaxObjects: ptr.To[int32](1000),
				MaxObjectBytes: ptr.To[int32](1572864), MaxPatchOperations: ptr.To[int32](10000), MaxDepth: ptr.To[int32](100),
			},
		},
		Metrics:        MetricsConfig{BindAddress: ":8080"},
		Health:         HealthConfig{HealthProbeBindAddress: ":8081"},
		LeaderElection: LeaderElectionConfig{LeaderElect: ptr.To(false), ResourceName: "trainforge-controller.trainforge.dev"},
		Webhook:        WebhookConfig{Port: ptr.To(9443)},
		ClientConnection: ClientConnectionConfig{
			QPS: ptr.To(DefaultQPS), Burst: ptr.To(DefaultBurst),
		},
		Controller:   ControllerConfig{Workers: ptr.To(DefaultWorkers)},
		StatusServer: defaultStatusServer(),
	}
}

func defaultStatusServer() StatusServerConfig {
	return StatusServerConfig{
		Enable: ptr.To(true), Port: ptr.To[int32](10443),
		ServiceName: "trainforge-webhook-service", ServiceNamespace: "trainforge-system",
		CAConfigMapName: "trainforge-status-ca", MinUpdateInterval: dur(time.Second),
		TokenExpirationSeconds: ptr.To[int64](3600), MaxMetricsPerTrainJob: ptr.To[int32](16),
	}
}

func TestLoadWithoutFileGivesDefaults(t *testing.T) {
	cfg, err := Load("", builtins)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff(defaulted(), cfg); diff != "" {
		t.Errorf("Load(\"\") (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PlainML", "Torch", "JobSet", "Coscheduling", "TrainJobStatus"}, DefaultPlugins); diff != "" {
		t.Errorf("DefaultPlugins (-want +got):\n%s", diff)
	}
	// Defaulting must not alias the package-level list.
	cfg.Plugins[0].Name = "Changed"
	if DefaultPlugins[0] != "PlainML" {
		t.Errorf("changing the loaded config changed DefaultPlugins: %v", DefaultPlugins)
	}
}

func TestLoad(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		want    func() *Configuration
		wantErr []string // substrings of the error, all required
	}{
		{
			name: "empty file gives defaults",
			file: "",
			want: defaulted,
		},
		{
			name: "type meta only gives defaults",
			file: "apiVersion: config.trainforge.dev/v1alpha1\nkind: Configuration\n",
			want: defaulted,
		},
		{
			name: "plugins listed keep their order and args stay raw",
			file: `
apiVersion: config.trainforge.dev/v1alpha1
kind: Configuration
plugins:
- name: Torch
- name: Coscheduling
  args:
    scheduleTimeoutSeconds: 60
    schedulerName: scheduler-plugins-scheduler
- name: JobSet
- name: PlainML
metrics:
  bindAddress: ":9090"
health:
  healthProbeBindAddress: ":9091"
leaderElection:
  leaderElect: true
  resourceNamespace: trainforge-system
webhook:
  port: 10250
  certDir: /certs
`,
			want: func() *Configuration {
				c := defaulted()
				c.Plugins = []PluginConfig{
					{Name: "Torch", FailurePolicy: FailurePolicyFail},
					{Name: "Coscheduling", FailurePolicy: FailurePolicyFail, Args: &apiextensionsv1.JSON{Raw: []byte(`{"scheduleTimeoutSeconds":60,"schedulerName":"scheduler-plugins-scheduler"}`)}},
					{Name: "JobSet", FailurePolicy: FailurePolicyFail},
					{Name: "PlainML", FailurePolicy: FailurePolicyFail},
				}
				c.Metrics.BindAddress = ":9090"
				c.Health.HealthProbeBindAddress = ":9091"
				c.LeaderElection = LeaderElectionConfig{LeaderElect: ptr.To(true), ResourceNamespace: "trainforge-system", ResourceName: "trainforge-controller.trainforge.dev"}
				c.Webhook = WebhookConfig{Port: ptr.To(10250), CertDir: "/certs"}
				return c
			},
		},
		{
			name: "apiVersion and kind are defaulted",
			file: "plugins:\n- name: PlainML\n",
			want: func() *Configuration {
				c := defaulted()
				c.Plugins = []PluginConfig{{Name: "PlainML", FailurePolicy: FailurePolicyFail}}
				return c
			},
		},
		{
			name: "external plugin gets its defaults and a lower-case sha256",
			file: "plugins:\n- name: Widget\n  external:\n    command: trainforge-plugin-widget\n    sha256: " + strings.ToUpper(realSHA) + "\n",
			want: func() *Configuration {
				c := defaulted()
				c.Plugins = []PluginConfig{{
					Name:          "Widget",
					FailurePolicy: FailurePolicyFail,
					External: &ExternalPlugin{
						Command:      "trainforge-plugin-widget",
						SHA256:       realSHA,
						StartTimeout: dur(10 * time.Second),
						CallTimeout:  dur(2 * time.Second),
					},
				}}
				return c
			},
		},
		{
			name: "wasm plugin gets its defaults and a lower-case sha256",
			file: "plugins:\n- name: Widget\n  wasm:\n    module: /etc/trainforge/plugins/widget.wasm\n    sha256: " + strings.ToUpper(realSHA) + "\n",
			want: func() *Configuration {
				c := defaulted()
				c.Plugins = []PluginConfig{{
					Name:          "Widget",
					FailurePolicy: FailurePolicyFail,
					Wasm: &WasmPlugin{
						Module:       "/etc/trainforge/plugins/widget.wasm",
						SHA256:       realSHA,
						StartTimeout: dur(10 * time.Second),
						CallTimeout:  dur(2 * time.Second),
						MemoryLimit:  ptr.To(resource.MustParse("128Mi")),
						MaxInstances: ptr.To(int32(4)),
					},
				}}
				return c
			},
		},
		{
			name: "wasm settings are kept",
			file: "plugins:\n- name: Widget\n  failurePolicy: Ignore\n  wasm:\n    module: /w.wasm\n    sha256: " + realSHA + "\n    args: [--verbose]\n    callTimeout: 500ms\n    startTimeout: 3s\n    memoryLimit: 64Mi\n    maxInstances: 2\n",
			want: func() *Configuration {
				c := defaulted()
				c.Plugins = []PluginConfig{{
					Name:          "Widget",
					FailurePolicy: FailurePolicyIgnore,
					Wasm: &WasmPlugin{
						Module:       "/w.wasm",
						SHA256:       realSHA,
						Args:         []string{"--verbose"},
						StartTimeout: dur(3 * time.Second),
						CallTimeout:  dur(500 * time.Millisecond),
						MemoryLimit:  ptr.To(resource.MustParse("64Mi")),
						MaxInstances: ptr.To(int32(2)),
					},
				}}
				return c
			},
		},
		{
			name: "external settings, Ignore and pluginHost are kept",
			file: `
plugins:
- name: Widget
  failurePolicy: Ignore
  args: {level: 3}
  external:
    command: /plugins/widget
    args: ["--log-level=debug", "-v"]
    startTimeout: 1m30s
    callTimeout: 500ms
pluginHost:
  socketDir: /var/run/trainforge-plugins
  restartBackoff:
    initial: 250ms
    max: 30s
  wasmMemoryBudget: 1Gi
`,
			want: func() *Configuration {
				c := defaulted()
				c.Plugins = []PluginConfig{{
					Name:          "Widget",
					FailurePolicy: FailurePolicyIgnore,
					Args:          &apiextensionsv1.JSON{Raw: []byte(`{"level":3}`)},
					External: &ExternalPlugin{
						Command:      "/plugins/widget",
						Args:         []string{"--log-level=debug", "-v"},
						StartTimeout: dur(90 * time.Second),
						CallTimeout:  dur(500 * time.Millisecond),
					},
				}}
				c.PluginHost = PluginHostConfig{
					SocketDir:        "/var/run/trainforge-plugins",
					RestartBackoff:   RestartBackoff{Initial: dur(250 * time.Millisecond), Max: dur(30 * time.Second)},
					GoMaxProcs:       ptr.To(DefaultPluginGoMaxProcs),
					WasmMemoryBudget: ptr.To(resource.MustParse("1Gi")),
					Limits:           defaultLimits(),
				}
				return c
			},
		},
		{
			name: "only one backoff bound set",
			file: "pluginHost:\n  restartBackoff:\n    max: 5m\n",
			want: func() *Configuration {
				c := defaulted()
				c.PluginHost.RestartBackoff = RestartBackoff{Initial: dur(time.Second), Max: dur(5 * time.Minute)}
				return c
			},
		},
		{
			name: "a built-in run out of process keeps its name",
			file: "plugins:\n- name: PlainML\n- name: Torch\n  external:\n    command: /usr/local/bin/trainforge-builtin-plugin\n    args: [Torch]\n",
			want: func() *Configuration {
				c := defaulted()
				c.Plugins = []PluginConfig{
					{Name: "PlainML", FailurePolicy: FailurePolicyFail},
					{Name: "Torch", FailurePolicy: FailurePolicyFail, External: &ExternalPlugin{
						Command:      "/usr/local/bin/trainforge-builtin-plugin",
						Args:         []string{"Torch"},
						StartTimeout: dur(10 * time.Second),
						CallTimeout:  dur(2 * time.Second),
					}},
				}
				return c
			},
		},
		{
			name:    "unknown field in external",
			file:    "plugins:\n- name: Widget\n  external:\n    comand: /plugins/widget\n",
			wantErr: []string{`unknown field "plugins[0].external.comand"`},
		},
		{
			name:    "unknown field in pluginHost",
			file:    "pluginHost:\n  socketDirectory: /sockets\n",
			wantErr: []string{`unknown field "pluginHost.socketDirectory"`},
		},
		{
			name:    "unknown field in restartBackoff",
			file:    "pluginHost:\n  restartBackoff:\n    maximum: 1m\n",
			wantErr: []string{`unknown field "pluginHost.restartBackoff.maximum"`},
		},
		{
			name:    "external plugin without a command",
			file:    "plugins:\n- name: PlainML\n- name: Widget\n  external:\n    args: [-v]\n",
			wantErr: []string{"plugins[1].external.command", "Required"},
		},
		{
			name:    "empty external entry",
			file:    "plugins:\n- name: Widget\n  external: {}\n",
			wantErr: []string{"plugins[0].external.command", "Required"},
		},
		{
			name:    "unsupported failurePolicy",
			file:    "plugins:\n- name: Torch\n  failurePolicy: Retry\n",
			wantErr: []string{"plugins[0].failurePolicy", "Retry", `"Fail"`, `"Ignore"`},
		},
		{
			name:    "failurePolicy is case-sensitive",
			file:    "plugins:\n- name: Torch\n  failurePolicy: ignore\n",
			wantErr: []string{"plugins[0].failurePolicy", "ignore"},
		},
		{
			name:    "wasm without a module",
			file:    "plugins:\n- name: Widget\n  wasm:\n    sha256: " + realSHA + "\n",
			wantErr: []string{"plugins[0].wasm.module", "Required", "absolute path of the plugin's .wasm file"},
		},
		{
			name:    "wasm module not absolute",
			file:    "plugins:\n- name: Widget\n  wasm:\n    module: widget.wasm\n    sha256: " + realSHA + "\n",
			wantErr: []string{"plugins[0].wasm.module", `"widget.wasm"`, "clean absolute path"},
		},
		{
			name:    "wasm without a sha256",
			file:    "plugins:\n- name: Widget\n  wasm:\n    module: /w.wasm\n",
			wantErr: []string{"plugins[0].wasm.sha256", "Required", "sha256sum <module>"},
		},
		{
			name:    "wasm sha256 not one",
			file:    "plugins:\n- name: Widget\n  wasm:\n    module: /w.wasm\n    sha256: 9f2c\n",
			wantErr: []string{"plugins[0].wasm.sha256", `"9f2c"`, "64 hex digits"},
		},
		{
			name:    "wasm memoryLimit out of bounds",
			file:    "plugins:\n- name: Widget\n  wasm:\n    module: /w.wasm\n    sha256: " + realSHA + "\n    memoryLimit: 8Gi\n",
			wantErr: []string{"plugins[0].wasm.memoryLimit", `"8Gi"`, "between 1Mi and 4Gi", "128Mi"},
		},
		{
			name:    "wasmMemoryBudget below one instance",
			file:    "pluginHost:\n  wasmMemoryBudget: 512Ki\n",
			wantErr: []string{"pluginHost.wasmMemoryBudget", `"512Ki"`, "at least 1Mi", "256Mi"},
		},
		{
			name:    "wasmMemoryBudget not a quantity",
			file:    "pluginHost:\n  wasmMemoryBudget: plenty\n",
			wantErr: []string{"pluginHost.wasmMemoryBudget", `"plenty"`, "quantity of bytes such as 64Mi"},
		},
		{
			name:    "wasm memoryLimit not a quantity",
			file:    "plugins:\n- name: Widget\n  wasm:\n    module: /w.wasm\n    sha256: " + realSHA + "\n    memoryLimit: lots\n",
			wantErr: []string{"plugins[0].wasm.memoryLimit", `"lots"`, "quantity of bytes such as 64Mi"},
		},
		{
			name:    "wasm maxInstances zero",
			file:    "plugins:\n- name: Widget\n  wasm:\n    module: /w.wasm\n    sha256: " + realSHA + "\n    maxInstances: 0\n",
			wantErr: []string{"plugins[0].wasm.maxInstances", "0", "between 1 and 256"},
		},
		{
			name:    "wasm callTimeout not a duration",
			file:    "plugins:\n- name: Widget\n  wasm:\n    module: /w.wasm\n    sha256: " + realSHA + "\n    callTimeout: soon\n",
			wantErr: []string{"plugins[0].wasm.callTimeout", "soon", "duration"},
		},
		{
			name:    "external and wasm both",
			file:    "plugins:\n- name: Widget\n  external:\n    command: w\n  wasm:\n    module: /w.wasm\n    sha256: " + realSHA + "\n",
			wantErr: []string{"plugins[0].wasm", "external and wasm are exclusive"},
		},
		{
			name:    "unknown field in wasm",
			file:    "plugins:\n- name: Widget\n  wasm:\n    modul: /w.wasm\n",
			wantErr: []string{`unknown field "plugins[0].wasm.modul"`, "module, sha256, args, startTimeout, callTimeout, memoryLimit, maxInstances"},
		},
		{
			name:    "sha256 too short",
			file:    "plugins:\n- name: Widget\n  external:\n    command: w\n    sha256: abc123\n",
			wantErr: []string{"plugins[0].external.sha256", "abc123", "hex SHA-256 of the binary", "64", "sha256sum"},
		},
		{
			name:    "sha256 of 64 characters that are not hex",
			file:    "plugins:\n- name: Widget\n  external:\n    command: w\n    sha256: " + strings.Repeat("g", 64) + "\n",
			wantErr: []string{"plugins[0].external.sha256"},
		},
		{
			name:    "sha256 one digit too long",
			file:    "plugins:\n- name: Widget\n  external:\n    command: w\n    sha256: " + realSHA + "0\n",
			wantErr: []string{"plugins[0].external.sha256"},
		},
		{
			name:    "zero startTimeout",
			file:    "plugins:\n- name: Widget\n  external:\n    command: w\n    startTimeout: 0s\n",
			wantErr: []string{"plugins[0].external.startTimeout", "must be greater than 0"},
		},
		{
			name:    "negative callTimeout",
			file:    "plugins:\n- name: Widget\n  external:\n    command: w\n    callTimeout: -1s\n",
			wantErr: []string{"plugins[0].external.callTimeout", "-1s", "must be greater than 0"},
		},
		{
			name:    "startTimeout that is not a duration",
			file:    "plugins:\n- name: PlainML\n- name: Widget\n  external:\n    command: w\n    startTimeout: ten\n",
			wantErr: []string{"plugins[1].external.startTimeout", "ten", "duration"},
		},
		{
			name:    "callTimeout as a bare number",
			file:    "plugins:\n- name: Widget\n  external:\n    command: w\n    callTimeout: 2\n",
			wantErr: []string{"plugins[0].external.callTimeout", "duration"},
		},
		{
			name:    "restartBackoff max that is not a duration",
			file:    "pluginHost:\n  restartBackoff:\n    max: forever\n",
			wantErr: []string{"pluginHost.restartBackoff.max", "forever"},
		},
		{
			name:    "zero restartBackoff initial",
			file:    "pluginHost:\n  restartBackoff:\n    initial: 0s\n",
			wantErr: []string{"pluginHost.restartBackoff.initial", "must be greater than 0"},
		},
		{
			name:    "restartBackoff max below initial",
			file:    "pluginHost:\n  restartBackoff:\n    initial: 10s\n    max: 5s\n",
			wantErr: []string{"pluginHost.restartBackoff.max", "5s", "initial (10s)"},
		},
		{
			name:    "restartBackoff initial above the default max",
			file:    "pluginHost:\n  restartBackoff:\n    initial: 2m\n",
			wantErr: []string{"pluginHost.restartBackoff.max", "1m0s", "initial (2m0s)"},
		},
		{
			name:    "built-in and external entries of the same name",
			file:    "plugins:\n- name: Torch\n- name: Torch\n  external:\n    command: /usr/local/bin/trainforge-builtin-plugin\n    args: [Torch]\n",
			wantErr: []string{"plugins[1].name", "Duplicate", "Torch (first at plugins[0])"},
		},
		{
			name:    "several errors are all reported",
			file:    "plugins:\n- name: DeepSpeed\n- name: Widget\n  failurePolicy: Maybe\n  external:\n    sha256: nope\n",
			wantErr: []string{"plugins[0].name", "plugins[1].failurePolicy", "plugins[1].external.command", "plugins[1].external.sha256"},
		},
		{
			name:    "unknown top-level field",
			file:    "apiVersion: config.trainforge.dev/v1alpha1\nkind: Configuration\npluginz:\n- name: Torch\n",
			wantErr: []string{"pluginz"},
		},
		{
			name:    "unknown field in a plugin entry",
			file:    "plugins:\n- name: Torch\n  argz:\n    a: 1\n",
			wantErr: []string{"argz"},
		},
		{
			name:    "unknown field in a nested section",
			file:    "webhook:\n  prot: 9443\n",
			wantErr: []string{"prot"},
		},
		{
			name:    "duplicated field",
			file:    "kind: Configuration\nkind: Configuration\n",
			wantErr: []string{"kind"},
		},
		{
			name:    "not a mapping",
			file:    "- name: Torch\n",
			wantErr: []string{"config.yaml"},
		},
		{
			name:    "unregistered plugin",
			file:    "plugins:\n- name: PlainML\n- name: DeepSpeed\n",
			wantErr: []string{"plugins[1].name", "DeepSpeed", "no built-in plugin has this name", "`external` entry with its command"},
		},
		{
			name:    "plugin listed twice",
			file:    "plugins:\n- name: PlainML\n- name: Torch\n- name: PlainML\n",
			wantErr: []string{"plugins[2].name", "Duplicate", "PlainML"},
		},
		{
			name:    "plugin without a name",
			file:    "plugins:\n- name: PlainML\n- args: {a: 1}\n",
			wantErr: []string{"plugins[1].name", "Required"},
		},
		{
			name:    "wrong apiVersion",
			file:    "apiVersion: config.trainforge.dev/v1beta1\nkind: Configuration\n",
			wantErr: []string{"apiVersion", "v1beta1"},
		},
		{
			name:    "wrong kind",
			file:    "apiVersion: config.trainforge.dev/v1alpha1\nkind: Config\n",
			wantErr: []string{"kind", "Config"},
		},
		{
			name:    "webhook port too high",
			file:    "webhook:\n  port: 70000\n",
			wantErr: []string{"webhook.port", "70000"},
		},
		{
			name:    "webhook port zero",
			file:    "webhook:\n  port: 0\n",
			wantErr: []string{"webhook.port"},
		},
		{
			name:    "qps zero",
			file:    "clientConnection:\n  qps: 0\n",
			wantErr: []string{"clientConnection.qps", "-1 to disable"},
		},
		{
			name:    "workers zero",
			file:    "controller:\n  workers: 0\n",
			wantErr: []string{"controller.workers", "between 1 and 1024"},
		},
		{
			name: "client and workers",
			file: "clientConnection:\n  qps: 50\n  burst: 100\ncontroller:\n  workers: 4\n",
			want: func() *Configuration {
				c := defaulted()
				c.ClientConnection = ClientConnectionConfig{QPS: ptr.To[float32](50), Burst: ptr.To[int32](100)}
				c.Controller.Workers = ptr.To[int32](4)
				return c
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.file)
			cfg, err := Load(path, builtins)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Load succeeded with %+v, want an error containing %q", cfg, tc.wantErr)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Load error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(tc.want(), cfg); diff != "" {
				t.Errorf("Load (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"), builtins)
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Load of a missing file: error %v, want one naming the file", err)
	}
}

// designExample is the example of DESIGN §5, with sha256 as given there.
const designExample = `
apiVersion: config.trainforge.dev/v1alpha1
kind: Configuration
plugins:
- name: PlainML
- name: Torch
- name: Coscheduling
  args:
    scheduleTimeoutSeconds: 60
- name: JobSet
- name: MPI
  failurePolicy: Fail          # or Ignore
  external:
    command: /plugins/trainforge-plugin-mpi
    args: ["--log-level=info"]
    sha256: 9f2c...            # optional; checked before every start
    startTimeout: 10s
    callTimeout: 2s
`

// onlyBuiltins knows the built-ins that ship, not MPI.
var onlyBuiltins = registered("PlainML", "Torch", "JobSet", "Coscheduling", "TrainJobStatus")

func TestLoadDesignExample(t *testing.T) {
	file := strings.Replace(designExample, "9f2c...", realSHA, 1)
	cfg, err := Load(writeConfig(t, file), onlyBuiltins)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := defaulted()
	want.Plugins = []PluginConfig{
		{Name: "PlainML", FailurePolicy: FailurePolicyFail},
		{Name: "Torch", FailurePolicy: FailurePolicyFail},
		{Name: "Coscheduling", FailurePolicy: FailurePolicyFail, Args: &apiextensionsv1.JSON{Raw: []byte(`{"scheduleTimeoutSeconds":60}`)}},
		{Name: "JobSet", FailurePolicy: FailurePolicyFail},
		{Name: "MPI", FailurePolicy: FailurePolicyFail, External: &ExternalPlugin{
			Command:      "/plugins/trainforge-plugin-mpi",
			Args:         []string{"--log-level=info"},
			SHA256:       realSHA,
			StartTimeout: dur(10 * time.Second),
			CallTimeout:  dur(2 * time.Second),
		}},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
}

func TestLoadDesignExampleWithElidedSHA256(t *testing.T) {
	_, err := Load(writeConfig(t, designExample), onlyBuiltins)
	if err == nil {
		t.Fatal("Load succeeded, want an error about plugins[4].external.sha256")
	}
	for _, s := range []string{"plugins[4].external.sha256", `"9f2c..."`, "hex SHA-256 of the binary", "64 hex digits"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Load error %q does not contain %q", err, s)
		}
	}
}

func TestLoadExternalNeedsNoRegisteredName(t *testing.T) {
	// Without external, MPI is unknown to the shipped registry.
	_, err := Load(writeConfig(t, "plugins:\n- name: PlainML\n- name: MPI\n"), onlyBuiltins)
	if err == nil {
		t.Fatal("Load succeeded, want an error about plugins[1].name")
	}
	for _, s := range []string{"plugins[1].name", `"MPI"`, "no built-in plugin has this name", "`external` entry with its command"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Load error %q does not contain %q", err, s)
		}
	}
	// The message lists no names: neither the built-ins nor anything else.
	if strings.Contains(err.Error(), "Torch") || strings.Contains(err.Error(), "PlainML") {
		t.Errorf("Load error %q lists plugin names", err)
	}
	// With external, any name is accepted.
	if _, err := Load(writeConfig(t, "plugins:\n- name: PlainML\n- name: MPI\n  external:\n    command: mpi\n"), onlyBuiltins); err != nil {
		t.Errorf("Load: %v", err)
	}
}

func TestLoadNilKnownPluginAcceptsAnyName(t *testing.T) {
	cfg, err := Load(writeConfig(t, "plugins:\n- name: Anything\n"), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff([]string{"Anything"}, pluginNames(cfg)); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}
}

func TestDecodeIsStrict(t *testing.T) {
	cases := []struct {
		name      string
		data      string
		wantField string
	}{
		{name: "unknown top-level field", data: "apiVersion: config.trainforge.dev/v1alpha1\nsurprise: true\n", wantField: "surprise"},
		{name: "unknown plugin field", data: "plugins:\n- name: Torch\n  failurePolicee: Fail\n", wantField: "failurePolicee"},
		{name: "unknown metrics field", data: "metrics:\n  bindAddr: \":1\"\n", wantField: "bindAddr"},
		{name: "unknown external field", data: "plugins:\n- name: MPI\n- name: Widget\n  external:\n    command: w\n    comand: w\n", wantField: `unknown field "plugins[1].external.comand"`},
		{name: "misspelt sha256", data: "plugins:\n- name: Widget\n  external:\n    command: w\n    sha: abc\n", wantField: `unknown field "plugins[0].external.sha"`},
		{name: "unknown pluginHost field", data: "pluginHost:\n  socketdir: /s\n", wantField: `unknown field "pluginHost.socketdir"`},
		{name: "unknown restartBackoff field", data: "pluginHost:\n  restartBackoff:\n    initail: 1s\n", wantField: `unknown field "pluginHost.restartBackoff.initail"`},
		{name: "duplicated external field", data: "plugins:\n- name: Widget\n  external:\n    command: a\n    command: b\n", wantField: "command"},
		{name: "bad duration", data: "pluginHost:\n  restartBackoff:\n    initial: soon\n", wantField: "pluginHost.restartBackoff.initial"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.data))
			if err == nil {
				t.Fatalf("Decode succeeded, want an error naming %q", tc.wantField)
			}
			if !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("Decode error %q does not name %q", err, tc.wantField)
			}
		})
	}
}

func TestDecodeKeepsArgsRaw(t *testing.T) {
	cases := []struct {
		name string
		data string
		want *apiextensionsv1.JSON
	}{
		{name: "no args", data: "plugins:\n- name: Torch\n", want: nil},
		{name: "null args", data: "plugins:\n- name: Torch\n  args: null\n", want: nil},
		{name: "object", data: "plugins:\n- name: Coscheduling\n  args:\n    scheduleTimeoutSeconds: 60\n", want: &apiextensionsv1.JSON{Raw: []byte(`{"scheduleTimeoutSeconds":60}`)}},
		{
			// Args are the plugin's business: whatever they hold, the
			// strict decode of the file does not look inside.
			name: "unknown keys inside args are the plugin's business",
			data: "plugins:\n- name: MPI\n  args:\n    anything: [1, two]\n    nested: {deep: true}\n",
			want: &apiextensionsv1.JSON{Raw: []byte(`{"anything":[1,"two"],"nested":{"deep":true}}`)},
		},
		{name: "scalar", data: "plugins:\n- name: MPI\n  args: 3\n", want: &apiextensionsv1.JSON{Raw: []byte(`3`)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Decode([]byte(tc.data))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if len(cfg.Plugins) != 1 {
				t.Fatalf("got %d plugins, want 1", len(cfg.Plugins))
			}
			if diff := cmp.Diff(tc.want, cfg.Plugins[0].Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Configuration)
		want   field.ErrorList
	}{
		{name: "defaults are valid", mutate: func(*Configuration) {}},
		{
			name:   "unregistered name",
			mutate: func(c *Configuration) { c.Plugins[1].Name = "DeepSpeed" },
			want:   field.ErrorList{field.Invalid(field.NewPath("plugins").Index(1).Child("name"), "DeepSpeed", unknownPluginMsg)},
		},
		{
			name:   "name listed twice",
			mutate: func(c *Configuration) { c.Plugins[3].Name = "Torch" },
			want:   field.ErrorList{field.Duplicate(field.NewPath("plugins").Index(3).Child("name"), "Torch (first at plugins[1])")},
		},
		{
			name:   "empty name",
			mutate: func(c *Configuration) { c.Plugins[0].Name = "" },
			want:   field.ErrorList{field.Required(field.NewPath("plugins").Index(0).Child("name"), "every plugin needs a name")},
		},
		{
			name:   "two empty names are not duplicates of each other",
			mutate: func(c *Configuration) { c.Plugins[0].Name = ""; c.Plugins[2].Name = "" },
			want: field.ErrorList{
				field.Required(field.NewPath("plugins").Index(0).Child("name"), "every plugin needs a name"),
				field.Required(field.NewPath("plugins").Index(2).Child("name"), "every plugin needs a name"),
			},
		},
		{
			name:   "wrong apiVersion and kind",
			mutate: func(c *Configuration) { c.APIVersion = "v1"; c.Kind = "ConfigMap" },
			want: field.ErrorList{
				field.NotSupported(field.NewPath("apiVersion"), "v1", []string{"config.trainforge.dev/v1alpha1"}),
				field.NotSupported(field.NewPath("kind"), "ConfigMap", []string{"Configuration"}),
			},
		},
		{
			name:   "webhook port out of range",
			mutate: func(c *Configuration) { c.Webhook.Port = ptr.To(65536) },
			want:   field.ErrorList{field.Invalid(field.NewPath("webhook", "port"), 65536, "must be between 1 and 65535")},
		},
		{
			name:   "negative webhook port",
			mutate: func(c *Configuration) { c.Webhook.Port = ptr.To(-1) },
			want:   field.ErrorList{field.Invalid(field.NewPath("webhook", "port"), -1, "must be between 1 and 65535")},
		},
		{
			name: "certManagement names that are not Kubernetes names",
			mutate: func(c *Configuration) {
				c.Webhook.CertManagement = &CertManagement{Namespace: "Trainforge_System", WebhookSecretName: "a/b", ExtraDNSNames: []string{"localhost", "not a name"}}
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("webhook", "certManagement", "namespace"), "Trainforge_System", "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
				field.Invalid(field.NewPath("webhook", "certManagement", "webhookSecretName"), "a/b", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
				field.Invalid(field.NewPath("webhook", "certManagement", "extraDNSNames").Index(1), "not a name", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
			},
		},
		{
			name: "external entry valid whatever its name, even a built-in's",
			mutate: func(c *Configuration) {
				c.Plugins[1].External = &ExternalPlugin{Command: "/usr/local/bin/trainforge-builtin-plugin", Args: []string{"Torch"}}
				c.Plugins = append(c.Plugins, PluginConfig{Name: "DeepSpeed", FailurePolicy: FailurePolicyIgnore, External: &ExternalPlugin{Command: "ds", SHA256: realSHA}})
			},
		},
		{
			name: "unset failurePolicy, timeouts and backoff mean the defaults",
			mutate: func(c *Configuration) {
				c.Plugins[0].FailurePolicy = ""
				c.Plugins[1].External = &ExternalPlugin{Command: "torch"}
				c.PluginHost.RestartBackoff = RestartBackoff{}
			},
		},
		{
			name: "upper-case sha256 is valid",
			mutate: func(c *Configuration) {
				c.Plugins[0].External = &ExternalPlugin{Command: "p", SHA256: strings.ToUpper(realSHA)}
			},
		},
		{
			name:   "unsupported failurePolicy",
			mutate: func(c *Configuration) { c.Plugins[2].FailurePolicy = "Retry" },
			want: field.ErrorList{field.NotSupported(field.NewPath("plugins").Index(2).Child("failurePolicy"), FailurePolicy("Retry"),
				[]FailurePolicy{FailurePolicyFail, FailurePolicyIgnore})},
		},
		{
			name:   "external without command",
			mutate: func(c *Configuration) { c.Plugins[3].External = &ExternalPlugin{Args: []string{"-v"}} },
			want: field.ErrorList{field.Required(field.NewPath("plugins").Index(3).Child("external", "command"),
				"set command (the plugin binary, run as a child process: an absolute path, or a name looked up in PATH) "+
					"or socket (the absolute path of the Unix socket of a plugin that runs in its own container), one of them")},
		},
		{
			name:   "sha256 not 64 hex digits",
			mutate: func(c *Configuration) { c.Plugins[0].External = &ExternalPlugin{Command: "p", SHA256: "9f2c..."} },
			want: field.ErrorList{field.Invalid(field.NewPath("plugins").Index(0).Child("external", "sha256"), "9f2c...",
				"must be the hex SHA-256 of the binary, 64 hex digits (e.g. the first field of `sha256sum <binary>`)")},
		},
		{
			name: "non-positive timeouts",
			mutate: func(c *Configuration) {
				c.Plugins[1].External = &ExternalPlugin{Command: "p", StartTimeout: dur(0), CallTimeout: dur(-time.Second)}
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("plugins").Index(1).Child("external", "startTimeout"), "0s", "must be greater than 0"),
				field.Invalid(field.NewPath("plugins").Index(1).Child("external", "callTimeout"), "-1s", "must be greater than 0"),
			},
		},
		{
			name:   "non-positive backoff initial",
			mutate: func(c *Configuration) { c.PluginHost.RestartBackoff.Initial = dur(-time.Second) },
			want: field.ErrorList{
				field.Invalid(field.NewPath("pluginHost", "restartBackoff", "initial"), "-1s", "must be greater than 0"),
			},
		},
		{
			name:   "both backoff bounds zero",
			mutate: func(c *Configuration) { c.PluginHost.RestartBackoff = RestartBackoff{Initial: dur(0), Max: dur(0)} },
			want: field.ErrorList{
				field.Invalid(field.NewPath("pluginHost", "restartBackoff", "initial"), "0s", "must be greater than 0"),
				field.Invalid(field.NewPath("pluginHost", "restartBackoff", "max"), "0s", "must be greater than 0"),
			},
		},
		{
			name: "backoff max below initial",
			mutate: func(c *Configuration) {
				c.PluginHost.RestartBackoff = RestartBackoff{Initial: dur(time.Minute), Max: dur(time.Second)}
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("pluginHost", "restartBackoff", "max"), "1s", "must not be less than initial (1m0s)"),
			},
		},
		{
			name: "backoff max equal to initial is valid",
			mutate: func(c *Configuration) {
				c.PluginHost.RestartBackoff = RestartBackoff{Initial: dur(time.Second), Max: dur(time.Second)}
			},
		},
		{
			name: "errors of one entry come in field order",
			mutate: func(c *Configuration) {
				c.Plugins[0] = PluginConfig{Name: "Torch", FailurePolicy: "Never", External: &ExternalPlugin{SHA256: "x", CallTimeout: dur(0)}}
			},
			want: field.ErrorList{
				field.NotSupported(field.NewPath("plugins").Index(0).Child("failurePolicy"), FailurePolicy("Never"), []FailurePolicy{FailurePolicyFail, FailurePolicyIgnore}),
				field.Required(field.NewPath("plugins").Index(0).Child("external", "command"), "set command (the plugin binary, run as a child process: an absolute path, or a name looked up in PATH) "+
					"or socket (the absolute path of the Unix socket of a plugin that runs in its own container), one of them"),
				field.Invalid(field.NewPath("plugins").Index(0).Child("external", "sha256"), "x",
					"must be the hex SHA-256 of the binary, 64 hex digits (e.g. the first field of `sha256sum <binary>`)"),
				field.Invalid(field.NewPath("plugins").Index(0).Child("external", "callTimeout"), "0s", "must be greater than 0"),
				field.Duplicate(field.NewPath("plugins").Index(1).Child("name"), "Torch (first at plugins[0])"),
			},
		},
		{
			name:   "edge ports are valid",
			mutate: func(c *Configuration) { c.Webhook.Port = ptr.To(65535) },
		},
		{
			name: "qps -1 disables the client-side limit, and burst does not matter then",
			mutate: func(c *Configuration) {
				c.ClientConnection.QPS = ptr.To[float32](-1)
				c.ClientConnection.Burst = ptr.To[int32](0)
			},
		},
		{
			name: "negative qps, zero burst, too many workers",
			mutate: func(c *Configuration) {
				c.ClientConnection.QPS = ptr.To[float32](-2)
				c.ClientConnection.Burst = ptr.To[int32](0)
				c.Controller.Workers = ptr.To[int32](5000)
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("clientConnection", "qps"), float32(-2), "must be greater than 0, or -1 to disable the client-side rate limit"),
				field.Invalid(field.NewPath("clientConnection", "burst"), int32(0), "must be at least 1 (the requests that may be sent at once above qps)"),
				field.Invalid(field.NewPath("controller", "workers"), int32(5000), "must be between 1 and 1024; 16 suits most clusters"),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaulted()
			tc.mutate(cfg)
			got := Validate(cfg, builtins)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetDefaultsKeepsWhatIsSet(t *testing.T) {
	cfg := &Configuration{
		Plugins:        []PluginConfig{{Name: "Torch"}},
		Metrics:        MetricsConfig{BindAddress: "0"},
		LeaderElection: LeaderElectionConfig{LeaderElect: ptr.To(true), ResourceName: "mine"},
		Webhook:        WebhookConfig{Port: ptr.To(8443)},
	}
	SetDefaults(cfg)
	want := &Configuration{
		TypeMeta:       metav1.TypeMeta{APIVersion: "config.trainforge.dev/v1alpha1", Kind: "Configuration"},
		Plugins:        []PluginConfig{{Name: "Torch", FailurePolicy: FailurePolicyFail}},
		PluginHost:     PluginHostConfig{RestartBackoff: RestartBackoff{Initial: dur(time.Second), Max: dur(time.Minute)}, GoMaxProcs: ptr.To(DefaultPluginGoMaxProcs), WasmMemoryBudget: ptr.To(resource.MustParse("256Mi")), Limits: defaultLimits()},
		Metrics:        MetricsConfig{BindAddress: "0"},
		Health:         HealthConfig{HealthProbeBindAddress: ":8081"},
		LeaderElection: LeaderElectionConfig{LeaderElect: ptr.To(true), ResourceName: "mine"},
		Webhook:        WebhookConfig{Port: ptr.To(8443)},
		ClientConnection: ClientConnectionConfig{
			QPS: ptr.To(DefaultQPS), Burst: ptr.To(DefaultBurst),
		},
		Controller:   ControllerConfig{Workers: ptr.To(DefaultWorkers)},
		StatusServer: defaultStatusServer(),
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("SetDefaults (-want +got):\n%s", diff)
	}
}

func TestSetDefaultsPlugins(t *testing.T) {
	cfg := &Configuration{
		Plugins: []PluginConfig{
			{Name: "PlainML"},
			{Name: "Torch", FailurePolicy: FailurePolicyIgnore},
			{Name: "A", External: &ExternalPlugin{Command: "a", SHA256: strings.ToUpper(realSHA)}},
			{Name: "B", FailurePolicy: FailurePolicyIgnore, External: &ExternalPlugin{Command: "b", StartTimeout: dur(time.Minute), CallTimeout: dur(time.Second)}},
			{Name: "C", FailurePolicy: "Bogus"}, // left for Validate
		},
		PluginHost: PluginHostConfig{SocketDir: "/sockets", RestartBackoff: RestartBackoff{Initial: dur(5 * time.Second)}},
	}
	SetDefaults(cfg)
	want := []PluginConfig{
		{Name: "PlainML", FailurePolicy: FailurePolicyFail},
		{Name: "Torch", FailurePolicy: FailurePolicyIgnore},
		{Name: "A", FailurePolicy: FailurePolicyFail, External: &ExternalPlugin{Command: "a", SHA256: realSHA, StartTimeout: dur(DefaultStartTimeout), CallTimeout: dur(DefaultCallTimeout)}},
		{Name: "B", FailurePolicy: FailurePolicyIgnore, External: &ExternalPlugin{Command: "b", StartTimeout: dur(time.Minute), CallTimeout: dur(time.Second)}},
		{Name: "C", FailurePolicy: "Bogus"},
	}
	if diff := cmp.Diff(want, cfg.Plugins); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}
	wantHost := PluginHostConfig{SocketDir: "/sockets", RestartBackoff: RestartBackoff{Initial: dur(5 * time.Second), Max: dur(DefaultRestartBackoffMax)}, GoMaxProcs: ptr.To(DefaultPluginGoMaxProcs), WasmMemoryBudget: ptr.To(resource.MustParse("256Mi")), Limits: defaultLimits()}
	if diff := cmp.Diff(wantHost, cfg.PluginHost); diff != "" {
		t.Errorf("pluginHost (-want +got):\n%s", diff)
	}
	// Defaulting twice changes nothing.
	again := cfg.DeepCopy()
	SetDefaults(again)
	if diff := cmp.Diff(cfg, again); diff != "" {
		t.Errorf("second SetDefaults (-first +second):\n%s", diff)
	}
}

func TestDefaultDurations(t *testing.T) {
	got := []time.Duration{DefaultStartTimeout, DefaultCallTimeout, DefaultRestartBackoffInitial, DefaultRestartBackoffMax}
	want := []time.Duration{10 * time.Second, 2 * time.Second, time.Second, time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if DefaultFailurePolicy != FailurePolicyFail {
		t.Errorf("DefaultFailurePolicy = %q, want Fail", DefaultFailurePolicy)
	}
}

// SetDefaults is the one place of the defaults: what it leaves unset
// it does not know, and what is set it keeps.
func TestSetDefaultsOfPlugins(t *testing.T) {
	cfg := &Configuration{Plugins: []PluginConfig{
		{Name: "MPI", External: &ExternalPlugin{Command: "/plugins/mpi"}},
		{Name: "JAX", FailurePolicy: FailurePolicyIgnore, External: &ExternalPlugin{Command: "/plugins/jax", StartTimeout: dur(3 * time.Second), CallTimeout: dur(4 * time.Second)}},
	}}
	cfg.PluginHost.RestartBackoff = RestartBackoff{Max: dur(6 * time.Second)}
	SetDefaults(cfg)
	type got struct {
		Policy              FailurePolicy
		Start, Call         time.Duration
		Initial, Max        time.Duration
		MaxMessageBytes     int32
		GoMaxProcs, Workers int32
	}
	of := func(i int) got {
		p := cfg.Plugins[i]
		return got{p.FailurePolicy, p.External.StartTimeout.Duration, p.External.CallTimeout.Duration,
			cfg.PluginHost.RestartBackoff.Initial.Duration, cfg.PluginHost.RestartBackoff.Max.Duration,
			*cfg.PluginHost.Limits.MaxMessageBytes, *cfg.PluginHost.GoMaxProcs, *cfg.Controller.Workers}
	}
	want := []got{
		{FailurePolicyFail, 10 * time.Second, 2 * time.Second, time.Second, 6 * time.Second, 4 << 20, 1, 16},
		{FailurePolicyIgnore, 3 * time.Second, 4 * time.Second, time.Second, 6 * time.Second, 4 << 20, 1, 16},
	}
	if diff := cmp.Diff(want, []got{of(0), of(1)}); diff != "" {
		t.Errorf("defaulted plugins (-want +got):\n%s", diff)
	}
}

func TestSetDefaultsCertManagement(t *testing.T) {
	cfg := &Configuration{Webhook: WebhookConfig{CertManagement: &CertManagement{ExtraDNSNames: []string{"localhost"}}}}
	SetDefaults(cfg)
	want := &CertManagement{
		Enable:                             ptr.To(true),
		WebhookServiceName:                 "trainforge-webhook-service",
		WebhookSecretName:                  "trainforge-webhook-server-cert",
		ValidatingWebhookConfigurationName: "trainforge-validating-webhook-configuration",
		ExtraDNSNames:                      []string{"localhost"},
	}
	if diff := cmp.Diff(want, cfg.Webhook.CertManagement); diff != "" {
		t.Errorf("defaulted certManagement (-want +got):\n%s", diff)
	}
	if !cfg.Webhook.CertManagement.Enabled() {
		t.Error("a certManagement section without enable is not enabled")
	}
	cfg.Webhook.CertManagement.Enable = ptr.To(false)
	if cfg.Webhook.CertManagement.Enabled() || (*CertManagement)(nil).Enabled() {
		t.Error("enable: false, or no section, is enabled")
	}
	if plain := (&Configuration{}); func() bool { SetDefaults(plain); return plain.Webhook.CertManagement != nil }() {
		t.Error("defaulting made a certManagement section the file does not have")
	}
}

func TestValidateExternal(t *testing.T) {
	ext := field.NewPath("plugins").Index(0).Child("external")
	cases := []struct {
		name string
		ext  ExternalPlugin
		want field.ErrorList
	}{
		{name: "command", ext: ExternalPlugin{Command: "/plugins/mpi", Env: []EnvVar{{Name: "LOG_LEVEL", Value: "debug"}, {Name: "PATH", Value: "/opt/bin"}, {Name: "GOMAXPROCS", Value: "2"}}}},
		{name: "socket", ext: ExternalPlugin{Socket: "/var/run/trainforge/plugins/mpi.sock"}},
		{
			name: "neither command nor socket",
			ext:  ExternalPlugin{},
			want: field.ErrorList{field.Required(ext.Child("command"),
				"set command (the plugin binary, run as a child process: an absolute path, or a name looked up in PATH) "+
					"or socket (the absolute path of the Unix socket of a plugin that runs in its own container), one of them")},
		},
		{
			name: "both command and socket",
			ext:  ExternalPlugin{Command: "/plugins/mpi", Socket: "/run/mpi.sock"},
			want: field.ErrorList{field.Forbidden(ext.Child("socket"),
				"command and socket are exclusive: set command to run the plugin as a child process, or socket to connect to a plugin that runs on its own, not both")},
		},
		{
			name: "relative socket",
			ext:  ExternalPlugin{Socket: "run/mpi.sock"},
			want: field.ErrorList{field.Invalid(ext.Child("socket"), "run/mpi.sock", "must be a clean absolute path, such as /var/run/trainforge/plugins/mpi.sock")},
		},
		{
			name: "unclean socket",
			ext:  ExternalPlugin{Socket: "/run/../mpi.sock"},
			want: field.ErrorList{field.Invalid(ext.Child("socket"), "/run/../mpi.sock", "must be a clean absolute path, such as /var/run/trainforge/plugins/mpi.sock")},
		},
		{
			name: "socket with what only a command takes",
			ext:  ExternalPlugin{Socket: "/run/mpi.sock", Args: []string{"-v"}, SHA256: realSHA, Env: []EnvVar{{Name: "A", Value: "1"}}},
			want: field.ErrorList{
				field.Forbidden(ext.Child("args"), "applies only to command: a plugin on a socket runs in its own container, whose image, arguments and environment its pod spec sets"),
				field.Forbidden(ext.Child("sha256"), "applies only to command: a plugin on a socket runs in its own container, whose image, arguments and environment its pod spec sets"),
				field.Forbidden(ext.Child("env"), "applies only to command: a plugin on a socket runs in its own container, whose image, arguments and environment its pod spec sets"),
			},
		},
		{
			name: "bad env names",
			ext:  ExternalPlugin{Command: "mpi", Env: []EnvVar{{Name: ""}, {Name: "PLUGIN_CLIENT_CERT", Value: "x"}, {Name: "A=B"}, {Name: "X"}, {Name: "X"}}},
			want: field.ErrorList{
				field.Required(ext.Child("env").Index(0).Child("name"), "the variable's name"),
				field.Forbidden(ext.Child("env").Index(1).Child("name"), "PLUGIN_CLIENT_CERT is set by the plugin host for go-plugin's handshake; any name but "+
					"TRAINFORGE_PLUGIN, TRAINFORGE_PLUGIN_SOCKET, PLUGIN_PROTOCOL_VERSIONS, PLUGIN_MIN_PORT, PLUGIN_MAX_PORT, PLUGIN_CLIENT_CERT, PLUGIN_UNIX_SOCKET_DIR, PLUGIN_UNIX_SOCKET_GROUP, PLUGIN_MULTIPLEX_GRPC is accepted"),
				field.Invalid(ext.Child("env").Index(2).Child("name"), "A=B", validation.IsEnvVarName("A=B")[0]),
				field.Duplicate(ext.Child("env").Index(4).Child("name"), "X (first at plugins[0].external.env[3])"),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaulted()
			e := tc.ext
			cfg.Plugins[0] = PluginConfig{Name: "MPI", FailurePolicy: FailurePolicyFail, External: &e}
			SetDefaults(cfg)
			got := Validate(cfg, builtins)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func defaultLimits() PluginLimits {
	l := PluginLimits{}
	setDefaultLimits(&l)
	return l
}

func TestValidateLimits(t *testing.T) {
	cfg := defaulted()
	cfg.PluginHost.Limits.MaxObjects = ptr.To[int32](0)
	cfg.PluginHost.Limits.MaxMessageBytes = ptr.To[int32](-1)
	want := field.ErrorList{
		field.Invalid(field.NewPath("pluginHost", "limits", "maxMessageBytes"), int32(-1), "must be at least 1; the default is 4194304"),
		field.Invalid(field.NewPath("pluginHost", "limits", "maxObjects"), int32(0), "must be at least 1; the default is 1000"),
	}
	if diff := cmp.Diff(want, Validate(cfg, builtins)); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
}

func TestDecodeExternalEnvAndSocket(t *testing.T) {
	cfg, err := Decode([]byte(`apiVersion: config.trainforge.dev/v1alpha1
kind: Configuration
plugins:
- name: MPI
  external:
    socket: /var/run/trainforge/plugins/mpi.sock
- name: JAX
  external:
    command: /plugins/jax
    env:
    - name: LOG_LEVEL
      value: debug
pluginHost:
  limits:
    maxObjects: 50
`))
	if err != nil {
		t.Fatal(err)
	}
	SetDefaults(cfg)
	if errs := Validate(cfg, builtins); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := cfg.Plugins[0].External.Socket; got != "/var/run/trainforge/plugins/mpi.sock" {
		t.Errorf("socket %q", got)
	}
	if diff := cmp.Diff([]EnvVar{{Name: "LOG_LEVEL", Value: "debug"}}, cfg.Plugins[1].External.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(PluginLimits{MaxMessageBytes: ptr.To[int32](4194304), MaxObjects: ptr.To[int32](50), MaxObjectBytes: ptr.To[int32](1572864), MaxPatchOperations: ptr.To[int32](10000), MaxDepth: ptr.To[int32](100)}, cfg.PluginHost.Limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
}

// TestLoadLeavesPluginArgsAlone: the configuration knows no plugin, so
// loading it rewrites no plugin's args; statusServer reaches plugins as
// the host's facts (framework/external.HostFor).
func TestLoadLeavesPluginArgsAlone(t *testing.T) {
	cfg, err := Load(writeConfig(t, `
statusServer:
  port: 8443
plugins:
- name: PlainML
- name: TrainJobStatus
  args:
    tokenExpirationSeconds: 7200
- name: Coscheduling
`), onlyBuiltins)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := string(cfg.Plugins[1].Args.Raw); got != `{"tokenExpirationSeconds":7200}` {
		t.Errorf("TrainJobStatus args = %s, want them as the file gives them", got)
	}
	if cfg.Plugins[2].Args != nil {
		t.Errorf("Coscheduling args = %s, want none", cfg.Plugins[2].Args.Raw)
	}
}

func TestValidateStatusServer(t *testing.T) {
	cfg := defaulted()
	cfg.StatusServer.Port = ptr.To[int32](9443)
	cfg.StatusServer.MinUpdateInterval = dur(0)
	cfg.StatusServer.TokenExpirationSeconds = ptr.To[int64](60)
	cfg.StatusServer.ServiceName = "Not_A_Name"
	cfg.StatusServer.MaxMetricsPerTrainJob = ptr.To[int32](1000)
	var got []string
	for _, e := range Validate(cfg, builtins) {
		got = append(got, e.Field+": "+e.Detail)
	}
	want := []string{
		"statusServer.port: must differ from webhook.port",
		"statusServer.serviceName: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
		"statusServer.minUpdateInterval: must be more than 0, for example 1s",
		"statusServer.tokenExpirationSeconds: must be at least 600 (the API server's minimum)",
		"statusServer.maxMetricsPerTrainJob: must be between 0 and 256 (a TrainJob reports at most 256 metrics)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}

	// A disabled status server binds no port: the webhook may take its
	// default one (the fault suite's replicas got 10443 as a free port).
	off := defaulted()
	off.StatusServer.Enable = ptr.To(false)
	off.Webhook.Port = ptr.To(int(*off.StatusServer.Port))
	if errs := Validate(off, builtins); len(errs) != 0 {
		t.Errorf("Validate with the status server disabled and webhook.port %d: %v", *off.Webhook.Port, errs)
	}
}

// TestWasmCacheDir accepts a clean absolute directory or none, and refuses
// anything else naming the field.
func TestWasmCacheDir(t *testing.T) {
	for dir, ok := range map[string]bool{"": true, "/var/cache/trainforge/wasm": true, "cache/wasm": false, "/var/cache/../wasm": false} {
		cfg := Defaulted(&Configuration{PluginHost: PluginHostConfig{WasmCacheDir: dir}})
		errs := Validate(cfg, func(string) bool { return true })
		if got := len(errs) == 0; got != ok {
			t.Errorf("wasmCacheDir %q: errors %v, want valid=%v", dir, errs, ok)
		}
		if !ok && (len(errs) != 1 || errs[0].Field != "pluginHost.wasmCacheDir") {
			t.Errorf("wasmCacheDir %q: errors %v, want one naming pluginHost.wasmCacheDir", dir, errs)
		}
	}
}
