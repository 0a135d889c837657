package operator

import (
	"github.com/google/go-cmp/cmp"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
)

func TestClientConfig(t *testing.T) {
	cfg, err := configv1alpha1.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	// As clientcmd returns a kubeconfig: no rate, which client-go would
	// turn into 5 requests a second.
	in := &rest.Config{Host: "https://127.0.0.1:6443"}
	out := ClientConfig(in, cfg)
	if out.QPS != configv1alpha1.DefaultQPS || out.Burst != int(configv1alpha1.DefaultBurst) {
		t.Errorf("ClientConfig: qps %v burst %d, want the defaults %v and %d", out.QPS, out.Burst, configv1alpha1.DefaultQPS, configv1alpha1.DefaultBurst)
	}
	if in.QPS != 0 {
		t.Error("ClientConfig changed its input")
	}
	if out.UserAgent != ControllerName {
		t.Errorf("UserAgent = %q, want %q", out.UserAgent, ControllerName)
	}
	// As ctrl.GetConfig returns one for $KUBECONFIG: QPS -1. The file's
	// settings win either way.
	cfg.ClientConnection.QPS = ptr.To[float32](50)
	cfg.ClientConnection.Burst = ptr.To[int32](60)
	out = ClientConfig(&rest.Config{QPS: -1}, cfg)
	if out.QPS != 50 || out.Burst != 60 {
		t.Errorf("ClientConfig: qps %v burst %d, want 50 and 60", out.QPS, out.Burst)
	}
}

func TestPluginEnv(t *testing.T) {
	cfg, err := configv1alpha1.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := &configv1alpha1.ExternalPlugin{Command: "x"}
	path := "PATH=" + configv1alpha1.DefaultPluginPath
	if diff := cmp.Diff([]string{path, "GOMAXPROCS=1"}, pluginEnv(cfg, cmd)); diff != "" {
		t.Errorf("pluginEnv with the defaults (-want +got):\n%s", diff)
	}
	cfg.PluginHost.GoMaxProcs = ptr.To[int32](0)
	if diff := cmp.Diff([]string{path}, pluginEnv(cfg, cmd)); diff != "" {
		t.Errorf("pluginEnv with goMaxProcs 0, Go's default (-want +got):\n%s", diff)
	}
	withEnv := &configv1alpha1.ExternalPlugin{Command: "x", Env: []configv1alpha1.EnvVar{{Name: "PATH", Value: "/opt/bin"}, {Name: "LOG_LEVEL", Value: "debug"}}}
	if diff := cmp.Diff([]string{path, "PATH=/opt/bin", "LOG_LEVEL=debug"}, pluginEnv(cfg, withEnv)); diff != "" {
		t.Errorf("pluginEnv with external.env, which comes last so that it wins (-want +got):\n%s", diff)
	}
	if got := pluginEnv(cfg, &configv1alpha1.ExternalPlugin{Socket: "/run/x.sock"}); got != nil {
		t.Errorf("pluginEnv of a socket plugin = %v, want nothing", got)
	}
	cfg.PluginHost.GoMaxProcs = ptr.To[int32](4)
	opts := externalOptions(&configv1alpha1.Configuration{
		PluginHost: cfg.PluginHost,
		Plugins:    []configv1alpha1.PluginConfig{{Name: "X", External: cmd}},
	}, 0, logr.Discard())
	if diff := cmp.Diff([]string{path, "GOMAXPROCS=4"}, opts.Env); diff != "" {
		t.Errorf("external options Env (-want +got):\n%s", diff)
	}
	if opts.MaxMessageBytes != 4<<20 || opts.Limits.MaxObjects != 1000 || opts.Limits.MaxPatchOperations != 10000 || opts.Limits.MaxObjectBytes != 1536<<10 {
		t.Errorf("external options limits = %d, %+v, want the defaults of pluginHost.limits", opts.MaxMessageBytes, opts.Limits)
	}
}
