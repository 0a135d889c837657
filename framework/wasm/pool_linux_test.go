package wasm

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestInstanceMemoryIsNotOnTheGoHeap: an instance's linear memory is
// mapped apart from the Go heap (on Linux, hence this file), so a module
// that grows to its limit allocates nothing like that on the heap, and its
// instance's end gives the memory back at once.
func TestInstanceMemoryIsNotOnTheGoHeap(t *testing.T) {
	p, _ := startHostile(t, 128<<20, time.Minute)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := p.Client().Build(context.Background(), hostileInfo(), hostileJob("grower", "grow"))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("the growing call: %v, want it out of memory", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("a module that grew to 128 MiB allocated %d MiB on the Go heap, want its memory mapped apart", got>>20)
	}

	mem := memoryAllocator.Allocate(0, 64<<20)
	if _, ok := mem.(*mappedMemory); !ok {
		t.Fatalf("memoryAllocator gave a %T, want a *mappedMemory", mem)
	}
	b := mem.Reallocate(1 << 20)
	b[len(b)-1] = 1
	if got := mem.Reallocate(8 << 20); len(got) != 8<<20 || &got[0] != &b[0] || got[1<<20-1] != 1 {
		t.Errorf("growing moved or lost the memory")
	}
	if mem.Reallocate(65<<20) != nil {
		t.Errorf("a memory grew past its limit")
	}
	mem.Free()
	mem.Free()
}
