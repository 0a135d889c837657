package v1alpha1

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// valueFields walks t and returns the paths, as YAML keys with [0] for a
// list's first entry, of every metav1.Duration and resource.Quantity field.
func valueFields(t reflect.Type, prefix []string) [][]string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			prefix = append(append([]string(nil), prefix...), "[0]")
		}
		t = t.Elem()
	}
	if t == durationType || t == quantityType {
		return [][]string{prefix}
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out [][]string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "" && f.Anonymous:
			out = append(out, valueFields(f.Type, prefix)...)
		case name != "" && name != "-":
			out = append(out, valueFields(f.Type, append(append([]string(nil), prefix...), name))...)
		}
	}
	return out
}

// docWith is a configuration, as YAML, with value at path.
func docWith(path []string, value string) string {
	var doc any = value
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == "[0]" {
			doc = []any{doc}
			continue
		}
		doc = map[string]any{path[i]: doc}
	}
	out, _ := yaml.Marshal(doc)
	return string(out)
}

// Every duration and quantity field of the types is checked by the
// decoder, named by its path: the list of them comes from the types, so
// a new one needs no entry anywhere.
func TestEveryDurationAndQuantityIsNamed(t *testing.T) {
	paths := valueFields(reflect.TypeOf(Configuration{}), nil)
	if len(paths) < 8 {
		t.Fatalf("found %d duration and quantity fields, want the 8 or more the types have: %q", len(paths), paths)
	}
	for _, p := range paths {
		name := strings.ReplaceAll(strings.Join(p, "."), ".[0]", "[0]")
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(docWith(p, "soon")))
			if err == nil || !strings.Contains(err.Error(), name+`: Invalid value: "soon": must be a `) {
				t.Errorf("Decode with %s: soon: %v, want an error naming %s", name, err, name)
			}
		})
	}
}

func TestBadValuesAreShownAsWritten(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"plugins:\n- name: MPI\n  external: {command: /mpi, callTimeout: 5}\n", `plugins[0].external.callTimeout: Invalid value: "5": must be a duration string such as 500ms, 10s or 1m`},
		{"plugins:\n- name: MPI\n  external: {command: /mpi, callTimeout: 2.5}\n", `plugins[0].external.callTimeout: Invalid value: "2.5": must be a duration string`},
		{"statusServer: {minUpdateInterval: true}\n", `statusServer.minUpdateInterval: Invalid value: "true": must be a duration string`},
		{"pluginHost: {wasmMemoryBudget: lots}\n", `pluginHost.wasmMemoryBudget: Invalid value: "lots": must be a quantity of bytes such as 64Mi, 128Mi or 1Gi`},
		{"pluginHost: {restartBackoff: {initial: 1x, max: 2y}}\n", `[pluginHost.restartBackoff.initial: Invalid value: "1x": must be a duration string such as 500ms, 10s or 1m, pluginHost.restartBackoff.max: Invalid value: "2y": must be a duration string such as 500ms, 10s or 1m]`},
	} {
		_, err := Decode([]byte(hdrOf(tc.doc)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode of %q: %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func hdrOf(doc string) string {
	return "apiVersion: config.trainforge.dev/v1alpha1\nkind: Configuration\n" + doc
}

// Defaulting reads no file: the controller's namespace is given to it
// (Load reads it from the file it is given).
func TestDefaultsInANamespace(t *testing.T) {
	dir := t.TempDir()
	nsFile := filepath.Join(dir, "namespace")
	if err := os.WriteFile(nsFile, []byte("ml-system\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := PodNamespace(nsFile); got != "ml-system" {
		t.Errorf("PodNamespace = %q, want ml-system", got)
	}
	if got := PodNamespace(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("PodNamespace of no file = %q, want empty", got)
	}

	cfgFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgFile, []byte(hdrOf("webhook:\n  certManagement: {}\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadIn(cfgFile, "ml-system", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cfg.Webhook.CertManagement.Namespace, cfg.StatusServer.ServiceNamespace, ControllerNamespace(cfg)}
	if diff := cmp.Diff([]string{"ml-system", "ml-system", "ml-system"}, got); diff != "" {
		t.Errorf("certManagement.namespace, statusServer.serviceNamespace, ControllerNamespace (-want +got):\n%s", diff)
	}

	// Outside a pod: leaderElection's namespace, else trainforge-system.
	plain := &Configuration{}
	SetDefaults(plain)
	if plain.StatusServer.ServiceNamespace != "trainforge-system" || ControllerNamespace(plain) != "trainforge-system" {
		t.Errorf("namespaces without one given: %q, %q; want trainforge-system", plain.StatusServer.ServiceNamespace, ControllerNamespace(plain))
	}
	le := &Configuration{LeaderElection: LeaderElectionConfig{ResourceNamespace: "leases"}}
	SetDefaults(le)
	if le.StatusServer.ServiceNamespace != "leases" || ControllerNamespace(le) != "leases" {
		t.Errorf("namespaces with leaderElection.resourceNamespace: %q, %q; want leases", le.StatusServer.ServiceNamespace, ControllerNamespace(le))
	}
	// A namespace given in the file wins over the one the controller runs in.
	set := &Configuration{Webhook: WebhookConfig{CertManagement: &CertManagement{Namespace: "certs"}}}
	SetDefaultsIn(set, "ml-system")
	if set.StatusServer.ServiceNamespace != "certs" || ControllerNamespace(set) != "certs" {
		t.Errorf("namespaces with certManagement.namespace: %q, %q; want certs", set.StatusServer.ServiceNamespace, ControllerNamespace(set))
	}
}
