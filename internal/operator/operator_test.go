package operator

import (
	"testing"

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
