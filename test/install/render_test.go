package install

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/trainforge/trainforge/test/testenv"
)

// repoRoot is the repository's root.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// kustomizeBuild builds a kustomization of the repository (a path such as
// config/default) as `kustomize build` does, with kustomize as a library.
func kustomizeBuild(t testing.TB, path string) []byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(repoRoot(t), path))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", path, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", path, err)
	}
	return out
}

var (
	helmOnce sync.Once
	helmPath string
	helmErr  error
)

// helm returns the Helm binary: $HELM when set (make test-install sets
// it), else what `make helm` prints: the Makefile's Helm version, built from
// the Go module proxy into the tools cache when missing.
func helm(t testing.TB) string {
	t.Helper()
	helmOnce.Do(func() {
		if p := os.Getenv("HELM"); p != "" {
			helmPath = p
			return
		}
		cmd := exec.Command("make", "--no-print-directory", "-s", "-C", repoRoot(t), "helm")
		out, err := cmd.Output()
		if err != nil {
			helmErr = fmt.Errorf("make helm: %v\n%s", err, out)
			return
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		helmPath = lines[len(lines)-1]
	})
	if helmErr != nil {
		t.Fatal(helmErr)
	}
	return helmPath
}

// helmTemplate renders the chart as `helm template trainforge charts/trainforge
// --namespace trainforge-system -f <values file>...`; a values file is a path
// relative to the repository's root.
func helmTemplate(t testing.TB, valuesFiles ...string) []byte {
	t.Helper()
	out, err := helmTemplateErr(t, nil, valuesFiles...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func helmTemplateErr(t testing.TB, set []string, valuesFiles ...string) ([]byte, error) {
	t.Helper()
	root := repoRoot(t)
	// The Kubernetes version of the envtest API server (hack/envtest.sh).
	args := []string{"template", "trainforge", filepath.Join(root, "charts", "trainforge"), "--namespace", "trainforge-system", "--include-crds", "--kube-version", "v1.37.2"}
	for _, f := range valuesFiles {
		args = append(args, "-f", filepath.Join(root, f))
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(helm(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Helm keeps a cache and configuration of its own; none of the user's.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// objects splits a multi-document YAML stream into objects, skipping
// empty documents.
func objects(t testing.TB, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("decoding rendered YAML: %v", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, u)
	}
	return objs
}
