package plugins_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What a WebAssembly guest (GOOS=wasip1) must not link. Each costs a
// module megabytes that it never runs, and seconds of compilation in the
// controller; docs/benchmarks.md ("WebAssembly modules") has the figures.
var (
	// guestForbidden are trees no guest depends on, at any depth:
	// gRPC and go-plugin serve a plugin process (sdk/serve.go), Prometheus
	// counts the host's calls (framework/runtime/metrics.go), strategic merge makes
	// Info, which is the host's work (framework/strategicmerge.go), and
	// text/template and html/template look methods up by name, which makes
	// Go's linker keep every exported method of every type (16 MB in the
	// Flux plugin once).
	guestForbidden = []string{
		"google.golang.org/grpc",
		"github.com/hashicorp/go-plugin",
		"github.com/prometheus",
		"k8s.io/apimachinery/pkg/util/strategicpatch",
		"text/template",
		"html/template",
	}
	// guestAllowed are the exceptions to guestForbidden, with what they
	// import: the protocol's error codes and statuses, which a guest
	// answers with (about 20 KB of code, no transport).
	guestAllowed = []string{"google.golang.org/grpc/codes", "google.golang.org/grpc/status"}
	// guestFloorOnly are trees a guest may reach only as the Kubernetes API
	// types reach them, which no plugin can do without: net/http comes
	// with k8s.io/apimachinery (util/runtime, util/net), so the test
	// allows the imports of it that the API packages (api/trainer/...)
	// make themselves, and fails on any other, such as a plugin's or the
	// SDK's own.
	guestFloorOnly = []string{"net/http", "crypto/tls"}
	// guestFloor are the packages whose dependencies are the floor.
	guestFloor = "./api/trainer/..."
)

// TestWasmPluginsLinkNoHostPackages fails when a vendor plugin built as a
// WebAssembly module (the commands of pluginBinaries and the example,
// which make wasm-bin builds) depends on a package of guestForbidden, or
// imports a package of guestFloorOnly other than through the API types,
// and names the chain of imports that leads there.
func TestWasmPluginsLinkNoHostPackages(t *testing.T) {
	module := strings.TrimSpace(goList(t, "-m"))
	var roots []string
	for _, pattern := range []string{pluginBinaries, examplePlugin} {
		for _, p := range packagesWithCode(t, pattern) {
			if !slices.Contains(hosts, strings.TrimPrefix(p, module+"/")) {
				roots = append(roots, p)
			}
		}
	}
	if len(roots) < 2 {
		t.Fatalf("found %d plugin commands; the plugins moved, and this test would check nothing", len(roots))
	}
	if diff := cmp.Diff(relative(roots, module), makefileWasmPlugins(t)); diff != "" {
		t.Errorf("the Makefile's WASM_PLUGINS are not the vendor plugins' commands and the example (-commands +WASM_PLUGINS):\n%s", diff)
	}

	imports := importGraph(t, roots, wasip1...)
	floor := map[string]bool{}
	for _, p := range strings.Fields(goListEnv(t, wasip1, "-deps", guestFloor)) {
		floor[p] = true
	}
	for _, root := range roots {
		for _, chain := range guestChains(root, imports, floor) {
			t.Errorf("%s built for WebAssembly (GOOS=wasip1) reaches %s, which a guest must not link:\n\t%s",
				strings.TrimPrefix(root, module+"/"), chain[len(chain)-1], shorten(chain, module))
		}
	}
}

// wasip1 is the environment of a guest's build, for goList.
var wasip1 = []string{"GOOS=wasip1", "GOARCH=wasm"}

