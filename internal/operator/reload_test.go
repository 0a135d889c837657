package operator

import (
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework/external"
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
	opts := external.Options{Name: "JAX", Command: "/plugins/jax", SHA256: "ab", CallTimeout: time.Second, Logger: logr.Discard()}
	same := opts
	same.Logger = logr.Logger{}
	if !sameOptions(opts, same) {
		t.Error("options that differ only in their logger run another process")
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
