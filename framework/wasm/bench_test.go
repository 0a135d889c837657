package wasm

import (
	"context"
	"encoding/json"
	"testing"
	"time"

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

// BenchmarkInstanceStart measures the start of one more instance: the
// module's initialisation (Go's runtime), its main and Configure; the
// module is compiled already.
func BenchmarkInstanceStart(b *testing.B) {
	p := benchPlugin(b)
	var memory uint32
	b.ResetTimer()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		in, err := p.spawn(ctx)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		memory = in.mod.Memory().Size()
		in.close()
		b.StartTimer()
	}
	// What one idle, configured instance holds: the plugin's memory is
	// about maxInstances times this, within maxInstances × memoryLimit.
	b.ReportMetric(float64(memory), "memory-bytes/instance")
}
