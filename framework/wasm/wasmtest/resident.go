package wasmtest

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"

	"github.com/tetratelabs/wazero/api"
)

// Footprint is what an instance's linear memory costs the process: Size is
// the memory's size, Resident the bytes of it in memory (its part of the
// process's resident set), Own the resident bytes that are its alone: the
// pages it wrote, against pages of a file that other instances map too
// (the module's memory image).
type Footprint struct {
	Size, Resident, Own uint64
}

// MemoryFootprint reads mem's footprint from /proc/self/pagemap, page by
// page (the kernel merges neighbouring mappings, so a mapping's figures in
// smaps may hold two instances' memories). It fails where the system has
// no pagemap (not Linux).
func MemoryFootprint(mem api.Memory) (Footprint, error) {
	f := Footprint{Size: uint64(mem.Size())}
	buf, ok := mem.Read(0, mem.Size())
	if !ok || len(buf) == 0 {
		return f, fmt.Errorf("the memory of %d bytes cannot be read", f.Size)
	}
	page := uint64(os.Getpagesize())
	first := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))) / page
	pages := (f.Size + page - 1) / page
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return f, err
	}
	defer pm.Close()
	entries := make([]byte, 8*pages)
	if _, err := pm.ReadAt(entries, int64(first*8)); err != nil {
		return f, fmt.Errorf("reading /proc/self/pagemap: %w", err)
	}
	for i := range pages {
		e := binary.LittleEndian.Uint64(entries[8*i:])
		// Bit 63: the page is in memory; 61: it is a file's page (or
		// shared anonymous memory).
		if e&(1<<63) == 0 {
			continue
		}
		f.Resident += page
		if e&(1<<61) == 0 {
			f.Own += page
		}
	}
	return f, nil
}
