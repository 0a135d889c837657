package cachedir

import (
	"path/filepath"
	"testing"
)

func TestRoot(t *testing.T) {
	t.Setenv("TRAINFORGE_CACHE", "/var/cache/tf")
	if got, err := Root(); err != nil || got != "/var/cache/tf" {
		t.Errorf("with TRAINFORGE_CACHE: %q, %v, want /var/cache/tf", got, err)
	}
	t.Setenv("TRAINFORGE_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/home/u/.cache")
	if got, err := Root(); err != nil || got != filepath.Join("/home/u/.cache", "trainforge") {
		t.Errorf("without TRAINFORGE_CACHE: %q, %v, want /home/u/.cache/trainforge", got, err)
	}
}
