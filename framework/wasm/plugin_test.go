package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/pluginhost"
	"github.com/trainforge/trainforge/framework/pluginhost/pluginhosttest"
	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	wasmtest.Cleanup()
	os.Exit(code)
}

const everypointPkg = "github.com/trainforge/trainforge/test/plugins/everypoint"

type logs = pluginhosttest.Logs

func newLogs() (*logs, logr.Logger) { return pluginhosttest.NewLogs() }

// options are the options of the module m named name, with the
// configuration's defaults but a call timeout that a test can wait for,
// and the tests' shared compilation cache.
func options(m wasmtest.Module, name string) (Options, *logs) {
	o, l := pluginhosttest.Options(name)
	o.SHA256, o.StartTimeout, o.MaxMessageBytes = m.SHA256, time.Minute, 8<<20
	o.Backoff = pluginhost.Backoff{Initial: time.Second, Max: time.Minute}
	return Options{Options: o, Module: m.Path, MemoryLimitBytes: 256 << 20, MaxInstances: 4, CacheDir: wasmtest.CacheDir()}, l
}

func start(t *testing.T, opts Options) *Plugin {
	t.Helper()
	return pluginhosttest.Start(t, Start, opts)
}

func testInfo() *framework.Info { return pluginhosttest.Info() }

func testJob(name string) *trainer.TrainJob { return pluginhosttest.Job(name) }

