package external

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
)

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
