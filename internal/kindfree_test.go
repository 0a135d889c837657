// Package internal_test holds the line that the controller's core knows
// no object kind that plugins build: the kinds are the plugins' (the
// built-ins in builtin/, vendors' in their own binaries), and the core
// reaches them only through the framework. A file of internal/ that
// imports a workload's API package would make that kind the core's.
package internal_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pluginKinds are the API modules of the kinds plugins build or read.
var pluginKinds = []string{
	"sigs.k8s.io/jobset",
	"sigs.k8s.io/scheduler-plugins",
	"sigs.k8s.io/kueue",
	"volcano.sh/apis",
}

func TestTheCoreImportsNoPluginKind(t *testing.T) {
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, kind := range pluginKinds {
				if p == kind || strings.HasPrefix(p, kind+"/") {
					t.Errorf("internal/%s imports %s: the core knows no kind a plugin builds; read it unstructured, or have the plugin that builds it say what the core needs (its Watch, its Build answer)", path, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("found %d Go files under internal/: the test runs from the wrong directory and checks nothing", files)
	}
}
