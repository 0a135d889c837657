package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// AssetsFix is the one command that makes kube-apiserver and etcd
// available; every suite's error for missing assets names it.
const AssetsFix = "make envtest"

// assetBinaries are what envtest runs from the assets directory.
var assetBinaries = []string{"kube-apiserver", "etcd"}

var assets = sync.OnceValues(findAssets)

// Assets is the directory of kube-apiserver and etcd: KUBEBUILDER_ASSETS
// when set, else hack/envtest.sh's cache when it has both. When they are
// not there it returns an error that says to run AssetsFix (it builds them
// from the Go module proxy, once, into the cache the second case reads), so
// that a suite fails, rather than skips, on a machine without them.
func Assets() (string, error) { return assets() }

func findAssets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		for _, b := range assetBinaries {
			if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
				return "", fmt.Errorf("KUBEBUILDER_ASSETS=%s has no %s: run `%s` and set KUBEBUILDER_ASSETS=$(hack/envtest.sh), or unset it", dir, b, AssetsFix)
			}
		}
		return dir, nil
	}
	script, err := Path("hack", "envtest.sh")
	if err != nil {
		return "", err
	}
	// --missing builds nothing: a test never starts a build of minutes.
	missing, err := runScript(script, "--missing")
	if err != nil {
		return "", err
	}
	if missing != "" {
		return "", fmt.Errorf("kube-apiserver and etcd are not built (KUBEBUILDER_ASSETS is not set and hack/envtest.sh's cache lacks %s): run `%s` once; it builds them from the Go module proxy into the cache, where every suite finds them",
			strings.Join(strings.Fields(missing), " and "), AssetsFix)
	}
	return runScript(script)
}

func runScript(script string, args ...string) (string, error) {
	cmd := exec.Command(script, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", script, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
