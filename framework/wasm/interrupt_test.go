package wasm

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// loopModule is a module of three functions, built by hand so that what
// each does is plain:
//
//   - spin() loops for ever;
//   - sum(n) returns 1 + 2 + ... + n, in a loop;
//   - fork(n) calls itself twice with n-1 while n > 0: 2^n calls and no
//     loop, which only a check at function entries stops.
//
// spin, when not nil, replaces spin's body, and sections go before the
// code section, for the cases below.
func loopModule(spin []byte, sections ...[]byte) []byte {
	if spin == nil {
		spin = []byte{0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b} // loop; br 0; end
	}
	sum := []byte{0x01, 0x01, 0x7f, // one i32 local: the sum
		0x02, 0x40, 0x03, 0x40, // block; loop
		0x20, 0x00, 0x45, 0x0d, 0x01, // n == 0: out
		0x20, 0x01, 0x20, 0x00, 0x6a, 0x21, 0x01, // sum += n
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x21, 0x00, // n--
		0x0c, 0x00, 0x0b, 0x0b, // br 0; end; end
		0x20, 0x01, 0x0b}
	fork := []byte{0x00, 0x20, 0x00, 0x04, 0x40, // if n
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x02, // fork(n-1)
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x02, // fork(n-1)
		0x0b, 0x0b}
	code := []byte{sectionCode, 3}
	for _, body := range [][]byte{spin, sum, fork} {
		code = append(code, byte(len(body)))
		code = append(code, body...)
	}
	all := [][]byte{
		{sectionType, 3, 0x60, 0, 0, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 1, 0x7f, 0},
		{sectionFunction, 3, 0, 1, 2},
		oneMemory,
		{sectionGlobal, 1, 0x7f, 0x01, 0x41, 0x00, 0x0b},
		{sectionExport, 3, 4, 's', 'p', 'i', 'n', 0, 0, 3, 's', 'u', 'm', 0, 1, 4, 'f', 'o', 'r', 'k', 0, 2},
	}
	all = append(all, sections...)
	return wasmModule(append(all, code)...)
}

// compileForTest compiles bin as the host does (PrepareModule, its
// runtime configuration, WASI, the compiler).
func compileForTest(t *testing.T, bin []byte) *compiled {
	t.Helper()
	ctx := context.Background()
	p := PrepareModule(bin, 1)
	t.Cleanup(func() { _ = p.Close() })
	rt := wazero.NewRuntimeWithConfig(ctx, p.RuntimeConfig(1))
	t.Cleanup(func() { _ = rt.Close(ctx) })
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		t.Fatal(err)
	}
	mod, err := p.Compile(ctx, rt)
	if err != nil {
		t.Fatal(err)
	}
	return &compiled{rt: rt, mod: mod, module: p}
}

// compilePrepared compiles bin as the host does and returns one instance
// of it and its interrupter (nil: wazero's check interrupts it).
func compilePrepared(t *testing.T, bin []byte) (api.Module, *interrupter, *PreparedModule) {
	t.Helper()
	c := compileForTest(t, bin)
	in, err := instantiate(c.module.Context(context.Background()), c, "test", nil, nil, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.close)
	return in.mod, in.interrupt, c.module
}

// call calls the export name of mod as an instance's run does.
func call(ctx context.Context, mod api.Module, i *interrupter, name string, params ...uint64) ([]uint64, error) {
	in := &instance{mod: mod, interrupt: i}
	return in.run(ctx, mod.ExportedFunction(name), params...)
}

// The checks change nothing a function computes.
func TestInstrumentedModuleComputesTheSame(t *testing.T) {
	bin := loopModule(nil)
	mod, i, p := compilePrepared(t, bin)
	if !p.Interruptible {
		t.Fatal("the module was not instrumented")
	}
	for _, n := range []uint64{0, 1, 10, 5000} {
		res, err := call(context.Background(), mod, i, "sum", n)
		if err != nil {
			t.Fatalf("sum(%d): %v", n, err)
		}
		if want := n * (n + 1) / 2; res[0] != want {
			t.Errorf("sum(%d) = %d, want %d", n, res[0], want)
		}
	}
	if _, err := call(context.Background(), mod, i, "fork", 10); err != nil {
		t.Errorf("fork(10): %v", err)
	}
}