// TestEveryPoint runs the SDK's everypoint plugin, built from the same
// source as its binary, as a module: every extension point answers through
// the protocol's client as the binary's answers do.
func TestEveryPoint(t *testing.T) {
	g := NewWithT(t)
	m := wasmtest.Build(t, everypointPkg)
	opts, logs := options(m, "EveryPoint")
	opts.PluginArgs = json.RawMessage(`{"greeting":"hello"}`)
	p := start(t, opts)

	g.Expect(p.Ready()).To(Succeed())
	g.Expect(p.Generation()).To(Equal(uint64(1)))
	d, impl, gen := p.Described()
	g.Expect(gen).To(Equal(uint64(1)))
	g.Expect(d.Name).To(Equal("EveryPoint"))
	g.Expect(d.Version).To(Equal("everypoint-test"))
	g.Expect(d.MLPolicyKeys).To(Equal([]string{"everypoint"}))
	g.Expect(d.Builds).To(Equal([]schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}}))
	g.Expect(impl.Configurable).To(BeNil(), "the host configures each instance itself")
	g.Expect(impl.Validator).NotTo(BeNil())
	g.Expect(impl.MLPolicyEnforcer).NotTo(BeNil())
	g.Expect(impl.PodGroupPolicyEnforcer).NotTo(BeNil())
	g.Expect(impl.Builder).NotTo(BeNil())
	g.Expect(impl.Watcher).To(BeIdenticalTo(p), "Watch answers what the plugin said at its start")
	g.Expect(impl.StatusReporter).NotTo(BeNil())

	ctx := context.Background()
	info := testInfo()
	g.Expect(impl.MLPolicyEnforcer.EnforceMLPolicy(ctx, info, testJob("llm"))).To(Succeed())
	g.Expect(info.Labels).To(HaveKeyWithValue("everypoint/ml", "hello"), "the greeting of the entry's args")
	g.Expect(impl.PodGroupPolicyEnforcer.EnforcePodGroupPolicy(ctx, info, testJob("llm"))).To(Succeed())
	g.Expect(info.Annotations).To(HaveKeyWithValue("everypoint/pg", "hello"))

	warnings, errs, err := impl.Validator.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: testJob("llm")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(errs).To(BeEmpty())
	g.Expect(warnings).To(Equal([]string{"validated llm"}))

	objs, err := impl.Builder.Build(ctx, info, testJob("llm"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(1))
	g.Expect(objs[0].GetKind()).To(Equal("ConfigMap"))
	g.Expect(objs[0].GetName()).To(Equal("llm-everypoint"))
	g.Expect(objs[0].Object["data"]).To(Equal(map[string]any{"greeting": "hello"}))

	sources, err := p.Watch(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sources).To(Equal([]framework.WatchSource{{Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Mapping: framework.MapByLabel, Label: "everypoint/job"}}))

	st, err := impl.StatusReporter.Status(ctx, nil, testJob("llm"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Conditions).To(ContainElement(HaveField("Type", "EveryPoint")))

	// The SDK's logger reaches the controller's log under the plugin's
	// name, with its key/value pairs, through the host's log function.
	g.Expect(logs.Matching(map[string]any{"plugin": "EveryPoint", "msg": "configured", "greeting": "hello"})).NotTo(BeEmpty(), logs.String)
}

// TestParallelCallsUseInstancesOfTheirOwn makes calls in parallel: each
// runs on an instance of its own (at most MaxInstances), each instance is
// configured, and every answer is right.
func TestParallelCallsUseInstancesOfTheirOwn(t *testing.T) {
	g := NewWithT(t)
	m := wasmtest.Build(t, everypointPkg)
	opts, _ := options(m, "EveryPoint")
	opts.PluginArgs = json.RawMessage(`{"greeting":"parallel"}`)
	opts.MaxInstances = 3
	p := start(t, opts)

	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := testJob(fmt.Sprintf("job-%d", i))
			objs, err := p.Client().Build(context.Background(), testInfo(), job)
			switch {
			case err != nil:
				errs <- err
			case len(objs) != 1 || objs[0].GetName() != job.Name+"-everypoint":
				errs <- fmt.Errorf("job %s: got %v", job.Name, objs)
			case objs[0].Object["data"].(map[string]any)["greeting"] != "parallel":
				errs <- fmt.Errorf("job %s: an instance was not configured: %v", job.Name, objs[0].Object["data"])
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n, mem := p.Instances()
	g.Expect(n).To(BeNumerically(">=", 1))
	g.Expect(n).To(BeNumerically("<=", 3), "no more instances than maxInstances")
	g.Expect(mem).To(BeNumerically("<=", uint64(n)*uint64(opts.MemoryLimitBytes)))
}

// TestChecksum shows that a module whose checksum is not the configured
// one is refused before it is compiled, naming the plugin, the file and
// both sums.
func TestChecksum(t *testing.T) {
	m := wasmtest.Build(t, everypointPkg)
	opts, _ := options(m, "EveryPoint")
	opts.SHA256 = strings.Repeat("ab", 32)
	_, err := Start(context.Background(), opts)
	if err == nil {
		t.Fatal("Start succeeded with a wrong sha256")
	}
	for _, want := range []string{`"EveryPoint"`, m.Path, m.SHA256, opts.SHA256} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}

// TestCompiledOnce starts the same module twice: the second start takes
// the compiled module from the cache.
func TestCompiledOnce(t *testing.T) {
	m := wasmtest.Build(t, everypointPkg)
	opts, _ := options(m, "EveryPoint")
	opts.MemoryLimitBytes = 200 << 20 // a key no other test uses
	before := compileCount()
	start(t, opts)
	start(t, opts)
	if got := compileCount() - before; got != 1 {
		t.Errorf("the module was compiled %d times for two plugins, want once", got)
	}
}

func compileCount() int {
	compiles.Lock()
	defer compiles.Unlock()
	return compiles.n
}

// TestNotAPlugin refuses modules that are not plugins, saying what they
// are.
func TestNotAPlugin(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) wasmtest.Module {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return wasmtest.Module{Path: path, SHA256: sha256Hex(b)}
	}
	for _, tc := range []struct {
		name string
		m    wasmtest.Module
		want string
	}{
		{"not wasm", write("text.wasm", []byte("#!/bin/sh\n")), "not a WebAssembly module"},
		// (module) : the smallest valid module, which exports nothing.
		{"empty module", write("empty.wasm", []byte{0, 'a', 's', 'm', 1, 0, 0, 0}), "exports no trainforge_call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, _ := options(tc.m, "Nothing")
			_, err := Start(context.Background(), opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.m.Path) {
				t.Errorf("Start: %v, want an error naming %s and saying %q", err, tc.m.Path, tc.want)
			}
		})
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestCommandModule: a plugin built without -buildmode=c-shared is a WASI
// command, which cannot serve calls; it is refused before it runs, with
// the flag to add.
func TestCommandModule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "command.wasm")
	cmd := exec.Command("go", "build", "-o", path, everypointPkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts, _ := options(wasmtest.Module{Path: path, SHA256: sha256Hex(b)}, "EveryPoint")
	_, err = Start(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "WASI command") || !strings.Contains(err.Error(), "-buildmode=c-shared") {
		t.Fatalf("Start of a command module: %v, want an error saying to build it with -buildmode=c-shared", err)
	}
}

// TestCompilationCacheDir starts a module with pluginHost.wasmCacheDir,
// then again as a new process would (no machine code in memory): the
// second compilation reads what the first wrote into the directory.
func TestCompilationCacheDir(t *testing.T) {
	m := wasmtest.Build(t, everypointPkg)
	dir := filepath.Join(t.TempDir(), "wasm-cache")
	opts, _ := options(m, "EveryPoint")
	opts.MemoryLimitBytes = 190 << 20 // a key no other test uses
	opts.CacheDir = dir
	start(t, opts).Close()
	var files []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatalf("pluginHost.wasmCacheDir %s holds no compiled code after the module's start", dir)
	}
	forgetMachineCode(dir)
	p := start(t, opts)
	if _, err := p.Client().Build(context.Background(), testInfo(), testJob("llm")); err != nil {
		t.Fatalf("Build with the module's code from %s: %v", dir, err)
	}

	// A directory the controller may not make is the plugin's error,
	// naming the setting.
	opts.CacheDir = filepath.Join(files[0], "sub")
	opts.MemoryLimitBytes = 180 << 20
	if _, err := Start(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "pluginHost.wasmCacheDir") {
		t.Errorf("Start with a file as wasmCacheDir: %v, want an error naming pluginHost.wasmCacheDir", err)
	}
}
