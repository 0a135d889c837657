package testenv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Module is the repository's Go module path.
const Module = "github.com/trainforge/trainforge"

// Each is looked up once per test run.
var (
	repoRoot = sync.OnceValues(findRoot)
	crdPaths = sync.OnceValues(findCRDs)
)

// RepoRoot is the repository's root: the first directory above the
// working directory whose go.mod declares Module. A test runs in its
// package's directory and `go run ./test/load` in the root, so both find
// it.
func RepoRoot() (string, error) { return repoRoot() }

func findRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modulePath(data) == Module {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of %s above %s: run the tests inside the repository", Module, wd)
		}
	}
}

// modulePath is the path of go.mod's module line.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// Path is a path inside the repository.
func Path(elem ...string) (string, error) {
	r, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{r}, elem...)...), nil
}

// The CRDs the controller needs beside its own, from the Go modules of the
// versions the code compiles against (go.mod), which ship them.
var dependencyCRDs = []struct{ module, path string }{
	{"sigs.k8s.io/jobset", "config/components/crd/bases"},
	{"sigs.k8s.io/scheduler-plugins", "manifests/coscheduling/crd.yaml"},
}

// CRDPaths are Trainforge's CRDs (config/crd/bases), JobSet's and
// the coscheduling PodGroup's: what the controller watches.
func CRDPaths() ([]string, error) {
	paths, err := crdPaths()
	return append([]string(nil), paths...), err
}

func findCRDs() ([]string, error) {
	r, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	args := []string{"list", "-m", "-f", "{{.Path}} {{.Dir}}"}
	for _, d := range dependencyCRDs {
		args = append(args, d.module)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = r
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m (to find the CRDs of JobSet and scheduler-plugins): %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	dirs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, dir, ok := strings.Cut(line, " "); ok {
			dirs[path] = dir
		}
	}
	paths := []string{filepath.Join(r, "config", "crd", "bases")}
	for _, d := range dependencyCRDs {
		if dirs[d.module] == "" {
			return nil, fmt.Errorf("module %s is not downloaded: run go mod download", d.module)
		}
		paths = append(paths, filepath.Join(dirs[d.module], filepath.FromSlash(d.path)))
	}
	return paths, nil
}