// A call that loops, or recurses without a loop, ends at its deadline,
// even with a looping call on every P at once and the garbage collector
// stopping the world meanwhile: the guests leave for Go often enough that
// the timers run and the collector's stop completes.
func TestInterruptStopsLoopsAndRecursion(t *testing.T) {
	bin := loopModule(nil)
	calls := runtime.GOMAXPROCS(0) + 1
	var wg sync.WaitGroup
	errs := make(chan error, 2*calls)
	for range calls {
		for _, fn := range []struct {
			name   string
			params []uint64
		}{{"spin", nil}, {"fork", []uint64{62}}} {
			mod, i, p := compilePrepared(t, bin)
			if !p.Interruptible {
				t.Fatal("the module was not instrumented")
			}
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				_, err := call(ctx, mod, i, fn.name, fn.params...)
				if err == nil {
					err = errors.New(fn.name + " returned")
				} else if ctx.Err() == nil {
					err = errors.New(fn.name + " ended before its deadline: " + err.Error())
				} else {
					err = nil
				}
				errs <- err
			})
		}
	}
	gc := make(chan struct{})
	go func() {
		defer close(gc)
		time.Sleep(50 * time.Millisecond)
		runtime.GC()
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("looping calls were not interrupted a minute after their deadline of 200ms")
	}
	<-gc
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// A deadline that passes once a call has returned interrupts nothing: the
// next call of the instance runs.
func TestInterruptAfterTheCallLeavesTheInstanceUsable(t *testing.T) {
	mod, i, _ := compilePrepared(t, loopModule(nil))
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := call(ctx, mod, i, "sum", 3); err != nil {
		t.Fatal(err)
	}
	cancel()
	time.Sleep(10 * time.Millisecond)
	res, err := call(context.Background(), mod, i, "sum", 3)
	if err != nil || res[0] != 6 {
		t.Fatalf("the next call: %v %v, want 6", res, err)
	}
}

// A module the host cannot instrument safely runs as it is, and wazero's
// own check still ends its loops at their deadline.
func TestWhatIsNotInstrumentedIsStillInterrupted(t *testing.T) {
	simdSpin := []byte{0x00, 0x03, 0x40, // loop
		0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1a, // v128.const 0; drop
		0x0c, 0x00, 0x0b, 0x0b}
	reachesAdded := []byte{0x00, 0x03, 0x40, 0x41, 0x00, 0x24, 0x01, 0x0c, 0x00, 0x0b, 0x0b} // sets global 1: the module has one
	for name, bin := range map[string][]byte{
		"SIMD":                    loopModule(simdSpin),
		"a global past its own":   loopModule(reachesAdded),
		"a start function":        loopModule(nil, []byte{sectionStart, 1, 0}),
		"the interruption's name": exportingInterrupt(),
	} {
		t.Run(name, func(t *testing.T) {
			if _, ok := instrumentInterrupt(bin); ok {
				t.Fatal("instrumented")
			}
			if name == "a global past its own" || name == "a start function" {
				return // invalid, or never returns from its start: nothing to call
			}
			mod, i, p := compilePrepared(t, bin)
			if p.Interruptible || i != nil {
				t.Fatal("prepared as interruptible")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if _, err := call(ctx, mod, i, "spin"); err == nil {
				t.Fatal("spin returned")
			}
		})
	}
}

// exportingInterrupt is loopModule exporting its global as
// InterruptExport.
func exportingInterrupt() []byte {
	bin := loopModule(nil)
	sections, _ := readSections(bin)
	for _, s := range sections {
		if s.id != sectionExport {
			continue
		}
		body := appendVecItems(bin[s.start:s.end], 1, func(b []byte) []byte {
			b = append(b, byte(len(InterruptExport)))
			b = append(b, InterruptExport...)
			return append(b, 0x03, 0x00)
		})
		out := append([]byte(nil), bin[:s.head]...)
		out = append(out, sectionExport, byte(len(body)))
		out = append(out, body...)
		return append(out, bin[s.end:]...)
	}
	panic("no export section")
}

// Whatever the bytes, instrumentInterrupt does not panic, and what it
// instruments is a module whose sections it can read.
func FuzzInstrumentInterrupt(f *testing.F) {
	f.Add(loopModule(nil))
	f.Add(exportingInterrupt())
	f.Add(wasmModule(oneMemory, dataSection(dataSegment{offset: 16, init: []byte("ab")})))
	f.Fuzz(func(t *testing.T, bin []byte) {
		out, ok := instrumentInterrupt(bin)
		if !ok {
			return
		}
		if _, ok := readSections(out.bin); !ok {
			t.Fatal("the instrumented module's sections do not read")
		}
	})
}
