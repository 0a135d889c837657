package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/trainforge/trainforge/framework/wasm/abi"
	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
)

// wasmModule encodes a module of the given sections (id, contents).
func wasmModule(sections ...[]byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range sections {
		b = append(b, s[0])
		b = binary.AppendUvarint(b, uint64(len(s)-1))
		b = append(b, s[1:]...)
	}
	return b
}

// oneMemory is a memory section of one memory of one page.
var oneMemory = []byte{5, 1, 0, 1}

func dataSection(segs ...dataSegment) []byte {
	return appendDataSection([]byte{sectionData}, segs)
}

// memoryAfterStart instantiates bin without running any of its functions
// (the interpreter: nothing to compile) and returns its memory: what its
// data segments wrote.
func memoryAfterStart(t *testing.T, bin []byte) []byte {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	if _, err := rt.NewHostModuleBuilder(abi.HostModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) {}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, nil).
		Export(abi.LogImport).Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.InstantiateWithConfig(ctx, bin, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mod.Memory().Read(0, mod.Memory().Size())
	return bytes.Clone(b)
}

func countDataSegments(t *testing.T, bin []byte) int {
	t.Helper()
	_, start, _, ok := findDataSection(bin)
	if !ok {
		t.Fatal("no data section packing can read")
	}
	count, _ := binary.Uvarint(bin[start:])
	return int(count)
}

func TestPackMergesSegmentsAcrossSmallGapsOnly(t *testing.T) {
	bin := wasmModule(oneMemory, dataSection(
		dataSegment{offset: 5000, init: []byte("far")}, // out of order, and past a wide gap
		dataSegment{offset: 16, init: []byte("ab")},
		dataSegment{offset: 20, init: []byte("cd")},
		dataSegment{offset: 20 + 2 + maxDataGap, init: []byte("ef")},
	))
	packed := PackDataSegments(bin)
	if got := countDataSegments(t, packed); got != 2 {
		t.Errorf("packed module has %d data segments, want 2 (16 to %d, and 5000)", got, 20+2+maxDataGap+2)
	}
	if want, got := memoryAfterStart(t, bin), memoryAfterStart(t, packed); !bytes.Equal(got, want) {
		t.Error("the packed module's memory differs from the module's at its start")
	}
}

func TestPackLeavesWhatItMayNotRewrite(t *testing.T) {
	two := []dataSegment{{offset: 16, init: []byte("ab")}, {offset: 20, init: []byte("cd")}}
	passive := append(dataSection(two...), 1, 1, 'x')
	passive[1]++ // one more segment: passive, one byte
	for name, bin := range map[string][]byte{
		"a passive segment":       wasmModule(oneMemory, passive),
		"a data count section":    wasmModule(oneMemory, []byte{sectionDataCount, 2}, dataSection(two...)),
		"overlapping segments":    wasmModule(oneMemory, dataSection(dataSegment{offset: 16, init: []byte("abcd")}, dataSegment{offset: 18, init: []byte("xy")})),
		"an offset from a global": wasmModule(oneMemory, []byte{sectionData, 1, 0, 0x23, 0, opEnd, 1, 'x'}),
		"nothing to merge":        wasmModule(oneMemory, dataSection(dataSegment{offset: 16, init: []byte("ab")})),
		"a truncated section":     wasmModule(oneMemory, dataSection(two...))[:20],
		"not a module":            []byte("MZ"),
	} {
		if got := PackDataSegments(bin); !bytes.Equal(got, bin) {
			t.Errorf("%s: packed to %x, want the module unchanged", name, got)
		}
	}
}

func TestSLEB32RoundTrips(t *testing.T) {
	for _, v := range []int32{0, 1, 63, 64, -1, -64, -65, 1 << 20, 1<<31 - 1, -1 << 31} {
		b := appendSLEB32(nil, v)
		got, n := readSLEB32(b)
		if got != v || n != len(b) {
			t.Errorf("%d: encoded %x, read back %d (%d bytes)", v, b, got, n)
		}
	}
}

// A Go plugin's module: Go's linker writes its data as many thousand
// segments; packed, a few dozen write the same memory.
func TestPackAGoModule(t *testing.T) {
	m := wasmtest.Build(t, everypointPkg)
	bin, err := os.ReadFile(m.Path)
	if err != nil {
		t.Fatal(err)
	}
	packed := PackDataSegments(bin)
	before, after := countDataSegments(t, bin), countDataSegments(t, packed)
	t.Logf("%d data segments packed to %d; module %d → %d bytes", before, after, len(bin), len(packed))
	if before < 10000 || after > 1000 {
		t.Errorf("%d data segments packed to %d, want Go's many thousands packed to under a thousand", before, after)
	}
	want, got := memoryAfterStart(t, bin), memoryAfterStart(t, packed)
	if len(want) < 8<<20 || !bytes.Equal(got, want) {
		t.Error("the packed module's memory differs from the module's at its start")
	}
}

// Packing and the memory image read what an admin's module holds:
// whatever the bytes, neither panics; what packing packs it packs once
// (packing a packed module leaves it as it is); a module split into a
// memory image keeps no data section, and its image fits the memory's
// initial pages and the memory limit.
func FuzzPackDataSegments(f *testing.F) {
	f.Add(wasmModule(oneMemory, dataSection(dataSegment{offset: 16, init: []byte("ab")}, dataSegment{offset: 20, init: []byte("cd")})))
	f.Add(wasmModule(oneMemory, []byte{sectionData, 1, 0, 0x23, 0, opEnd, 1, 'x'}))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x0b\x05\x02"))
	f.Add(wasmModule([]byte{5, 1, 3, 1, 1}, dataSection(dataSegment{offset: 16, init: []byte("ab")})))
	f.Fuzz(func(t *testing.T, bin []byte) {
		packed := PackDataSegments(bin)
		if again := PackDataSegments(packed); !bytes.Equal(again, packed) {
			t.Errorf("packing %x twice: %x, then %x", bin, packed, again)
		}
		if mod, image, ok := splitDataImage(bin, 1<<20); ok {
			if _, _, _, found := findDataSection(mod); found {
				t.Errorf("%x split into a memory image keeps a data section: %x", bin, mod)
			}
			if pages, _ := initialMemoryPages(mod); uint64(len(image)) > min(pages*PageBytes, 1<<20) {
				t.Errorf("%x split into a memory image of %d bytes, past its initial %d pages or the limit of 1 MiB", bin, len(image), pages)
			}
		}
	})
}
