// Package plugins_test keeps the vendor-style plugins honest: they prove
// that a third party can write a Trainforge plugin with the SDK alone, which
// holds only while they import nothing that a third party cannot, and
// only the plugin authors' surface of this module (docs/writing-a-plugin.md):
// package framework (what a plugin is written with), package sdk (how it
// is served) and api/. Neither they nor the SDK link the framework's
// runtime (framework/runtime), which runs plugins in a host.
package plugins_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The patterns that find every vendor-style plugin and its binary, so that
// a plugin added later is checked without changing this test.
var (
	pluginPackages = "./plugins/..."
	pluginBinaries = "./cmd/trainforge-plugin-..."
	// The example of docs/writing-a-plugin.md, held to the same rules.
	examplePlugin = "./examples/plugins/sharedmemory"
	// The SDK, which serves and tests a plugin: part of the surface, and
	// held to forbidden and hostOnly like a plugin.
	sdkPackages = "./sdk/..."
)

// surface are the packages of the module a plugin may import itself; a
// tree ends in "/...".
var surface = []string{"framework", "sdk", "api/..."}

// hosts are matched by pluginBinaries but run plugins rather than serve
// one: the conformance tool is the host's side (it starts plugins with
// framework/external and framework/wasm), held only to forbidden.
var hosts = []string{"cmd/trainforge-plugin-conformance"}

// forbidden are the trees of the module a vendor plugin, the SDK or a host
// of pluginBinaries must not reach, directly or through another package.
var forbidden = []string{"builtin", "internal"}

// hostOnly are the trees of the module that only a host links: the
// framework's runtime, which runs plugins (the plugin set, the cycle, the
// runtime's Prometheus metrics). A vendor plugin and the SDK are written
// and served with package framework's interfaces and Info alone, as a
// kube-scheduler plugin imports its framework and not framework/runtime.
var hostOnly = []string{"framework/runtime"}

// hostOnlyLibraries are the libraries that only the runtime links among
// what a plugin could reach: Prometheus' client counts the host's calls
// (framework/runtime/metrics.go). Checked too, so that the runtime's code
// is caught wherever it is, not only under its package's path.
var hostOnlyLibraries = []string{"github.com/prometheus"}

// TestPluginsImportOnlyPublicPackages fails when a plugin package or
// binary, or a package of the SDK, depends, at any depth, on a package
// under builtin/ or internal/, or (a host excepted) on the framework's
// runtime, and names the chain of imports that leads there.
func TestPluginsImportOnlyPublicPackages(t *testing.T) {
	module := strings.TrimSpace(goList(t, "-m"))
	var roots, sdk []string
	for _, pattern := range []string{pluginPackages, pluginBinaries, examplePlugin, sdkPackages} {
		found := packagesWithCode(t, pattern)
		if len(found) == 0 {
			t.Fatalf("%s matched no package with Go code: the plugins moved, or the pattern is wrong, and this test would check nothing", pattern)
		}
		roots = append(roots, found...)
		if pattern == sdkPackages {
			sdk = found
		}
	}

	imports := importGraph(t, roots)
	for _, root := range roots {
		rel := strings.TrimPrefix(root, module+"/")
		for _, chain := range forbiddenChains(root, imports, underModule(module, forbidden)) {
			t.Errorf("%s must import only sdk/, api/, framework's public packages and public libraries, but reaches %s:\n\t%s",
				rel, strings.TrimPrefix(chain[len(chain)-1], module+"/"), shorten(chain, module))
		}
		if slices.Contains(hosts, rel) {
			continue
		}
		for _, chain := range forbiddenChains(root, imports, hostOnlyTrees(module)) {
			t.Errorf("%s must not link the framework's runtime, which runs plugins in a host (a plugin implements package framework's interfaces; docs/architecture.md), but reaches %s:\n\t%s",
				rel, strings.TrimPrefix(chain[len(chain)-1], module+"/"), shorten(chain, module))
		}
		if slices.Contains(sdk, root) {
			continue
		}
		for _, imp := range offSurface(imports[root], module) {
			t.Errorf("%s imports %s; a plugin is written with framework, served with sdk and reads api/ (docs/writing-a-plugin.md), and imports no other package of this module",
				strings.TrimPrefix(root, module+"/"), strings.TrimPrefix(imp, module+"/"))
		}
	}
}

