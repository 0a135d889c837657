// Package wasmtest builds Go plugins as WebAssembly modules for tests:
// `GOOS=wasip1 GOARCH=wasm go build` with abi.GoBuildFlags, the one build
// command docs/writing-a-plugin.md gives, once per package and test binary
// run, into a directory of that run.
package wasmtest

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trainforge/trainforge/framework/wasm/abi"
	"github.com/trainforge/trainforge/internal/cachedir"
)

var (
	mu    sync.Mutex
	dir   string
	built = map[string]*module{}
)

type module struct {
	once      sync.Once
	path, sum string
	err       string
}

// Module is a built module: its path and hex sha256.
type Module struct{ Path, SHA256 string }

// Build builds the Go main package pkg (an import path or a directory) as
// a WebAssembly plugin module, or returns the one this run built already.
// It fails t when the build fails, with the compiler's output.
func Build(t testing.TB, pkg string) Module {
	t.Helper()
	mu.Lock()
	if dir == "" {
		d, err := os.MkdirTemp("", "trainforge-wasm-")
		if err != nil {
			mu.Unlock()
			t.Fatal(err)
		}
		dir = d
	}
	m := built[pkg]
	if m == nil {
		m = &module{}
		built[pkg] = m
	}
	out := dir
	mu.Unlock()
	m.once.Do(func() {
		name := strings.NewReplacer("/", "_", ".", "_").Replace(strings.Trim(pkg, "./")) + ".wasm"
		m.path = filepath.Join(out, name)
		args := append(append([]string{"build"}, abi.GoBuildFlags()...), "-o", m.path, pkg)
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if b, err := cmd.CombinedOutput(); err != nil {
			m.err = "GOOS=wasip1 GOARCH=wasm go " + strings.Join(args, " ") + ": " + err.Error() + "\n" + string(b)
			return
		}
		b, err := os.ReadFile(m.path)
		if err != nil {
			m.err = err.Error()
			return
		}
		sum := sha256.Sum256(b)
		m.sum = hex.EncodeToString(sum[:])
	})
	if m.err != "" {
		t.Fatal(m.err)
	}
	return Module{Path: m.path, SHA256: m.sum}
}

// Cleanup removes the modules this run built; call it from TestMain after
// the tests.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		_ = os.RemoveAll(dir)
		dir = ""
		built = map[string]*module{}
	}
}

// CacheDir is the compilation cache (pluginHost.wasmCacheDir) that tests
// of modules share across runs, as the Go build cache is shared: in
// TRAINFORGE_CACHE (default ~/.cache/trainforge), under wasm-compiled/. A
// Go module takes 10 to 30 s of CPU to compile and most tests are not
// about compiling, so only a test of the compilation itself should
// compile with an empty cache of its own. wazero keys each entry by the
// module's contents, its own version and the CPU's features, so a changed
// module or wazero is compiled again. Entries unused for a week are
// removed at the first call of a run. It returns "" (compile in memory)
// when the directory cannot be made.
func CacheDir() string {
	cacheOnce.Do(func() {
		root, err := cachedir.Root()
		if err != nil {
			return
		}
		d := filepath.Join(root, "wasm-compiled")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return
		}
		pruneUnused(d, 7*24*time.Hour)
		cacheDir = d
	})
	return cacheDir
}

var (
	cacheOnce sync.Once
	cacheDir  string
)

// pruneUnused removes the files under dir that nobody read or wrote for
// longer than age, so that the modules of old commits do not pile up (a
// module's machine code is 100 to 200 MB).
func pruneUnused(dir string, age time.Duration) {
	cutoff := time.Now().Add(-age)
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if lastUse(info).Before(cutoff) {
			_ = os.Remove(path)
		}
		return nil
	})
}
