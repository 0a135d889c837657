package operator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework/external"
	"github.com/trainforge/trainforge/framework/pluginhost"
	"github.com/trainforge/trainforge/framework/wasm"
)

func TestRestartFields(t *testing.T) {
	base := func() *configv1alpha1.Configuration {
		cfg := &configv1alpha1.Configuration{}
		configv1alpha1.SetDefaults(cfg)
		return cfg
	}
	a, b := base(), base()
	if got := restartFields(a, b); got != nil {
		t.Errorf("two default configurations differ in %v", got)
	}
	b.Plugins = b.Plugins[:2]
	b.PluginHost.SocketDir = "/run/plugins"
	if got := restartFields(a, b); got != nil {
		t.Errorf("the plugins and pluginHost change at run time, but restartFields says %v", got)
	}
	b.Metrics.BindAddress = ":9090"
	b.LeaderElection.LeaderElect = ptr.To(true)
	b.Webhook.Port = ptr.To(9444)
	b.ClientConnection.QPS = ptr.To[float32](50)
	b.Controller.Workers = ptr.To[int32](2)
	if got, want := restartFields(a, b), []string{"metrics", "leaderElection", "webhook", "clientConnection", "controller"}; !slices.Equal(got, want) {
		t.Errorf("restartFields = %v, want %v", got, want)
	}
}

func TestSameOptions(t *testing.T) {
	opts := external.Options{Options: pluginhost.Options{Name: "JAX", SHA256: "ab", CallTimeout: time.Second}, Command: "/plugins/jax"}
	if !sameOptions(opts, opts) {
		t.Error("the same options run another process")
	}
	if sameOptions(opts, wasm.Options{Options: opts.Options, Module: "/plugins/jax"}) {
		t.Error("an entry that moves from external to wasm keeps its process")
	}
	for name, change := range map[string]func(*external.Options){
		"command":    func(o *external.Options) { o.Command = "/plugins/jax-v2" },
		"sha256":     func(o *external.Options) { o.SHA256 = "cd" },
		"args":       func(o *external.Options) { o.Args = []string{"--v=2"} },
		"pluginArgs": func(o *external.Options) { o.PluginArgs = []byte(`{"port":1}`) },
		"timeout":    func(o *external.Options) { o.CallTimeout = 2 * time.Second },
	} {
		changed := opts
		change(&changed)
		if sameOptions(opts, changed) {
			t.Errorf("a changed %s keeps the running process", name)
		}
	}
}

// A file changed after the controller loaded it but before the watch began
// produces no file event; the watcher must still notice it.
func TestConfigWatcherSeesAChangeBeforeItsWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("changed before the watch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	invalid := configReloads.WithLabelValues(ReloadInvalid)
	before := testutil.ToFloat64(invalid)
	w := &ConfigWatcher{
		Path:    path,
		Load:    func(string) (*configv1alpha1.Configuration, error) { return nil, errors.New("does not decode") },
		Applied: &configv1alpha1.Configuration{},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Start(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(invalid) == before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got := testutil.ToFloat64(invalid) - before; got != 1 {
		t.Errorf("trainforge_config_reloads_total{result=%q} grew by %v, want 1: the file changed before the watch was not read", ReloadInvalid, got)
	}
}