// offSurface returns the packages of the module among imports that are
// not on the plugin authors' surface; a plugin's own packages (under
// plugins/) may import each other.
func offSurface(imports []string, module string) []string {
	var out []string
	for _, imp := range imports {
		rel, ok := strings.CutPrefix(imp, module+"/")
		if !ok || strings.HasPrefix(rel, "plugins/") {
			continue
		}
		if !slices.ContainsFunc(surface, func(s string) bool {
			tree, isTree := strings.CutSuffix(s, "/...")
			return rel == s || (isTree && (rel == tree || strings.HasPrefix(rel, tree+"/")))
		}) {
			out = append(out, imp)
		}
	}
	return out
}

// TestOffSurface shows that only a plugin's direct imports of the
// module's packages off the surface are reported.
func TestOffSurface(t *testing.T) {
	const m = "example.com/tf"
	got := offSurface([]string{m + "/framework", m + "/framework/remote", m + "/sdk", m + "/sdk/sdktest", m + "/api/trainer/v1alpha1",
		m + "/plugins/mpi", m + "/proto/trainforge/plugin/v1", "k8s.io/api/core/v1", m + "/apiextra"}, m)
	want := []string{m + "/framework/remote", m + "/sdk/sdktest", m + "/proto/trainforge/plugin/v1", m + "/apiextra"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offSurface (-want +got):\n%s", diff)
	}
}

