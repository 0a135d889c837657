package external

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/pluginhost"
)

// TestHostForTakesTheStatusServer checks that the host's facts come from
// statusServer, defaulted (its one place of defaults), for plugins in
// process and out of process alike.
func TestHostForTakesTheStatusServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(`
webhook:
  certManagement:
    namespace: ml-system
    webhookServiceName: trainer-hooks
statusServer:
  port: 8443
  caConfigMapName: ca-for-progress
plugins:
- name: PlainML
- name: Ext
  external:
    command: /plugins/ext
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configv1alpha1.Load(path, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := framework.Host{Status: framework.StatusEndpoint{URL: "https://trainer-hooks.ml-system.svc:8443", CAConfigMapName: "ca-for-progress", TokenExpirationSeconds: 3600}}
	if diff := cmp.Diff(want, pluginhost.HostFor(cfg)); diff != "" {
		t.Errorf("HostFor (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, OptionsFor(cfg, 1, logr.Discard()).Host); diff != "" {
		t.Errorf("OptionsFor(...).Host, what Configure sends (-want +got):\n%s", diff)
	}
}

// A configuration entry becomes the host's options with the configuration's
// defaults, and a child process's environment from PATH, GOMAXPROCS and
// the entry's env, in that order.
func TestOptionsFor(t *testing.T) {
	cfg, err := configv1alpha1.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := &configv1alpha1.ExternalPlugin{Command: "x"}
	path := "PATH=" + configv1alpha1.DefaultPluginPath
	if diff := cmp.Diff([]string{path, "GOMAXPROCS=1"}, entryEnv(cfg, cmd)); diff != "" {
		t.Errorf("pluginEnv with the defaults (-want +got):\n%s", diff)
	}
	cfg.PluginHost.GoMaxProcs = ptr.To[int32](0)
	if diff := cmp.Diff([]string{path}, entryEnv(cfg, cmd)); diff != "" {
		t.Errorf("pluginEnv with goMaxProcs 0, Go's default (-want +got):\n%s", diff)
	}
	withEnv := &configv1alpha1.ExternalPlugin{Command: "x", Env: []configv1alpha1.EnvVar{{Name: "PATH", Value: "/opt/bin"}, {Name: "LOG_LEVEL", Value: "debug"}}}
	if diff := cmp.Diff([]string{path, "PATH=/opt/bin", "LOG_LEVEL=debug"}, entryEnv(cfg, withEnv)); diff != "" {
		t.Errorf("pluginEnv with external.env, which comes last so that it wins (-want +got):\n%s", diff)
	}
	if got := entryEnv(cfg, &configv1alpha1.ExternalPlugin{Socket: "/run/x.sock"}); got != nil {
		t.Errorf("pluginEnv of a socket plugin = %v, want nothing", got)
	}
	cfg.PluginHost.GoMaxProcs = ptr.To[int32](4)
	opts := OptionsFor(configv1alpha1.Defaulted(&configv1alpha1.Configuration{
		PluginHost: configv1alpha1.PluginHostConfig{GoMaxProcs: ptr.To[int32](4)},
		Plugins:    []configv1alpha1.PluginConfig{{Name: "X", External: cmd}},
	}), 0, logr.Discard())
	if diff := cmp.Diff([]string{path, "GOMAXPROCS=4"}, opts.Env); diff != "" {
		t.Errorf("external options Env (-want +got):\n%s", diff)
	}
	if opts.MaxMessageBytes != 4<<20 || opts.Limits.MaxObjects != 1000 || opts.Limits.MaxPatchOperations != 10000 || opts.Limits.MaxObjectBytes != 1536<<10 {
		t.Errorf("external options limits = %d, %+v, want the defaults of pluginHost.limits", opts.MaxMessageBytes, opts.Limits)
	}
}
