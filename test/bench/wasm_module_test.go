package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/wasm"
	"github.com/trainforge/trainforge/framework/wasm/abi"
	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// wasmModules are the modules BenchmarkWasmModule measures, as
// -wasm-modules=a.wasm,b.wasm (for instance a build of another commit,
// to compare); by default it takes the MPI plugin's module from
// TRAINFORGE_TEST_BIN/wasm (make wasm-bin), or builds it from this tree as
// make wasm-bin does. A module's plugin is told by its file name
// (trainforge-plugin-mpi.wasm, mpi.wasm, base-mpi.wasm: "mpi").
var wasmModules = flag.String("wasm-modules", "", "comma-separated WebAssembly modules of vendor plugins for BenchmarkWasmModule (default: build trainforge-plugin-mpi as make wasm-bin does)")

// wasmCases are the TrainJobs of make conformance-wasm, one per plugin,
// with the args it configures the plugin with; a plugin without one gets
// the last of sdktest.DefaultCases (4 nodes of 2 GPUs).
var wasmCases = map[string]struct{ file, args string }{
	"mpi":          {file: "plugins/mpi/testdata/deepspeed-distributed.yaml"},
	"flux":         {file: "plugins/flux/testdata/flux-distributed.yaml"},
	"volcano":      {file: "plugins/volcano/testdata/gang.yaml", args: `{"schedulerName": "volcano"}`},
	"sharedmemory": {args: `{"sizeLimit": "16Gi"}`},
}

// wasmRepeatCalls are the reconciles of the same TrainJob after the
// first, for after-100-MiB.
const wasmRepeatCalls = 100

// wasmMemoryLimitPages is the wazero memory limit of the runtime, as the
// host sets it from wasm.memoryLimit (128Mi, the default).
const wasmMemoryLimitPages = 128 << 20 / (64 << 10)

// BenchmarkWasmModule measures what a vendor plugin's WebAssembly module
// costs the controller, the figures of docs/benchmarks.md ("WebAssembly
// modules"):
//
//   - module-MB: the module's size;
//   - compile-s: preparing the module as the host does
//     (wasm.PrepareModule: its data in a memory image on Linux, the
//     interruption checks written into its code) and wazero compiling it
//     cold (a new runtime of the host's configuration, no compilation
//     cache);
//     compile-heap-MiB is the peak growth of this process's Go heap
//     meanwhile, module-heap-MiB what stays on it with the loaded module
//     (its decoded form; the machine code is mapped apart);
//   - idle-MiB: one instance's linear memory once started (its
//     initialisation and main), and after Configure;
//   - peak-MiB: its linear memory after Validate, the Enforce calls and
//     Build of one TrainJob like the conformance cases (a Go guest's linear
//     memory only grows, so its size after the calls is its peak);
//   - after-100-MiB: its linear memory after 100 more such reconciles,
//     and reconcile-ms the time of one of them (the module's calls of one
//     TrainJob, one after the other, on one thread: their CPU time);
//     first-reconcile-ms is the instance's first, which does what the
//     guest does once (its first key, its codecs' caches);
//   - configured-resident-MiB, after-100-resident-MiB: the part of the
//     linear memory that is resident (Linux), once configured and after
//     the 100 reconciles; configured-own-MiB, after-100-own-MiB: the part
//     of that the instance wrote, its alone (the rest is pages of the
//     memory image, image-MiB, that every instance maps);
//   - instance-heap-MiB: the growth of the host's Go heap for the
//     instance, besides its linear memory.
//
// Each iteration compiles the module anew; a single iteration is enough
// (-benchtime=1x), as make bench and make test-bench-smoke run it.
func BenchmarkWasmModule(b *testing.B) {
	modules := strings.Split(*wasmModules, ",")
	if prebuilt := filepath.Join(os.Getenv("TRAINFORGE_TEST_BIN"), "wasm", "trainforge-plugin-mpi.wasm"); *wasmModules == "" && os.Getenv("TRAINFORGE_TEST_BIN") != "" {
		if _, err := os.Stat(prebuilt); err == nil {
			modules = []string{prebuilt}
		}
	}
	if *wasmModules == "" && len(modules) == 1 && modules[0] == "" {
		dir := b.TempDir()
		out := filepath.Join(dir, "trainforge-plugin-mpi.wasm")
		cmd := exec.Command("go", append(append([]string{"build"}, abi.GoBuildFlags()...), "-o", out, "github.com/trainforge/trainforge/cmd/trainforge-plugin-mpi")...)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("building trainforge-plugin-mpi as wasm: %v\n%s", err, msg)
		}
		modules = []string{out}
	}
	for _, path := range modules {
		name := pluginOfModule(path)
		b.Run("module="+strings.TrimSuffix(filepath.Base(path), ".wasm"), func(b *testing.B) {
			bin, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var m wasmFigures
			for b.Loop() {
				m = measureWasmModule(b, ctx, name, bin)
			}
			b.ReportMetric(float64(len(bin))/1e6, "module-MB")
			b.ReportMetric(m.compile.Seconds(), "compile-s")
			b.ReportMetric(mib(m.compileHeap), "compile-heap-MiB")
			b.ReportMetric(mib(m.idle), "idle-MiB")
			b.ReportMetric(mib(m.configured), "configured-MiB")
			b.ReportMetric(mib(m.peak), "peak-MiB")
			b.ReportMetric(mib(m.repeated), "after-100-MiB")
			b.ReportMetric(mib(m.configuredFootprint.Resident), "configured-resident-MiB")
			b.ReportMetric(mib(m.configuredFootprint.Own), "configured-own-MiB")
			b.ReportMetric(mib(m.repeatedFootprint.Resident), "after-100-resident-MiB")
			b.ReportMetric(mib(m.repeatedFootprint.Own), "after-100-own-MiB")
			b.ReportMetric(mib(uint64(m.image)), "image-MiB")
			b.ReportMetric(float64(m.firstReconcile.Microseconds())/1000, "first-reconcile-ms")
			b.ReportMetric(float64(m.reconcile.Microseconds())/1000, "reconcile-ms")
			b.ReportMetric(mib(m.instanceHeap), "instance-heap-MiB")
			b.ReportMetric(mib(m.moduleHeap), "module-heap-MiB")
		})
	}
}

// pluginOfModule returns the plugin a module's file name names.
func pluginOfModule(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".wasm")
	if i := strings.LastIndexAny(name, "-"); i >= 0 {
		name = name[i+1:]
	}
	return name
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// wasmFigures are one measurement of a module.
type wasmFigures struct {
	compile                time.Duration
	compileHeap            uint64
	idle, configured, peak uint64
	repeated               uint64
	// configuredFootprint and repeatedFootprint are the instance's
	// resident memory once configured and after the repeated calls.
	configuredFootprint, repeatedFootprint wasmtest.Footprint
	// firstReconcile is the time of the instance's first reconcile,
	// reconcile that of one of the repeated ones.
	firstReconcile, reconcile time.Duration
	// image is the size of the module's memory image (0: none).
	image        int
	moduleHeap   uint64
	instanceHeap uint64
}

// measureWasmModule compiles the module cold, starts one instance and
// calls it as the host does for one TrainJob.
func measureWasmModule(b *testing.B, ctx context.Context, name string, bin []byte) wasmFigures {
	var f wasmFigures
	runtime.GC()
	debug.FreeOSMemory()
	base := heapBytes()
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		top := base
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- top
				return
			case <-tick.C:
				top = max(top, heapBytes())
			}
		}
	}()
	// Loading a module, as the host does: prepare it (the data image, the
	// interruption checks), then compile it in a runtime of the
	// configuration it needs.
	start := time.Now()
	prepared := wasm.PrepareModule(bin, wasmMemoryLimitPages)
	defer prepared.Close()
	f.image = prepared.ImageBytes
	rt := wazero.NewRuntimeWithConfig(ctx, prepared.RuntimeConfig(wasmMemoryLimitPages))
	defer rt.Close(ctx)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		b.Fatal(err)
	}
	var logged atomic.Value
	if _, err := rt.NewHostModuleBuilder(abi.HostModule).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, m api.Module, stack []uint64) {
		if s, ok := m.Memory().Read(uint32(stack[0]), uint32(stack[1])); ok {
			logged.Store(string(s))
		}
	}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, nil).Export(abi.LogImport).
		Instantiate(ctx); err != nil {
		b.Fatal(err)
	}
	mod, err := prepared.Compile(ctx, rt)
	f.compile = time.Since(start)
	close(stop)
	f.compileHeap = <-peak - base
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	// What the loaded module keeps on the Go heap besides its machine
	// code (mapped apart): its decoded form.
	if after := heapBytes(); after > base {
		f.moduleHeap = after - base
	}

	before := heapBytes()
	in, err := rt.InstantiateModule(prepared.Context(ctx), mod, wazero.NewModuleConfig().WithName(name).WithArgs(name).WithStartFunctions(abi.InitializeExport))
	if err != nil {
		b.Fatalf("instantiating %s: %v", name, err)
	}
	defer in.Close(ctx)
	if res, err := in.ExportedFunction(abi.StartExport).Call(ctx); err != nil || res[0] != 0 {
		b.Fatalf("%s: %v %v: %v", abi.StartExport, res, err, logged.Load())
	}
	f.idle = uint64(in.Memory().Size())
	runtime.GC()
	// The rest of the instance: its structures besides its linear memory,
	// which the host's allocator maps apart from the Go heap on Linux.
	onHeap := uint64(0)
	if runtime.GOOS != "linux" {
		onHeap = f.idle
	}
	if after := heapBytes(); after > before+onHeap {
		f.instanceHeap = after - before - onHeap
	}

	call := func(method abi.Method, req, resp proto.Message) {
		b.Helper()
		if err := callWasm(ctx, in, method, req, resp); err != nil {
			b.Fatalf("%s: %v", method, err)
		}
	}
	desc := &pluginv1.DescribeResponse{}
	call(abi.MethodDescribe, &pluginv1.DescribeRequest{}, desc)
	c, ok := wasmCases[name]
	call(abi.MethodConfigure, &pluginv1.ConfigureRequest{Args: []byte(c.args)}, &pluginv1.ConfigureResponse{})
	f.configured = uint64(in.Memory().Size())
	f.configuredFootprint = footprint(b, in)

	var tc sdktest.Case
	if ok && c.file != "" {
		if tc, err = sdktest.LoadCase(name, filepath.Join("../..", c.file), filepath.Join("../..", c.file)); err != nil {
			b.Fatal(err)
		}
	} else {
		cases := sdktest.DefaultCases(framework.Description{Name: desc.GetName(), MLPolicyKeys: desc.GetMlPolicyKeys(), PodGroupPolicyKeys: desc.GetPodGroupPolicyKeys()})
		tc = cases[len(cases)-1]
	}
	info, err := framework.NewInfo(tc.Job, tc.Runtime)
	if err != nil {
		b.Fatal(err)
	}
	infoJSON, err := json.Marshal(info)
	if err != nil {
		b.Fatal(err)
	}
	jobJSON, err := json.Marshal(tc.Job)
	if err != nil {
		b.Fatal(err)
	}
	points := map[pluginv1.ExtensionPoint]bool{}
	for _, p := range desc.GetPoints() {
		points[p] = true
	}
	reconcile := func() {
		if points[pluginv1.ExtensionPoint_EXTENSION_POINT_VALIDATE] {
			call(abi.MethodValidate, &pluginv1.ValidateRequest{Info: infoJSON, NewTrainJob: jobJSON}, &pluginv1.ValidateResponse{})
		}
		if points[pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_ML_POLICY] {
			call(abi.MethodEnforceMLPolicy, &pluginv1.EnforceMLPolicyRequest{Info: infoJSON, TrainJob: jobJSON, AcceptsInfoChanges: true}, &pluginv1.EnforceMLPolicyResponse{})
		}
		if points[pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_POD_GROUP_POLICY] {
			call(abi.MethodEnforcePodGroupPolicy, &pluginv1.EnforcePodGroupPolicyRequest{Info: infoJSON, TrainJob: jobJSON, AcceptsInfoChanges: true}, &pluginv1.EnforcePodGroupPolicyResponse{})
		}
		if points[pluginv1.ExtensionPoint_EXTENSION_POINT_BUILD] {
			call(abi.MethodBuild, &pluginv1.BuildRequest{Info: infoJSON, TrainJob: jobJSON}, &pluginv1.BuildResponse{})
		}
	}
	start = time.Now()
	reconcile()
	f.firstReconcile = time.Since(start)
	f.peak = uint64(in.Memory().Size())
	// The same instance serves the TrainJobs that follow: what its memory
	// reaches after many, with the garbage of each collected or not yet.
	start = time.Now()
	for range wasmRepeatCalls {
		reconcile()
	}
	f.reconcile = time.Since(start) / wasmRepeatCalls
	f.repeated = uint64(in.Memory().Size())
	f.repeatedFootprint = footprint(b, in)
	return f
}

// footprint is what the instance's linear memory costs the process; zero
// where the system does not say (not Linux).
func footprint(b *testing.B, in api.Module) wasmtest.Footprint {
	f, err := wasmtest.MemoryFootprint(in.Memory())
	if err != nil && runtime.GOOS == "linux" {
		b.Fatal(err)
	}
	return f
}

// callWasm makes one call of the ABI (framework/wasm/abi): the request in
// a buffer of the guest's, the answer read back and freed.
func callWasm(ctx context.Context, in api.Module, method abi.Method, req, resp proto.Message) error {
	data, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	res, err := in.ExportedFunction(abi.MallocExport).Call(ctx, uint64(len(data)))
	if err != nil {
		return err
	}
	if !in.Memory().Write(uint32(res[0]), data) {
		return fmt.Errorf("writing the request at %#x", res[0])
	}
	res, err = in.ExportedFunction(abi.CallExport).Call(ctx, uint64(method), res[0], uint64(len(data)))
	if err != nil {
		return err
	}
	ptr, size := uint32(res[0]>>32), uint32(res[0])
	answer, ok := in.Memory().Read(ptr, size)
	if !ok || size == 0 {
		return fmt.Errorf("reading the answer at %#x (%d bytes)", ptr, size)
	}
	answer = append([]byte(nil), answer...)
	if _, err := in.ExportedFunction(abi.FreeExport).Call(ctx, uint64(ptr)); err != nil {
		return err
	}
	if answer[0] != abi.AnswerOK {
		st := &spb.Status{}
		if err := proto.Unmarshal(answer[1:], st); err != nil {
			return err
		}
		return fmt.Errorf("answered code %d: %s", st.GetCode(), st.GetMessage())
	}
	return proto.Unmarshal(answer[1:], resp)
}

// heapBytes is the Go heap's live and not yet swept objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
