package procnode

import (
	_ "embed"
	"os"
	"path/filepath"
	"strings"
)

// The process nodes have no images: a container runs the host's programs
// (Debian's python3, torch 1.13, xgboost). Where a host program lacks a
// behaviour of the image a runtime names that the runtime relies on, the
// nodes put a stand-in first on every container's PATH, so that the
// runtime's command works here as it would on a real cluster, unchanged.

// torchrun gives Debian's torch 1.13 torchrun the rendezvous keep-alive
// keys of later PyTorch (image/torchrun says which and why).
//
//go:embed image/torchrun
var torchrun []byte

// writeImage writes the stand-ins into dir/image/bin and returns that
// directory.
func writeImage(dir string) (string, error) {
	bin := filepath.Join(dir, "image", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(bin, "torchrun"), torchrun, 0o755); err != nil {
		return "", err
	}
	return bin, nil
}

// imageEnv is baseEnv with the stand-ins of imageBin first on the PATH.
func imageEnv(imageBin string) []string {
	env := append([]string{}, baseEnv...)
	for i, v := range env {
		if path, ok := strings.CutPrefix(v, "PATH="); ok {
			env[i] = "PATH=" + imageBin + ":" + path
		}
	}
	return env
}
