package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRepoRootIsTheModulesRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if got := modulePath(data); got != Module {
		t.Errorf("go.mod of %s declares %q, want %q", root, got, Module)
	}
}

func TestCRDPathsExist(t *testing.T) {
	paths, err := CRDPaths()
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 {
		t.Errorf("CRDPaths = %v, want Trainforge's, JobSet's and PodGroup's", paths)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}

// Without kube-apiserver and etcd a suite fails, and the error names the
// one command that builds them.
func TestMissingAssetsNameTheFix(t *testing.T) {
	for name, setup := range map[string]func(t *testing.T){
		"KUBEBUILDER_ASSETS without the binaries": func(t *testing.T) {
			t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
		},
		"no KUBEBUILDER_ASSETS and an empty cache": func(t *testing.T) {
			t.Setenv("KUBEBUILDER_ASSETS", "")
			t.Setenv("TRAINFORGE_CACHE", t.TempDir())
		},
	} {
		t.Run(name, func(t *testing.T) {
			setup(t)
			_, err := findAssets()
			if err == nil {
				t.Fatal("findAssets succeeded")
			}
			if !strings.Contains(err.Error(), "`"+AssetsFix+"`") {
				t.Errorf("error %q does not name `%s`", err, AssetsFix)
			}
		})
	}
}

// The cache hack/envtest.sh fills is found without KUBEBUILDER_ASSETS.
func TestAssetsFromTheCache(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Join(cache, "k8s", "v1.37.2-etcd-v3.6.5")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range assetBinaries {
		if err := os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/true\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("KUBEBUILDER_ASSETS", "")
	t.Setenv("TRAINFORGE_CACHE", cache)
	t.Setenv("K8S_VERSION", "v1.37.2")
	t.Setenv("ETCD_VERSION", "v3.6.5")
	got, err := findAssets()
	if err != nil {
		t.Fatal(err)
	}
	if got != dir {
		t.Errorf("findAssets = %s, want %s", got, dir)
	}
}

func TestBinariesAreBuiltOnce(t *testing.T) {
	t.Setenv(BinEnv, "")
	b := NewBinaries("test/plugins/broken")
	defer b.Cleanup()
	first, err := b.Path("test/plugins/broken")
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Path("test/plugins/broken")
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(second)
	if err != nil {
		t.Fatal(err)
	}
	if first != second || !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) {
		t.Errorf("the second Path built again: %s (%v) then %s (%v)", first, before.ModTime(), second, after.ModTime())
	}
	if _, err := b.Path("cmd/trainforge-controller"); err == nil || !strings.Contains(err.Error(), "NewBinaries") {
		t.Errorf("Path of a package not listed: %v, want an error saying to list it", err)
	}
	dir := filepath.Dir(first)
	b.Cleanup()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Cleanup left %s: %v", dir, err)
	}
}

func TestPrebuiltBinaries(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(BinEnv, dir)
	if _, err := NewBinaries("test/plugins/broken").Dir(); err == nil || !strings.Contains(err.Error(), "make test-bin") {
		t.Errorf("%s without the binary: %v, want an error naming make test-bin", BinEnv, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	b := NewBinaries("test/plugins/broken")
	got, err := b.Path("test/plugins/broken")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "broken"); got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
	b.Cleanup()
	if _, err := os.Stat(got); err != nil {
		t.Errorf("Cleanup removed a prebuilt binary: %v", err)
	}
}
