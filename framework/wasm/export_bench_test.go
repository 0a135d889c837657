package wasm

import (
	"context"
	"testing"

	"github.com/trainforge/trainforge/framework/wasm/abi"
)

// BenchmarkExportCall measures one call of a trivial export of a Go
// guest (trainforge_abi_version): what entering and leaving Go's runtime
// costs, paid three times a call (malloc, call, free).
func BenchmarkExportCall(b *testing.B) {
	p := benchPlugin(b)
	in, err := p.acquire(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer p.release(in, nil)
	f := in.mod.ExportedFunction(abi.VersionExport)
	ctx := context.Background()
	for b.Loop() {
		if _, err := f.Call(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
