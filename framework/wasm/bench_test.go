package wasm

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
)

// The benchmarks measure one call of the everypoint module through the
// protocol's client, as the framework makes it: request encoding, the
// guest's decoding, the plugin, its answer and the host's checks.

func benchPlugin(b *testing.B) *Plugin {
	b.Helper()
	m := wasmtest.Build(b, everypointPkg)
	opts, _ := options(m, "EveryPoint")
	opts.PluginArgs = json.RawMessage(`{"greeting":"bench"}`)
	p, err := Start(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Close)
	return p
}

func BenchmarkEnforceMLPolicy(b *testing.B) {
	p := benchPlugin(b)
	job := testJob("llm")
	b.ResetTimer()
	for b.Loop() {
		if err := p.Client().EnforceMLPolicy(context.Background(), testInfo(), job); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuild(b *testing.B) {
	p := benchPlugin(b)
	job := testJob("llm")
	info := testInfo()
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Client().Build(context.Background(), info, job); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	p := benchPlugin(b)
	req := framework.ValidateRequest{Info: testInfo(), NewJob: testJob("llm")}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := p.Client().Validate(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInstanceStart measures the start of one more instance, the
// module compiled already: from=start runs the module's initialisation
// (Go's runtime), its main and Configure, as the first instance's start;
// from=save starts it from the saved first instance (snapshot.go), as the
// host starts every other.
func BenchmarkInstanceStart(b *testing.B) {
	p := benchPlugin(b)
	saved := p.snap
	if saved == nil {
		b.Fatal("the everypoint module's first instance was not saved")
	}
	defer func() { p.snap = saved }()
	for _, from := range []struct {
		name string
		snap *snapshot
	}{{"start", nil}, {"save", saved}} {
		b.Run("from="+from.name, func(b *testing.B) {
			p.snap = from.snap
			var memory uint32
			var footprint wasmtest.Footprint
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				in, err := p.spawn(ctx)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				memory = in.mod.Memory().Size()
				footprint, _ = wasmtest.MemoryFootprint(in.mod.Memory()) // zero where the system does not say
				in.close()
				b.StartTimer()
			}
			// What one idle, configured instance holds: its linear memory
			// (the plugin's is at most maxInstances × memoryLimit), the
			// part of it that is resident, and the part of that its own
			// (the rest is pages of the module's memory image, or of the
			// save, which every instance shares).
			b.ReportMetric(float64(memory), "memory-bytes/instance")
			b.ReportMetric(float64(footprint.Resident), "resident-bytes/instance")
			b.ReportMetric(float64(footprint.Own), "own-bytes/instance")
		})
	}
}

// BenchmarkCompile measures the compilation of the everypoint module as
// a new process of the controller makes it: with no cache (cache=memory,
// an empty in-memory cache, as every start without
// pluginHost.wasmCacheDir) and with the on-disk cache of an earlier
// process (cache=dir, pluginHost.wasmCacheDir).
func BenchmarkCompile(b *testing.B) {
	m := wasmtest.Build(b, everypointPkg)
	dir := b.TempDir()
	ctx := context.Background()
	// Fills dir, as the process before would have.
	if c, err := load(ctx, "EveryPoint", m.Path, m.SHA256, 3001, dir); err != nil {
		b.Fatal(err)
	} else {
		c.release(ctx)
	}
	var dirBytes int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				dirBytes += info.Size()
			}
		}
		return nil
	})
	for _, bc := range []struct{ name, dir string }{{"memory", ""}, {"dir", dir}} {
		b.Run("cache="+bc.name, func(b *testing.B) {
			for b.Loop() {
				forgetMachineCode(bc.dir)
				c, err := load(ctx, "EveryPoint", m.Path, m.SHA256, 3001, bc.dir)
				if err != nil {
					b.Fatal(err)
				}
				c.release(ctx)
			}
			if bc.dir != "" {
				b.ReportMetric(float64(dirBytes), "cache-bytes")
			}
		})
	}
}

// forgetMachineCode drops this process's machine-code cache of dir, as a
// new process starts without it (the files of dir stay).
func forgetMachineCode(dir string) {
	cache.Lock()
	defer cache.Unlock()
	if dir == "" {
		cache.code[""] = wazero.NewCompilationCache()
		return
	}
	delete(cache.code, dir)
}
