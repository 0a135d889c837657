package v1alpha1

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

var builtins = registered("PlainML", "Torch", "JobSet", "Coscheduling", "MPI")

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

// defaulted is the configuration Load returns without a file.
func defaulted() *Configuration {
	return &Configuration{
		TypeMeta: metav1.TypeMeta{APIVersion: "config.trainforge.dev/v1alpha1", Kind: "Configuration"},
		Plugins: []PluginConfig{
			{Name: "PlainML"}, {Name: "Torch"}, {Name: "JobSet"}, {Name: "Coscheduling"},
		},
		Metrics:        MetricsConfig{BindAddress: ":8080"},
		Health:         HealthConfig{HealthProbeBindAddress: ":8081"},
		LeaderElection: LeaderElectionConfig{LeaderElect: ptr.To(false), ResourceName: "trainforge-controller.trainforge.dev"},
		Webhook:        WebhookConfig{Port: ptr.To(9443)},
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
	if diff := cmp.Diff([]string{"PlainML", "Torch", "JobSet", "Coscheduling"}, DefaultPlugins); diff != "" {
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
					{Name: "Torch"},
					{Name: "Coscheduling", Args: &apiextensionsv1.JSON{Raw: []byte(`{"scheduleTimeoutSeconds":60,"schedulerName":"scheduler-plugins-scheduler"}`)}},
					{Name: "JobSet"},
					{Name: "PlainML"},
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
				c.Plugins = []PluginConfig{{Name: "PlainML"}}
				return c
			},
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
			wantErr: []string{"plugins[1].name", "DeepSpeed", "no plugin of this name is registered"},
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
			want:   field.ErrorList{field.Invalid(field.NewPath("plugins").Index(1).Child("name"), "DeepSpeed", "no plugin of this name is registered")},
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
			name:   "edge ports are valid",
			mutate: func(c *Configuration) { c.Webhook.Port = ptr.To(65535) },
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
		Plugins:        []PluginConfig{{Name: "Torch"}},
		Metrics:        MetricsConfig{BindAddress: "0"},
		Health:         HealthConfig{HealthProbeBindAddress: ":8081"},
		LeaderElection: LeaderElectionConfig{LeaderElect: ptr.To(true), ResourceName: "mine"},
		Webhook:        WebhookConfig{Port: ptr.To(8443)},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("SetDefaults (-want +got):\n%s", diff)
	}
}
