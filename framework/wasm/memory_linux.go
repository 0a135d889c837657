package wasm

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// memoryAllocator gives each instance a linear memory mapped from the
// kernel instead of a slice of the Go heap. Its whole limit is reserved
// at once, as address space only (a page takes memory when the guest
// first touches it), so growing never copies; and the instance's end
// unmaps it at once. On the Go heap, every instance's memory counted in
// the heap that the garbage collector lets grow to twice what is live,
// each growth left the old copy behind as garbage, and an ended
// instance's memory stayed until a collection: the controller's peak was
// about twice the memory of its instances.
var memoryAllocator experimental.MemoryAllocator = experimental.MemoryAllocatorFunc(func(capacity, limit uint64) experimental.LinearMemory {
	b, err := syscall.Mmap(-1, 0, int(limit), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		// No address space for it: the Go heap, as wazero's own.
		return &heapMemory{buf: make([]byte, 0, capacity), limit: limit}
	}
	return &mappedMemory{buf: b}
})

// mappedMemory is a linear memory of mapped pages.
type mappedMemory struct{ buf []byte }

func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size]
}

// Free unmaps the memory. wazero calls it once the instance is closed and
// no call runs on it.
func (m *mappedMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf = nil
	}
}
