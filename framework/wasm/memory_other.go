//go:build !linux

package wasm

import (
	"errors"

	"github.com/tetratelabs/wazero/experimental"
)

// memoryAllocator gives each instance its linear memory on the Go heap,
// as wazero itself does; on Linux it is mapped from the kernel instead.
var memoryAllocator experimental.MemoryAllocator = experimental.MemoryAllocatorFunc(func(capacity, limit uint64) experimental.LinearMemory {
	return &heapMemory{buf: make([]byte, 0, capacity), limit: limit}
})

// newImageAllocator refuses: only Linux maps a memory image; elsewhere a
// module runs with its data segments packed.
func newImageAllocator([]byte) (imageAllocator, error) {
	return nil, errors.New("memory images are mapped on Linux only")
}
