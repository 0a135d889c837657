package wasmtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPruneUnused removes the cache's entries unused for longer than the
// age and keeps the others.
func TestPruneUnused(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "wazero-v1-amd64-linux")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	old, recent := filepath.Join(sub, "old"), filepath.Join(sub, "recent")
	for _, f := range []string{old, recent} {
		if err := os.WriteFile(f, []byte("code"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	pruneUnused(dir, 7*24*time.Hour)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("an entry unused for 30 days is still there (%v)", err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("an entry written now was removed: %v", err)
	}
}
