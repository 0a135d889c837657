package wasm

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
)

// memoryOfPrepared instantiates bin as the host prepares it, without
// running any of its functions, and returns its memory at its start.
func memoryOfPrepared(t *testing.T, bin []byte) ([]byte, *PreparedModule) {
	t.Helper()
	p := PrepareModule(bin, 1)
	t.Cleanup(func() { _ = p.Close() })
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	mod, err := rt.InstantiateWithConfig(p.Context(ctx), p.Module, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mod.Memory().Read(0, mod.Memory().Size())
	return bytes.Clone(b), p
}

// A module's instance starts with the memory its data segments write,
// whether they are in the memory image (Linux) or packed in the module.
func TestPreparedModuleStartsAsItsDataSegments(t *testing.T) {
	bin := wasmModule(oneMemory, dataSection(
		dataSegment{offset: 16, init: []byte("ab")},
		dataSegment{offset: 5000, init: []byte("far")},
		dataSegment{offset: PageBytes - 2, init: []byte("end")[:2]}, // up to the last byte of the initial memory
	))
	got, p := memoryOfPrepared(t, bin)
	if want := memoryAfterStart(t, bin); !bytes.Equal(got, want) {
		t.Error("the prepared module's memory differs from the module's at its start")
	}
	if runtime.GOOS == "linux" {
		if p.ImageBytes != PageBytes {
			t.Errorf("a memory image of %d bytes, want the data's %d", p.ImageBytes, PageBytes)
		}
		if _, _, _, ok := findDataSection(p.Module); ok {
			t.Error("the data segments are in the memory image and in the module as well")
		}
	}
}

// What a memory image cannot stand for, the module keeps (packed).
func TestDataImageLeavesWhatItMayNotHold(t *testing.T) {
	two := dataSection(dataSegment{offset: 16, init: []byte("ab")}, dataSegment{offset: 20, init: []byte("cd")})
	for name, bin := range map[string][]byte{
		"data past the initial memory": wasmModule(oneMemory, dataSection(dataSegment{offset: PageBytes - 1, init: []byte("ab")})),
		"no memory of its own":         wasmModule(two),
		"two memories":                 wasmModule([]byte{5, 2, 0, 1, 0, 1}, two),
		"a shared memory":              wasmModule([]byte{5, 1, 3, 1, 1}, two),
		"a data count section":         wasmModule(oneMemory, []byte{sectionDataCount, 2}, two),
		"an offset from a global":      wasmModule(oneMemory, []byte{sectionData, 1, 0, 0x23, 0, opEnd, 1, 'x'}),
		"no data":                      wasmModule(oneMemory),
		"not a module":                 []byte("MZ"),
		"more than 4 GiB of memory":    wasmModule([]byte{5, 1, 0, 0x81, 0x80, 0x04}, two),
	} {
		if _, _, ok := splitDataImage(bin, 1<<30); ok {
			t.Errorf("%s: split into a memory image, want the module left with its data", name)
		}
		if p := PrepareModule(bin, 1); p.ImageBytes != 0 || !bytes.Equal(p.Module, PackDataSegments(bin)) {
			t.Errorf("%s: prepared with a memory image of %d bytes, want the module as packing leaves it", name, p.ImageBytes)
		}
	}
}

// The pages of the memory image that instances of a Go module only read
// are not theirs: an idle instance's resident memory is well under its
// memory's size, and what it wrote is a small part of it. Before, every
// instance's start copied the whole image (about 11 MiB) into pages of its
// own.
func TestInstancesShareTheMemoryImage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("memory images are mapped on Linux only")
	}
	m := wasmtest.Build(t, everypointPkg)
	opts, _ := options(m, "EveryPoint")
	opts.MaxInstances = 2
	p := start(t, opts)
	warm(t, p, 2)
	for range 4 {
		if _, err := p.Client().Build(context.Background(), testInfo(), testJob("shared")); err != nil {
			t.Fatal(err)
		}
	}
	image := uint64(p.mod.module.ImageBytes)
	if image < 8<<20 {
		t.Fatalf("a memory image of %d bytes, want a Go module's static data (over 8 MiB)", image)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for in := range p.all {
		f, err := wasmtest.MemoryFootprint(in.mod.Memory())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("an instance: memory %.1f MiB, resident %.1f MiB, its own %.1f MiB; the image %.1f MiB",
			mib(f.Size), mib(f.Resident), mib(f.Own), mib(image))
		if f.Own > f.Size-image/2 {
			t.Errorf("an instance has %.1f MiB of its own of a %.1f MiB memory, want the %.1f MiB image mostly shared", mib(f.Own), mib(f.Size), mib(image))
		}
		if f.Resident > f.Size-image/4 {
			t.Errorf("an instance has %.1f MiB resident of a %.1f MiB memory, want the image's pages it never reads not resident", mib(f.Resident), mib(f.Size))
		}
	}
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }
