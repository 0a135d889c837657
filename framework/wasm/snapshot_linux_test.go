package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
)

// stateModule is a module built by hand whose state is in a global and in
// its memory, and which reads WASI's monotonic clock:
//
//   - bump() adds one to global 0 and to the i32 at address 0, and returns
//     global 0 × 1000 + that i32;
//   - now() returns a reading of the monotonic clock.
func stateModule(sections ...[]byte) []byte {
	bump := []byte{0x00,
		0x23, 0x00, 0x41, 0x01, 0x6a, 0x24, 0x00, // global 0 += 1
		0x41, 0x00, 0x41, 0x00, 0x28, 0x02, 0x00, 0x41, 0x01, 0x6a, 0x36, 0x02, 0x00, // mem[0] += 1
		0x23, 0x00, 0x41, 0xe8, 0x07, 0x6c, 0x41, 0x00, 0x28, 0x02, 0x00, 0x6a, // global 0 × 1000 + mem[0]
		0x0b}
	now := []byte{0x00,
		0x41, 0x01, 0x42, 0x00, 0x41, 0x08, 0x10, 0x00, 0x1a, // clock_time_get(monotonic, 0, 8); drop the errno
		0x41, 0x08, 0x29, 0x03, 0x00, // i64.load at 8
		0x0b}
	code := []byte{sectionCode, 2}
	for _, body := range [][]byte{bump, now} {
		code = append(code, byte(len(body)))
		code = append(code, body...)
	}
	clock := "clock_time_get"
	imports := []byte{sectionImport, 1, byte(len(wasi_snapshot_preview1.ModuleName))}
	imports = append(imports, wasi_snapshot_preview1.ModuleName...)
	imports = append(imports, byte(len(clock)))
	imports = append(imports, clock...)
	imports = append(imports, 0x00, 0x02) // a function of type 2
	all := [][]byte{
		{sectionType, 3, 0x60, 0, 1, 0x7f, 0x60, 0, 1, 0x7e, 0x60, 3, 0x7f, 0x7e, 0x7f, 1, 0x7f},
		imports,
		{sectionFunction, 2, 0, 1},
		oneMemory,
		{sectionGlobal, 1, 0x7f, 0x01, 0x41, 0x00, 0x0b},
		{sectionExport, 2, 4, 'b', 'u', 'm', 'p', 0, 1, 3, 'n', 'o', 'w', 0, 2},
	}
	all = append(all, sections...)
	return wasmModule(append(all, code)...)
}

// callU64 calls export name of in and returns its one result.
func callU64(t *testing.T, in *instance, name string) uint64 {
	t.Helper()
	res, err := in.run(context.Background(), in.mod.ExportedFunction(name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res[0]
}

// An instance started from a saved one goes on from the saved state: its
// memory, its globals and its clock; and the two go on apart.
func TestRestoredInstanceGoesOnFromTheSave(t *testing.T) {
	c := compileForTest(t, stateModule())
	if !c.module.Restorable {
		t.Fatal("the module is not restorable")
	}
	ctx := context.Background()
	a, err := instantiate(c.module.Context(ctx), c, "state", nil, nil, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	for range 3 {
		callU64(t, a, "bump")
	}
	before := callU64(t, a, "now")
	s, err := a.save(c.module)
	if err != nil {
		t.Fatalf("save: %v", err)
	}
	defer s.close()
	b, err := s.restore(ctx, c, "state", nil, nil)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	defer b.close()
	if got := callU64(t, b, "bump"); got != 4004 {
		t.Errorf("bump of the restored instance = %d, want 4004: the saved global and memory plus one", got)
	}
	if got := callU64(t, b, "now"); int64(got) <= int64(before) {
		t.Errorf("the restored instance's clock reads %d, not after the saved one's last reading %d", got, before)
	}
	if got := callU64(t, a, "bump"); got != 4004 {
		t.Errorf("bump of the saved instance after the restore = %d, want 4004: the two share nothing", got)
	}
	if got := callU64(t, b, "bump"); got != 5005 {
		t.Errorf("a second bump of the restored instance = %d, want 5005", got)
	}
}

// A module whose instances hold state past their memory and their numeric
// globals, or whose data segments would be written over a save, is run
// without saves.
func TestWhatIsNotRestorable(t *testing.T) {
	// module is a module of one function f, of body, and sections.
	module := func(body []byte, imports, table, globals, dataCount, data []byte) []byte {
		sections := [][]byte{{sectionType, 1, 0x60, 0, 0}}
		if imports != nil {
			sections = append(sections, imports)
		}
		sections = append(sections, []byte{sectionFunction, 1, 0})
		if table != nil {
			sections = append(sections, table)
		}
		sections = append(sections, oneMemory, globals, []byte{sectionExport, 1, 1, 'f', 0, 0})
		if dataCount != nil {
			sections = append(sections, dataCount)
		}
		sections = append(sections, append([]byte{sectionCode, 1, byte(len(body))}, body...))
		if data != nil {
			sections = append(sections, data)
		}
		return wasmModule(sections...)
	}
	nothing := []byte{0x00, 0x0b}
	i32 := []byte{sectionGlobal, 1, 0x7f, 0x01, 0x41, 0x00, 0x0b}
	table := []byte{4, 1, 0x70, 0x00, 0x01}
	data := dataSection(dataSegment{offset: 16, init: []byte("ab")})
	importedGlobal := []byte{sectionImport, 1, 3, 'e', 'n', 'v', 1, 'g', 0x03, 0x7f, 0x01}
	if p := PrepareModule(module(nothing, nil, table, i32, nil, data), 1); !p.Restorable {
		t.Fatal("the module every case below changes is not restorable: they would test nothing")
	} else {
		_ = p.Close()
	}
	for name, bin := range map[string][]byte{
		"a table it writes": module([]byte{0x00, 0x41, 0x00, 0xd0, 0x70, 0x26, 0x00, 0x0b}, // table.set 0 at 0: ref.null
			nil, table, i32, nil, nil),
		"a mutable funcref global": module(nothing, nil, nil,
			[]byte{sectionGlobal, 2, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x70, 0x01, 0xd0, 0x70, 0x0b}, nil, nil),
		"an imported mutable global":            module(nothing, importedGlobal, nil, i32, nil, nil),
		"data segments it keeps (a data count)": module(nothing, nil, nil, i32, []byte{sectionDataCount, 1}, data),
	} {
		t.Run(name, func(t *testing.T) {
			p := PrepareModule(bin, 1)
			defer p.Close()
			if !p.Interruptible {
				t.Fatal("not instrumented: the case tests nothing")
			}
			if p.Restorable {
				t.Error("prepared as restorable")
			}
		})
	}
}

// An instance that a call left holding more than half the room its memory
// limit gave it past the saved instance is replaced by one started from
// the save, which answers; it is no crash of the plugin's.
func TestGrownInstanceIsReplaced(t *testing.T) {
	const limit = 64 << 20
	p, _ := startHostile(t, limit, time.Minute)
	if p.snap == nil {
		t.Fatal("the hostile module's first instance was not saved")
	}
	saved := uint64(p.snap.pages) * PageBytes
	restarts := testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues("Hostile"))
	replaced := testutil.ToFloat64(frameworkruntime.PluginInstancesReplaced.WithLabelValues("Hostile"))
	// The patch answer of 100,000 operations grows its instance to about
	// 48 MiB; the framework refuses it.
	if err := p.Client().EnforceMLPolicy(context.Background(), hostileInfo(), hostileJob("patcher", "patch")); err == nil {
		t.Fatal("the patch answer was not refused")
	}
	waitIdle(t, p)
	n, memory := p.Instances()
	if n != 1 || memory > saved+(limit-saved)/2 {
		t.Errorf("after the patch answer: %d instances holding %d MiB, want one holding at most %d MiB (the saved %d MiB and half the room left)",
			n, memory>>20, (saved+(limit-saved)/2)>>20, saved>>20)
	}
	if _, err := p.Client().Build(context.Background(), hostileInfo(), hostileJob("good", "good")); err != nil {
		t.Errorf("a good call after the replacement: %v", err)
	}
	if got := testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues("Hostile")) - restarts; got != 0 {
		t.Errorf("trainforge_plugin_restarts_total{plugin=Hostile} grew by %v, want 0: a grown instance is no crash", got)
	}
	if got := testutil.ToFloat64(frameworkruntime.PluginInstancesReplaced.WithLabelValues("Hostile")) - replaced; got != 1 {
		t.Errorf("trainforge_plugin_instances_replaced_total{plugin=Hostile} grew by %v, want 1", got)
	}
}

// Instances started from the save keep the configuration the first one
// got, and serve call after call in parallel, through the guest's garbage
// collections, with the answers of a configured instance.
func TestInstancesFromTheSaveServeManyCalls(t *testing.T) {
	m := wasmtest.Build(t, everypointPkg)
	opts, _ := options(m, "EveryPoint")
	opts.PluginArgs = json.RawMessage(`{"greeting":"saved"}`)
	p := start(t, opts)
	if p.snap == nil {
		t.Fatal("the everypoint module's first instance was not saved")
	}
	const callers, calls = 4, 100
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := range callers {
		wg.Go(func() {
			for i := range calls {
				name := fmt.Sprintf("job-%d-%d", c, i)
				objs, err := p.Client().Build(context.Background(), testInfo(), testJob(name))
				switch {
				case err != nil:
					errs <- fmt.Errorf("Build of %s: %w", name, err)
					return
				case len(objs) != 1 || objs[0].GetName() != name+"-everypoint":
					errs <- fmt.Errorf("Build of %s: %v, want its ConfigMap %s-everypoint", name, objs, name)
					return
				}
				if got, _ := objs[0].Object["data"].(map[string]any)["greeting"]; got != "saved" {
					errs <- fmt.Errorf("Build of %s: greeting %v, want the configured %q", name, got, "saved")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, _ := p.Instances(); n < 2 {
		t.Errorf("%d instances served %d callers in parallel, want more than the first", n, callers)
	}
}
