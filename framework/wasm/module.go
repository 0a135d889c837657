package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/trainforge/trainforge/framework/wasm/abi"
)

// PageBytes is the size of a WebAssembly memory page.
const PageBytes = 64 << 10

// compiled is a module compiled in a runtime of its own, which holds the
// settings every instance of it shares: the memory limit, the interruption
// of a call whose context ends, WASI and the host's functions.
type compiled struct {
	key     string
	rt      wazero.Runtime
	mod     wazero.CompiledModule
	module  *PreparedModule // what mod was compiled from, and where its instances' memories come from
	refs    int
	compile bool // this entry's module was compiled, not found in the cache (for tests)
}

// cache is the compilation cache: a module is compiled once per checksum
// and memory limit, and its runtime shared by the plugins that use it (an
// entry reloaded with the same module, two entries of one module). Entries
// go when their last plugin closes.
var cache = struct {
	sync.Mutex
	entries map[string]*compiled
	// code are wazero's own caches of machine code, shared by the
	// runtimes, so that the same module under another memory limit is not
	// compiled again either: one in memory (key "") and one per
	// pluginHost.wasmCacheDir, which keeps it for the next process too.
	code map[string]wazero.CompilationCache
}{entries: map[string]*compiled{}, code: map[string]wazero.CompilationCache{"": wazero.NewCompilationCache()}}

// codeCache is the machine-code cache of dir (cache must be locked).
func codeCache(name, dir string) (wazero.CompilationCache, error) {
	if c, ok := cache.code[dir]; ok {
		return c, nil
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wasm plugin %q: pluginHost.wasmCacheDir %s: %w; it must be a directory the controller may write, or empty to compile in memory only", name, dir, err)
	}
	cache.code[dir] = c
	return c, nil
}

// compiles counts the modules compiled (not taken from the cache), for
// tests.
var compiles struct {
	sync.Mutex
	n int
}

// load reads the module at path, checks its checksum against want (hex,
// lower case) and returns it compiled, from the cache when a module of
// that checksum and memory limit is compiled already. name names the
// plugin in errors. cacheDir, when set, keeps the machine code on disk for
// the next process. release must be called when the plugin no longer uses
// it.
func load(ctx context.Context, name, path, want string, pages uint32, cacheDir string) (*compiled, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("wasm plugin %q: reading its module: %w", name, err)
	}
	sum := sha256.Sum256(bin)
	got := hex.EncodeToString(sum[:])
	if got != want {
		return nil, fmt.Errorf("wasm plugin %q: module %s has sha256 %s, but its entry's wasm.sha256 is %s; "+
			"set wasm.sha256 to the module's `sha256sum` once you trust the new module, or restore the module it names", name, path, got, want)
	}
	key := fmt.Sprintf("%s/%d", got, pages)
	cache.Lock()
	defer cache.Unlock()
	if c := cache.entries[key]; c != nil {
		c.refs++
		return c, nil
	}
	code, err := codeCache(name, cacheDir)
	if err != nil {
		return nil, err
	}
	prepared := PrepareModule(bin, pages)
	rt := wazero.NewRuntimeWithConfig(ctx, prepared.RuntimeConfig(pages).WithCompilationCache(code))
	fail := func(err error) (*compiled, error) {
		_ = rt.Close(ctx)
		_ = prepared.Close()
		return nil, err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fail(fmt.Errorf("wasm plugin %q: WASI: %w", name, err))
	}
	if _, err := rt.NewHostModuleBuilder(abi.HostModule).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostLog), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, nil).
		WithParameterNames("ptr", "len").Export(abi.LogImport).
		Instantiate(ctx); err != nil {
		return fail(fmt.Errorf("wasm plugin %q: the host's functions: %w", name, err))
	}
	mod, err := prepared.Compile(ctx, rt)
	if err != nil {
		return fail(fmt.Errorf("wasm plugin %q: module %s is not a WebAssembly module wazero can compile: %w", name, path, err))
	}
	if err := checkModule(mod); err != nil {
		return fail(fmt.Errorf("wasm plugin %q: module %s: %w", name, path, err))
	}
	compiles.Lock()
	compiles.n++
	compiles.Unlock()
	c := &compiled{key: key, rt: rt, mod: mod, module: prepared, refs: 1, compile: true}
	cache.entries[key] = c
	// The compilation's garbage (several hundred MiB for a Go module)
	// would otherwise stay in the process until the runtime's scavenger
	// returns it, minutes later, while the instances start beside it.
	debug.FreeOSMemory()
	return c, nil
}

// release drops one plugin's use of c; the last closes its runtime.
func (c *compiled) release(ctx context.Context) {
	cache.Lock()
	defer cache.Unlock()
	c.refs--
	if c.refs > 0 {
		return
	}
	delete(cache.entries, c.key)
	_ = c.rt.Close(ctx)
	_ = c.module.Close()
}

// checkModule refuses a module that is not a plugin of this host's ABI,
// before anything of it runs, saying what it is instead.
func checkModule(mod wazero.CompiledModule) error {
	exports := mod.ExportedFunctions()
	_, command := exports[abi.CommandExport]
	_, reactor := exports[abi.InitializeExport]
	if command && !reactor {
		return fmt.Errorf("it is a WASI command (built without -buildmode=c-shared), whose instance ends when its main returns; " +
			"build it with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared")
	}
	if _, ok := exports[abi.CallExport]; !ok {
		return fmt.Errorf("it exports no %s: it is not a Trainforge plugin (the SDK's sdk.Serve exports it when built with GOOS=wasip1)", abi.CallExport)
	}
	var missing []string
	for _, name := range []string{abi.InitializeExport, abi.VersionExport, abi.StartExport, abi.MallocExport, abi.FreeExport} {
		if _, ok := exports[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("it does not export %s, which the Trainforge plugin ABI %d needs", strings.Join(missing, ", "), abi.Version)
	}
	for _, f := range mod.ImportedFunctions() {
		m, n, _ := f.Import()
		switch {
		case m == wasi_snapshot_preview1.ModuleName:
		case m == abi.HostModule && n == abi.LogImport:
		default:
			return fmt.Errorf("it imports %s.%s, which this host does not give (it gives WASI and %s.%s only)", m, n, abi.HostModule, abi.LogImport)
		}
	}
	return nil
}

// sinkKey is the context key of the log sink of the instance a call runs
// on: the host's log function and stderr of one instance write there.
type sinkKey struct{}

// hostLog is the host's log function: (ptr, len) of log lines in the
// guest's memory.
func hostLog(ctx context.Context, m api.Module, stack []uint64) {
	s, _ := ctx.Value(sinkKey{}).(*logSink)
	if s == nil {
		return
	}
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	n = min(n, maxLogWrite)
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		return
	}
	_, _ = s.Write(b)
}

// maxLogWrite bounds the bytes one call of the log function passes on.
const maxLogWrite = 64 << 10
