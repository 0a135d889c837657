package wasm

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/trainforge/trainforge/framework/pluginhost"
)

// Starting an instance runs the guest's initialisation (Go's runtime and
// every package's init), its main and Configure: tens of milliseconds of
// CPU for a vendor plugin's module, paid again by each instance that
// replaces one. And a WebAssembly memory never shrinks: an instance that
// one call grew keeps that memory, within its limit, for as long as it
// serves. So the host saves the first instance of a plugin once it is
// configured, when the module allows it (PreparedModule.Restorable): its
// memory, in a sealed memory file, the values of its mutable globals,
// which the rewrite exports (instrumentInterrupt), and its clock. Every
// later instance of the plugin starts from that save: its memory maps the
// file copy-on-write, its globals are set, its clock goes on from the
// saved one, and nothing of the guest runs. Replacing an instance then
// costs a few page faults, and the host replaces an instance that a call
// left holding more than half the room its limit gave it (Plugin.grown)
// rather than keep that memory.
//
// What every instance started from one save shares is what the guest drew
// before it was saved: the seeds of its runtime (of its maps' hashes, of
// math/rand's default source). A guest's crypto/rand reads the host's
// random source at every read.

// snapshot is a saved instance.
type snapshot struct {
	memory imageAllocator // its memory
	pages  uint32         // the pages of its memory
	// globals are the values of the module's mutable globals, in the
	// order of PreparedModule.globals.
	globals []uint64
	clock   *fakeClock
}

// save saves in, an instance of module m, between two calls.
func (in *instance) save(m *PreparedModule) (*snapshot, error) {
	if !m.Restorable {
		return nil, fmt.Errorf("the module's instances cannot be saved")
	}
	mem := in.mod.Memory()
	view, ok := mem.Read(0, mem.Size())
	if !ok {
		return nil, fmt.Errorf("reading the instance's memory of %d bytes", mem.Size())
	}
	s := &snapshot{pages: mem.Size() / PageBytes, globals: make([]uint64, len(m.globals))}
	for i, name := range m.globals {
		g := in.mod.ExportedGlobal(name)
		if g == nil {
			return nil, fmt.Errorf("the module exports no global %s", name)
		}
		s.globals[i] = g.Get()
	}
	s.clock = in.clock.clone()
	var err error
	if s.memory, err = newImageAllocator(view); err != nil {
		return nil, err
	}
	return s, nil
}

// restore starts an instance of c's module as the saved one was, within
// ctx.
func (s *snapshot) restore(ctx context.Context, c *compiled, name string, args []string, log *pluginhost.Log) (*instance, error) {
	in, err := instantiate(experimental.WithMemoryAllocator(ctx, s.memory), c, name, args, log, s.clock.clone())
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*instance, error) {
		in.close()
		return nil, fmt.Errorf("starting an instance from the saved one: %w", err)
	}
	mem := in.mod.Memory()
	if have := mem.Size() / PageBytes; have < s.pages {
		if _, ok := mem.Grow(s.pages - have); !ok {
			return fail(fmt.Errorf("growing its memory to the saved %d pages", s.pages))
		}
	}
	for i, name := range c.module.globals {
		g, ok := in.mod.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			return fail(fmt.Errorf("the module exports no mutable global %s", name))
		}
		g.Set(s.globals[i])
	}
	return in, nil
}

// close releases the saved memory; the instances started from it keep
// their mappings.
func (s *snapshot) close() { _ = s.memory.Close() }

// fakeClock is an instance's clock: a clock that moves by a millisecond
// each time it is read, as wazero's own fake clock, whose time a snapshot
// can save and an instance started from it go on from. The monotonic
// clock starts at 0, the wall clock at 2022-01-01 UTC.
type fakeClock struct{ mono, wall atomic.Int64 }

// fakeEpoch is the wall clock's first reading, wazero's.
var fakeEpoch = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.mono.Store(-int64(time.Millisecond))
	c.wall.Store(fakeEpoch - int64(time.Millisecond))
	return c
}

// clone returns a clock that goes on from c's time, apart from c.
func (c *fakeClock) clone() *fakeClock {
	d := &fakeClock{}
	d.mono.Store(c.mono.Load())
	d.wall.Store(c.wall.Load())
	return d
}

func (c *fakeClock) nanotime() int64 { return c.mono.Add(int64(time.Millisecond)) }

func (c *fakeClock) walltime() (sec int64, nsec int32) {
	t := c.wall.Add(int64(time.Millisecond))
	return t / int64(time.Second), int32(t % int64(time.Second))
}