// TestForbiddenChains shows that the check finds a forbidden package at
// any depth, names the shortest chain, stops at the first forbidden
// package of a chain, and lets public packages (even one whose name starts
// like a forbidden tree) through.
func TestForbiddenChains(t *testing.T) {
	const m = "example.com/tf"
	imports := map[string][]string{
		m + "/cmd/trainforge-plugin-a": {m + "/plugins/a", m + "/sdk"},
		m + "/plugins/a":               {m + "/framework", m + "/sdk", "k8s.io/api/core/v1", m + "/plugins/b"},
		m + "/plugins/b":               {m + "/builtin"},
		m + "/sdk":                     {m + "/framework"},
		m + "/framework":               {m + "/internal/secret", "fmt"},
		m + "/internal/secret":         {m + "/builtin/torch"},
		m + "/builtin/torch":           nil,
		m + "/plugins/clean":           {m + "/api/trainer/v1alpha1", "fmt"},
		m + "/plugins/builtinlike":     {m + "/builtinlike"},
	}
	got := map[string][]string{}
	for _, root := range []string{m + "/cmd/trainforge-plugin-a", m + "/plugins/clean", m + "/plugins/builtinlike"} {
		for _, chain := range forbiddenChains(root, imports, underModule(m, forbidden)) {
			got[root] = append(got[root], shorten(chain, m))
		}
	}
	want := map[string][]string{
		m + "/cmd/trainforge-plugin-a": {
			"cmd/trainforge-plugin-a → plugins/a → plugins/b → builtin",
			"cmd/trainforge-plugin-a → plugins/a → framework → internal/secret",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
}

// TestHostOnlyChains shows that the runtime's check finds the runtime
// behind any public package (the SDK's, or framework's own subpackages),
// and its subpackages too, but not a package that only starts like it;
// and the runtime's metrics in a package that holds runtime code outside
// framework/runtime, as package framework did before it was split.
func TestHostOnlyChains(t *testing.T) {
	const m = "example.com/tf"
	imports := map[string][]string{
		m + "/sdk":                           {m + "/framework/remote", m + "/framework"},
		m + "/framework/remote":              {m + "/framework", m + "/framework/runtime"},
		m + "/framework/runtime":             {m + "/framework"},
		m + "/sdk/sdktest":                   {m + "/framework/frameworktest", m + "/framework/runtime/runtimetest"},
		m + "/framework/runtime/runtimetest": {m + "/framework/runtime"},
		m + "/plugins/a":                     {m + "/framework", m + "/framework/runtimeish"},
		m + "/framework/runtimeish":          nil,
		m + "/framework/frameworktest":       {m + "/framework"},
		m + "/plugins/b":                     {m + "/framework/unsplit"},
		m + "/framework/unsplit":             {"github.com/prometheus/client_golang/prometheus"},
		m + "/cmd/trainforge-plugin-a":       {m + "/plugins/a", m + "/sdk"},
	}
	got := map[string][]string{}
	for _, root := range []string{m + "/sdk", m + "/sdk/sdktest", m + "/plugins/a", m + "/plugins/b", m + "/cmd/trainforge-plugin-a"} {
		for _, chain := range forbiddenChains(root, imports, hostOnlyTrees(m)) {
			got[root] = append(got[root], shorten(chain, m))
		}
	}
	want := map[string][]string{
		m + "/sdk":                     {"sdk → framework/remote → framework/runtime"},
		m + "/sdk/sdktest":             {"sdk/sdktest → framework/runtime/runtimetest"},
		m + "/plugins/b":               {"plugins/b → framework/unsplit → github.com/prometheus/client_golang/prometheus"},
		m + "/cmd/trainforge-plugin-a": {"cmd/trainforge-plugin-a → sdk → framework/remote → framework/runtime"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
}

// goList runs go list in the module's root and returns its output.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	return goListEnv(t, nil, args...)
}

// goListEnv runs go list with env added to the environment (GOOS=wasip1).
func goListEnv(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = ".."
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// packagesWithCode lists the packages of a pattern that hold Go code
// besides tests (this test's own package holds only tests).
func packagesWithCode(t *testing.T, pattern string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(goList(t, "-f", "{{.ImportPath}} {{len .GoFiles}}", pattern)), "\n") {
		if path, n, ok := strings.Cut(line, " "); ok && n != "0" {
			out = append(out, path)
		}
	}
	return out
}

// importGraph returns, for each package the roots depend on, the packages
// it imports directly (tests excluded: they do not ship), when built with
// env added to the environment.
func importGraph(t *testing.T, roots []string, env ...string) map[string][]string {
	graph := map[string][]string{}
	out := goListEnv(t, env, append([]string{"-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, roots...)...)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		graph[fields[0]] = fields[1:]
	}
	return graph
}

// forbiddenChains returns, for each package of trees that root reaches
// through packages outside them, the shortest chain of imports from root
// to it, in a stable order.
func forbiddenChains(root string, imports map[string][]string, trees []string) [][]string {
	parent := map[string]string{root: ""}
	queue := []string{root}
	var chains [][]string
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if inTrees(pkg, trees) {
			chain := []string{pkg}
			for p := parent[pkg]; p != ""; p = parent[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			chains = append(chains, chain)
			// What it imports in turn is its own business, and would
			// only bury the import that matters.
			continue
		}
		for _, next := range imports[pkg] {
			if _, seen := parent[next]; !seen {
				parent[next] = pkg
				queue = append(queue, next)
			}
		}
	}
	slices.SortFunc(chains, func(a, b []string) int { return strings.Compare(a[len(a)-1], b[len(b)-1]) })
	return chains
}

// hostOnlyTrees are the trees of hostOnly and hostOnlyLibraries as import
// paths.
func hostOnlyTrees(module string) []string {
	return append(underModule(module, hostOnly), hostOnlyLibraries...)
}

// underModule returns the module's trees of rel as import paths.
func underModule(module string, rel []string) []string {
	out := make([]string, len(rel))
	for i, tree := range rel {
		out[i] = module + "/" + tree
	}
	return out
}

// shorten writes a chain with the module's packages relative to its root.
func shorten(chain []string, module string) string {
	short := make([]string, len(chain))
	for i, p := range chain {
		short[i] = strings.TrimPrefix(p, module+"/")
	}
	return strings.Join(short, " → ")
}
