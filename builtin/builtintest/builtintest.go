// Package builtintest is what tests of the built-in plugins' callers share:
// a framework of the built-ins, and the repository's example manifests as
// JSON, the real inputs that fuzz targets start from.
package builtintest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/trainforge/trainforge/builtin"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// Pipeline are the built-ins a reconcile's Enforce and Build phases run,
// in the default order.
var Pipeline = []string{"PlainML", "Torch", "JobSet", "Coscheduling"}

// Framework returns a framework of the built-ins named, in that order, in
// the test's process.
func Framework(tb testing.TB, names ...string) *frameworkruntime.Framework {
	tb.Helper()
	specs := make([]frameworkruntime.PluginSpec, 0, len(names))
	for _, n := range names {
		specs = append(specs, frameworkruntime.PluginSpec{Name: n})
	}
	fw, err := frameworkruntime.New(context.Background(), builtin.Registry(), specs)
	if err != nil {
		tb.Fatal(err)
	}
	return fw
}

// ExampleDocs returns the JSON of every document of one of kinds in the
// example manifests under examples (the repository's examples/ directory,
// relative to the test's package): jobs, runtimes and seed, in file order.
// It fails the test when there is none.
func ExampleDocs(tb testing.TB, examples string, kinds ...string) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, dir := range []string{"jobs", "runtimes", "seed"} {
		files, err := filepath.Glob(filepath.Join(examples, dir, "*.yaml"))
		if err != nil {
			tb.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				tb.Fatal(err)
			}
			for _, doc := range strings.Split(string(data), "\n---") {
				j, err := yaml.YAMLToJSON([]byte(doc))
				if err != nil {
					tb.Fatalf("%s: %v", file, err)
				}
				var meta struct{ Kind string }
				if json.Unmarshal(j, &meta) == nil && slices.Contains(kinds, meta.Kind) {
					out = append(out, j)
				}
			}
		}
	}
	if len(out) == 0 {
		tb.Fatalf("no example of %v in %s", kinds, examples)
	}
	return out
}
