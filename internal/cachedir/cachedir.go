// Package cachedir finds the directory where Trainforge's scripts and
// tests keep, once per machine, what they build: $TRAINFORGE_CACHE, else
// trainforge in the user's cache directory (~/.cache/trainforge), as the
// Makefile and hack/*.sh resolve it.
package cachedir

import (
	"fmt"
	"os"
	"path/filepath"
)

// Root returns the cache's directory; it may not exist yet.
func Root() (string, error) {
	if root := os.Getenv("TRAINFORGE_CACHE"); root != "" {
		return root, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w (set TRAINFORGE_CACHE)", err)
	}
	return filepath.Join(dir, "trainforge"), nil
}
