package operator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
)

// wasmConfig is a configuration whose one plugin is the everypoint module
// at path with the greeting, compiled through the tests' shared cache.
func wasmConfig(path, sum, greeting string) *configv1alpha1.Configuration {
	return &configv1alpha1.Configuration{PluginHost: configv1alpha1.PluginHostConfig{WasmCacheDir: wasmtest.CacheDir()}, Plugins: []configv1alpha1.PluginConfig{{
		Name: "EveryPoint",
		Args: &apiextensionsv1.JSON{Raw: []byte(`{"greeting":"` + greeting + `"}`)},
		Wasm: &configv1alpha1.WasmPlugin{Module: path, SHA256: sum, StartTimeout: &metav1.Duration{Duration: time.Minute}},
	}}}
}

// greeting runs EnforceMLPolicy through the framework in use and returns
// the label the plugin set.
func greeting(t *testing.T, p *Plugins) string {
	t.Helper()
	set, done := p.Framework().Use()
	defer done()
	return greetingOf(t, set)
}

// greetingOf is greeting through the plugin set a piece of work took.
func greetingOf(t *testing.T, set *frameworkruntime.PluginSet) string {
	t.Helper()
	job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "llm", Namespace: "team-a"}}
	c, err := set.NewCycle(job, framework.PolicyKeys{ML: []string{"everypoint"}})
	if err != nil {
		t.Fatalf("NewCycle: %v", err)
	}
	info := &framework.Info{Version: framework.InfoVersion, RuntimePolicy: framework.RuntimePolicy{MLPolicy: []byte(`{"everypoint":{}}`)}}
	if err := c.Enforce(context.Background(), info); err != nil {
		t.Fatalf("Enforce: %v", err)
	}
	return info.Labels["everypoint/ml"]
}

// withCustomSection writes a copy of the module at src with a custom
// section appended: the same code under another checksum, as a new
// release of a plugin would be.
func withCustomSection(t *testing.T, src string) (string, string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	name := "trainforge-test-release-2"
	b = append(b, 0, byte(1+len(name)+1), byte(len(name)))
	b = append(b, name...)
	b = append(b, 2) // the payload: the release
	path := filepath.Join(t.TempDir(), "everypoint-2.wasm")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, sha256Of(b)
}

// TestWasmReload starts a wasm plugin from the configuration, then applies
// a configuration whose module has another checksum: the new module
// answers, the old plugin is closed once idle. A configuration whose
// checksum does not match its module is refused whole, and the running
// plugin stays.
func TestWasmReload(t *testing.T) {
	m := wasmtest.Build(t, "github.com/trainforge/trainforge/test/plugins/everypoint")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := NewPlugins(ctx, wasmConfig(m.Path, m.SHA256, "v1"), framework.Registry{}, logr.Discard())
	if err != nil {
		t.Fatalf("NewPlugins: %v", err)
	}
	if got := greeting(t, p); got != "v1" {
		t.Fatalf("the wasm plugin answered %q, want v1", got)
	}
	old := p.hosted["EveryPoint"].plugin

	path2, sum2 := withCustomSection(t, m.Path)
	bad := wasmConfig(path2, m.SHA256, "v2")
	err = p.Apply(bad)
	if err == nil || !strings.Contains(err.Error(), path2) || !strings.Contains(err.Error(), sum2) || !strings.Contains(err.Error(), "EveryPoint") {
		t.Fatalf("Apply of a module with another checksum than its entry's: %v, want an error naming the plugin, the file and both sums", err)
	}
	if got := greeting(t, p); got != "v1" {
		t.Fatalf("after a refused reload the plugin answered %q, want v1 (the running one)", got)
	}

	// Work that took the set before the reload (a reconcile between two
	// of its calls) still calls the old plugin after it: the plugin is
	// closed once that work has ended, not when it has no call under way.
	before, done := p.Framework().Use()
	if err := p.Apply(wasmConfig(path2, sum2, "v2")); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if got := greeting(t, p); got != "v2" {
		t.Fatalf("after the reload the plugin answered %q, want v2", got)
	}
	time.Sleep(100 * time.Millisecond) // what the old close once idle would take
	if got := greetingOf(t, before); got != "v1" {
		t.Fatalf("work that took the set before the reload got %q from it, want v1", got)
	}
	if err := old.Ready(); err != nil {
		t.Fatalf("the replaced plugin closed while work that took it was under way: %v", err)
	}
	done()
	deadline := time.Now().Add(10 * time.Second)
	for old.Ready() == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := old.Ready(); err == nil {
		t.Error("the replaced module's plugin is still open")
	}
}

func sha256Of(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
