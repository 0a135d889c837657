package wasm

import (
	"context"
	"encoding/binary"
	"runtime"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// A Go module's static data (about 11 MiB of a vendor plugin's linear
// memory: the function tables, type descriptors, strings) is the same in
// every instance, and an instance only reads most of it. Where the system
// allows (Linux), the host moves the module's active data segments into a
// memory image in a sealed memory file, and maps that file copy-on-write as
// the start of every instance's memory: an instance's start copies
// nothing, the pages an instance only reads cost memory once for every
// instance of the module (and count in an instance's resident set only
// once it touches them), and only the pages it writes become its own.
// Elsewhere, or for a module whose data is not only what the image can
// hold, the module runs with its data segments packed (PackDataSegments).

// maxMemoryPages is the most pages a 32-bit memory has (4 GiB).
const maxMemoryPages = 1 << 16

// PreparedModule is a module as the host compiles and runs it: Module is
// the binary to compile, and the memory of its instances comes from the
// allocator Context puts in their context.
type PreparedModule struct {
	// Module is the binary to compile: without its data segments when
	// they are in the memory image, with them packed otherwise, and with
	// the interruption check in its functions when Interruptible.
	// Compile drops it.
	Module []byte
	// Interruptible is true when Module's functions check the global it
	// exports as InterruptExport (instrumentInterrupt); its instances'
	// calls are then interrupted by setting that global, and the runtime
	// needs no check of its own (RuntimeConfig).
	Interruptible bool
	// Restorable is true when an instance of Module can be saved and
	// others started from the save (snapshot.go): it is interruptible, its
	// state is its memory and the globals it exports (instrumented), and
	// Module has no data segments, which would be written over the save.
	Restorable bool
	// ImageBytes is the size of the memory image every instance's memory
	// starts as; 0 when the data segments are in Module.
	ImageBytes int
	image      imageAllocator
	// globals are the export names of the module's mutable globals.
	globals []string
}

// imageAllocator gives instances memories that start as a memory image.
type imageAllocator interface {
	experimental.MemoryAllocator
	Close() error
}

// PrepareModule prepares module bin as the host runs it (above and
// instrumentInterrupt). It never fails: what it cannot prepare it runs as
// PackDataSegments leaves it, with wazero's own interruption check. It
// is exported for the benchmarks, which measure a module as the host runs
// it. limitPages is the memory limit of its instances, which no image
// exceeds. Close releases the memory image once no instance is started
// any more (the instances' mappings keep their pages).
func PrepareModule(bin []byte, limitPages uint32) *PreparedModule {
	i, interruptible := instrumentInterrupt(bin)
	if interruptible {
		bin = i.bin
	}
	p := &PreparedModule{Interruptible: interruptible, globals: i.globals}
	if mod, image, ok := splitDataImage(bin, uint64(limitPages)*PageBytes); ok {
		if alloc, err := newImageAllocator(image); err == nil {
			p.Module, p.ImageBytes, p.image = mod, len(image), alloc
		}
	}
	if p.Module == nil {
		p.Module = PackDataSegments(bin)
	}
	p.Restorable = interruptible && i.restorable && !hasSection(p.Module, sectionData)
	return p
}

// hasSection reports whether module bin has a section of id.
func hasSection(bin []byte, id byte) bool {
	sections, _ := readSections(bin)
	for _, s := range sections {
		if s.id == id {
			return true
		}
	}
	return false
}

// RuntimeConfig is the configuration of the wazero runtime the host
// compiles and runs the module in, for an instance memory limit of pages
// (64 KiB each), without the compilation cache. It is exported so that
// benchmarks measure the compiler and the calls exactly as the host runs
// them.
func (p *PreparedModule) RuntimeConfig(pages uint32) wazero.RuntimeConfig {
	// A call's deadline must be able to stop a guest that loops. An
	// interruptible module checks its own global; any other is checked by
	// wazero, at far more cost (instrumentInterrupt).
	return wazero.NewRuntimeConfig().
		WithCloseOnContextDone(!p.Interruptible).
		WithMemoryLimitPages(pages)
}

// Compile compiles Module in rt, which RuntimeConfig configured, and drops
// Module: wazero keeps its own decoded copy, and the binary (18 MB for a
// vendor plugin's module) would otherwise stay on the heap. It compiles
// the functions on as many goroutines as the process has Ps: a vendor
// plugin's module compiles in 7.6 s instead of 17 on two cores, for about
// 40 MiB more of heap meanwhile (docs/benchmarks.md); a module is compiled
// once per process and checksum, and then read from the compilation cache.
func (p *PreparedModule) Compile(ctx context.Context, rt wazero.Runtime) (wazero.CompiledModule, error) {
	mod, err := rt.CompileModule(experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0)), p.Module)
	p.Module = nil
	return mod, err
}

// Context returns ctx with the allocator of the memories of the module's
// instances: wazero takes it from the context of InstantiateModule.
func (p *PreparedModule) Context(ctx context.Context) context.Context {
	if p.image != nil {
		return experimental.WithMemoryAllocator(ctx, p.image)
	}
	return experimental.WithMemoryAllocator(ctx, memoryAllocator)
}

// Close releases the memory image.
func (p *PreparedModule) Close() error {
	if p.image == nil {
		return nil
	}
	return p.image.Close()
}

// splitDataImage returns module bin without its data section, and the
// memory its active data segments write from address 0: its memory image.
// It is not ok when the data is not only what an image can stand for
// (readDataSegments, and findDataSection's data count section) or the
// module does not define exactly one memory whose first pages hold the
// image: a memory the module imports or shares, or an image past the
// memory's initial size, whose bytes only a later growth would show, or
// past limit bytes (a module wazero then refuses for its memory).
func splitDataImage(bin []byte, limit uint64) (module, image []byte, ok bool) {
	head, start, end, ok := findDataSection(bin)
	if !ok {
		return nil, nil, false
	}
	segs, ok := readDataSegments(bin[start:end])
	if !ok || len(segs) == 0 {
		return nil, nil, false
	}
	minPages, ok := initialMemoryPages(bin)
	size := segmentEnd(segs[len(segs)-1])
	if !ok || size > min(minPages*PageBytes, limit) {
		return nil, nil, false
	}
	image = make([]byte, size)
	for _, s := range segs {
		copy(image[s.offset:], s.init)
	}
	module = make([]byte, 0, len(bin)-(end-head))
	module = append(module, bin[:head]...)
	module = append(module, bin[end:]...)
	return module, image, true
}

// initialMemoryPages returns the initial size, in pages, of the one memory
// module bin defines; not ok when it defines none or several, or one that
// is shared or 64-bit.
func initialMemoryPages(bin []byte) (uint64, bool) {
	sections, _ := readSections(bin)
	for _, s := range sections {
		if s.id != sectionMemory {
			continue
		}
		// One memory; its limits' flag 0 (a minimum) or 1 (a minimum and
		// a maximum).
		body := bin[s.start:s.end]
		if len(body) < 3 || body[0] != 1 || body[1] > 1 {
			return 0, false
		}
		pages, n := binary.Uvarint(body[2:])
		if n <= 0 || pages > maxMemoryPages {
			return 0, false
		}
		return pages, true
	}
	return 0, false
}