// guestChains returns, for each package root reaches that a guest must
// not link, the shortest chain of imports from root to it: a package of
// guestForbidden (not of guestAllowed, nor imported by one), or a package
// of guestFloorOnly imported by a package outside the floor.
func guestChains(root string, imports map[string][]string, floor map[string]bool) [][]string {
	allowed := map[string]bool{}
	var allow func(string)
	allow = func(p string) {
		if !allowed[p] {
			allowed[p] = true
			for _, next := range imports[p] {
				allow(next)
			}
		}
	}
	for _, p := range guestAllowed {
		if _, ok := imports[p]; ok {
			allow(p)
		}
	}
	parent := map[string]string{root: ""}
	queue := []string{root}
	var chains [][]string
	chain := func(last string, from string) []string {
		c := []string{last}
		for p := from; p != ""; p = parent[p] {
			c = append(c, p)
		}
		slices.Reverse(c)
		return c
	}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if inTrees(pkg, guestForbidden) && !allowed[pkg] {
			chains = append(chains, chain(pkg, parent[pkg]))
			continue
		}
		for _, next := range imports[pkg] {
			if inTrees(next, guestFloorOnly) && !inTrees(pkg, guestFloorOnly) && !floor[pkg] {
				chains = append(chains, chain(next, pkg))
			}
			if _, seen := parent[next]; !seen {
				parent[next] = pkg
				queue = append(queue, next)
			}
		}
	}
	slices.SortFunc(chains, func(a, b []string) int {
		return strings.Compare(strings.Join(a, " "), strings.Join(b, " "))
	})
	return chains
}

// inTrees says whether pkg is one of trees or under one.
func inTrees(pkg string, trees []string) bool {
	return slices.ContainsFunc(trees, func(tree string) bool { return pkg == tree || strings.HasPrefix(pkg, tree+"/") })
}

// TestGuestChains shows what the guest's check reports: a forbidden
// package at any depth, but not the allowed ones nor what they import;
// net/http through the floor, but not imported by anything else.
func TestGuestChains(t *testing.T) {
	const m = "example.com/tf"
	imports := map[string][]string{
		m + "/cmd/a":                           {m + "/plugins/a", m + "/sdk"},
		m + "/sdk":                             {m + "/framework/remote", "github.com/hashicorp/go-hclog"},
		m + "/framework/remote":                {"google.golang.org/grpc/status", m + "/api/v1", "google.golang.org/grpc"},
		"google.golang.org/grpc/status":        {"google.golang.org/grpc/codes", "google.golang.org/grpc/internal"},
		"google.golang.org/grpc":               {"net/http", "golang.org/x/net/http2"},
		m + "/plugins/a":                       {m + "/api/v1", "net/http/httptrace", "text/template"},
		m + "/api/v1":                          {"k8s.io/apimachinery/pkg/util/runtime"},
		"k8s.io/apimachinery/pkg/util/runtime": {"net/http"},
		"net/http":                             {"crypto/tls", "net/http/httptrace"},
		"net/http/httptrace":                   {"crypto/tls"},
	}
	floor := map[string]bool{m + "/api/v1": true, "k8s.io/apimachinery/pkg/util/runtime": true, "net/http": true, "crypto/tls": true}
	var got []string
	for _, c := range guestChains(m+"/cmd/a", imports, floor) {
		got = append(got, shorten(c, m))
	}
	want := []string{
		"cmd/a → plugins/a → net/http/httptrace",
		"cmd/a → plugins/a → text/template",
		"cmd/a → sdk → framework/remote → google.golang.org/grpc",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
}

// makefileWasmPlugins returns the packages of the Makefile's WASM_PLUGINS,
// which make wasm-bin builds, relative to the module's root.
func makefileWasmPlugins(t *testing.T) []string {
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^WASM_PLUGINS\s*:?=((?:.*\\\n)*.*)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Makefile has no WASM_PLUGINS")
	}
	var out []string
	for _, f := range strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " ")) {
		out = append(out, strings.TrimPrefix(f, "./"))
	}
	slices.Sort(out)
	return out
}

// relative returns the packages relative to the module's root, sorted.
func relative(pkgs []string, module string) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = strings.TrimPrefix(p, module+"/")
	}
	slices.Sort(out)
	return out
}
