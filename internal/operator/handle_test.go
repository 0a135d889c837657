package operator

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// handleRecorder is a plugin that implements no point.
type handleRecorder struct{}

func (handleRecorder) Describe() framework.Description {
	return framework.Description{Name: "Recorder"}
}

// TestPluginsGetTheHostsFacts: the controller creates its plugins with
// the facts of its configuration (framework.Handle), so that no plugin's
// args need rewriting by name.
func TestPluginsGetTheHostsFacts(t *testing.T) {
	var got framework.Handle
	registry := framework.Registry{"Recorder": func(h framework.Handle) framework.Plugin {
		got = h
		return handleRecorder{}
	}}
	cfg := &configv1alpha1.Configuration{Plugins: []configv1alpha1.PluginConfig{{Name: "Recorder"}}}
	cfg.StatusServer.ServiceName, cfg.StatusServer.ServiceNamespace = "progress", "ml-system"
	cfg.StatusServer.Port = ptr.To[int32](8443)
	cfg.StatusServer.CAConfigMapName = "progress-ca"
	cfg.StatusServer.TokenExpirationSeconds = ptr.To[int64](7200)
	if _, err := NewFramework(context.Background(), cfg, registry, logr.Discard()); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("the factory got no Handle")
	}
	want := framework.StatusEndpoint{URL: "https://progress.ml-system.svc:8443", CAConfigMapName: "progress-ca", TokenExpirationSeconds: 7200}
	if diff := cmp.Diff(want, got.StatusEndpoint()); diff != "" {
		t.Errorf("StatusEndpoint (-want +got):\n%s", diff)
	}
}
