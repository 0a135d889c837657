package wasm

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sys/unix"
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
	b, err := reserve(limit)
	if err != nil {
		// No address space for it: the Go heap, as wazero's own.
		return &heapMemory{buf: make([]byte, 0, capacity), limit: limit}
	}
	return &mappedMemory{buf: b}
})

// reserve maps limit bytes of address space, readable and writable, that
// take memory only as they are touched.
func reserve(limit uint64) ([]byte, error) {
	return syscall.Mmap(-1, 0, int(limit), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
}

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

// memoryImage is a module's memory image (dataimage.go) in a sealed memory
// file: every instance's memory maps it, copy-on-write, over its first
// pages.
type memoryImage struct {
	fd   int
	size int // the image's bytes, rounded up to the system's pages
}

// newImageAllocator writes image into a sealed memory file.
func newImageAllocator(image []byte) (imageAllocator, error) {
	fd, err := unix.MemfdCreate("trainforge-wasm-image", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	page := os.Getpagesize()
	im := &memoryImage{fd: fd, size: (len(image) + page - 1) / page * page}
	fail := func(what string, err error) (imageAllocator, error) {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("%s of the memory image: %w", what, err)
	}
	if err := unix.Ftruncate(fd, int64(im.size)); err != nil {
		return fail("sizing", err)
	}
	// The pages of zeros are left as holes, which read as zeros and take
	// no memory: most of a saved instance's memory (snapshot.go) is free.
	zeros := make([]byte, page)
	for start := 0; start < len(image); {
		start += zeroPrefix(image[start:], zeros)
		end := start
		for end < len(image) && zeroPrefix(image[end:], zeros) == 0 {
			end = min(end+page, len(image))
		}
		for start < end {
			n, err := unix.Pwrite(fd, image[start:end], int64(start))
			if err != nil && err != unix.EINTR {
				return fail("writing", err)
			}
			start += max(n, 0)
		}
	}
	// Sealed, nothing (this process included) can change the image under
	// the instances that map it.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		return fail("sealing", err)
	}
	return im, nil
}

// zeroPrefix returns the length of the pages of zeros b starts with:
// pages of len(zeros) bytes, all zero, the last one of b maybe shorter.
func zeroPrefix(b, zeros []byte) int {
	n := 0
	for n < len(b) {
		p := b[n:min(n+len(zeros), len(b))]
		if !bytes.Equal(p, zeros[:len(p)]) {
			return n
		}
		n += len(p)
	}
	return n
}

// Allocate reserves the memory as memoryAllocator does and maps the image
// over its first pages; where the system refuses the mapping, it copies the
// image in instead, so that the memory starts as the image in any case.
func (im *memoryImage) Allocate(capacity, limit uint64) experimental.LinearMemory {
	size := uint64(im.size)
	if limit < size {
		// Not a memory of this module (its initial size holds the image).
		return memoryAllocator.Allocate(capacity, limit)
	}
	b, err := reserve(limit)
	if err != nil {
		m := &heapMemory{buf: make([]byte, 0, max(capacity, size)), limit: limit}
		im.copyTo(m.buf[:size])
		return m
	}
	if size > 0 {
		if _, err := unix.MmapPtr(im.fd, 0, unsafe.Pointer(&b[0]), uintptr(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED); err != nil {
			im.copyTo(b[:size])
		}
	}
	return &mappedMemory{buf: b}
}

// copyTo reads the image into b. Reading a memory file this process holds
// open fails only on a broken system; the memory is then left as it is
// and the instance's start fails on what its data should have said.
func (im *memoryImage) copyTo(b []byte) {
	for off := 0; off < len(b); {
		n, err := unix.Pread(im.fd, b[off:], int64(off))
		switch {
		case err == unix.EINTR:
		case err != nil || n <= 0:
			return
		}
		off += max(n, 0)
	}
}

// Close closes the memory file; the instances' mappings keep it.
func (im *memoryImage) Close() error { return unix.Close(im.fd) }
