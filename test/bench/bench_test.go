package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/builtin/coscheduling"
	"github.com/trainforge/trainforge/builtin/jobset"
	"github.com/trainforge/trainforge/builtin/torch"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/external"
	"github.com/trainforge/trainforge/framework/frameworktest"
	"github.com/trainforge/trainforge/framework/remote"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/framework/wasm"
	"github.com/trainforge/trainforge/framework/wasm/abi"
	"github.com/trainforge/trainforge/test/testenv"
)

// The paths a call takes: the sub-benchmark names' path= element.
const (
	// inProcess calls the built-in directly.
	inProcess = "in-process"
	// codecOnly calls the built-in through the host's remote.Client and
	// the plugin side's remote.Server in this process, joined by direct:
	// the external path's JSON, JSON Patch and protobuf work without its
	// transport (gRPC, TLS, the socket, the second process).
	codecOnly = "codec-only"
	// externalPath calls the built-in served by trainforge-builtin-plugin
	// through the real host, framework/external.
	externalPath = "external"
	// wasmPath calls the built-in compiled to WebAssembly
	// (trainforge-builtin-plugin built with GOOS=wasip1) through the real
	// host, framework/wasm, in this process.
	wasmPath = "wasm"
)

var paths = []string{inProcess, codecOnly, externalPath, wasmPath}

// wasms are the built-in plugins run as WebAssembly modules, by name;
// TestMain starts them with the external ones.
var wasms map[string]*wasm.Plugin

// externals are the built-in plugins served out of process by
// trainforge-builtin-plugin, by name. TestMain starts them when benchmarks
// run; they are shared by every benchmark.
var externals map[string]*external.Plugin

// pluginBinary is trainforge-builtin-plugin, built by TestMain.
var pluginBinary string

// TestMain builds cmd/trainforge-builtin-plugin once and starts one
// process per built-in through the real host, when benchmarks are asked
// for. Without -bench it only runs the (absent) tests, so that `go test
// ./...` pays for no build and no process.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	code := runWithPlugins(m)
	if wasmDir != "" {
		_ = os.RemoveAll(wasmDir)
	}
	os.Exit(code)
}

func runWithPlugins(m *testing.M) int {
	// Built for the run, or taken from TRAINFORGE_TEST_BIN (make
	// test-bench-smoke and make bench set it).
	binaries := testenv.NewBinaries("cmd/trainforge-builtin-plugin")
	defer binaries.Cleanup()
	bin, err := binaries.Path("cmd/trainforge-builtin-plugin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pluginBinary = bin

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	externals = map[string]*external.Plugin{}
	defer func() {
		for _, p := range externals {
			p.Close()
		}
	}()
	// As the controller runs an entry of each (with the configuration's
	// defaults).
	var entries []configv1alpha1.PluginConfig
	for _, name := range configv1alpha1.DefaultPlugins {
		entries = append(entries, configv1alpha1.PluginConfig{Name: name, External: &configv1alpha1.ExternalPlugin{Command: bin, Args: []string{name}}})
	}
	// A memory budget that holds every instance the defaults allow (the
	// default budget holds fewer), so that the benchmark measures the host
	// as it was before the budget, with every instance it may run.
	budget := configv1alpha1.DefaultWasmMemoryLimit.DeepCopy()
	budget.Mul(int64(len(entries)) * int64(configv1alpha1.DefaultWasmMaxInstances))
	cfg := configv1alpha1.Defaulted(&configv1alpha1.Configuration{Plugins: entries, PluginHost: configv1alpha1.PluginHostConfig{WasmMemoryBudget: &budget}})
	for i, name := range configv1alpha1.DefaultPlugins {
		p, err := external.Start(ctx, external.OptionsFor(cfg, i, logr.Discard()))
		if err != nil {
			fmt.Fprintf(os.Stderr, "starting %s out of process: %v\n", name, err)
			return 1
		}
		externals[name] = p
		if err := p.Ready(); err != nil {
			fmt.Fprintf(os.Stderr, "starting %s out of process: %v\n", name, err)
			return 1
		}
	}
	if err := startWasms(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		for _, p := range wasms {
			p.Close()
		}
	}()
	return m.Run()
}

// implementationOf returns what the framework calls of p: what a plugin
// behind the protocol described, else what p's type implements.
func implementationOf(p framework.Plugin) framework.Implementation {
	if s, ok := p.(frameworkruntime.Supervised); ok {
		_, impl, _ := s.Described()
		return impl
	}
	return framework.ImplementationOf(p)
}

// startWasms builds trainforge-builtin-plugin as a WebAssembly module and
// runs one wasm plugin of each built-in, as the controller runs a wasm
// entry of each with the configuration's defaults: the four share one
// compiled module.
func startWasms(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "bench-wasm-")
	if err != nil {
		return err
	}
	wasmDir = dir
	module := filepath.Join(dir, "trainforge-builtin-plugin.wasm")
	cmd := exec.Command("go", append(append([]string{"build"}, abi.GoBuildFlags()...), "-o", module, "github.com/trainforge/trainforge/cmd/trainforge-builtin-plugin")...)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building trainforge-builtin-plugin as wasm: %v\n%s", err, out)
	}
	data, err := os.ReadFile(module)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	var entries []configv1alpha1.PluginConfig
	for _, name := range configv1alpha1.DefaultPlugins {
		entries = append(entries, configv1alpha1.PluginConfig{Name: name, Wasm: &configv1alpha1.WasmPlugin{
			Module: module, SHA256: hex.EncodeToString(sum[:]), Args: []string{name},
		}})
	}
	// A memory budget that holds every instance the defaults allow (the
	// default budget holds fewer), so that the benchmark measures the host
	// as it was before the budget, with every instance it may run.
	budget := configv1alpha1.DefaultWasmMemoryLimit.DeepCopy()
	budget.Mul(int64(len(entries)) * int64(configv1alpha1.DefaultWasmMaxInstances))
	cfg := configv1alpha1.Defaulted(&configv1alpha1.Configuration{Plugins: entries, PluginHost: configv1alpha1.PluginHostConfig{WasmMemoryBudget: &budget}})
	wasms = map[string]*wasm.Plugin{}
	for i, name := range configv1alpha1.DefaultPlugins {
		p, err := wasm.Start(ctx, wasm.OptionsFor(cfg, i, logr.Discard()))
		if err != nil {
			return fmt.Errorf("starting %s as wasm: %v", name, err)
		}
		wasms[name] = p
	}
	return nil
}

// wasmDir holds the module startWasms built; TestMain removes it.
var wasmDir string

// pluginOf returns the built-in plugin name on a path.
func pluginOf(b *testing.B, path, name string) framework.Plugin {
	b.Helper()
	switch path {
	case inProcess:
		return builtin.Registry()[name](framework.Host{})
	case codecOnly:
		p, err := remote.Dial(context.Background(), remote.NewClient(direct{remote.NewServer(builtin.Registry()[name](framework.Host{}))}, remote.Limits{}))
		if err != nil {
			b.Fatal(err)
		}
		// As a host configures a plugin it starts: with its entry's args
		// (here none, as the default plugin list has).
		if err := p.Client().Configure(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		return p
	case wasmPath:
		p := wasms[name]
		if p == nil {
			b.Fatalf("no wasm %s: TestMain starts the wasm plugins only when -bench is set", name)
		}
		return p
	}
	p := externals[name]
	if p == nil {
		b.Fatalf("no external %s: TestMain starts the plugin processes only when -bench is set", name)
	}
	return p
}

// pids returns the processes of the named plugins on a path: none but
// on the external path.
func pids(path string, names ...string) []int {
	if path != externalPath {
		return nil
	}
	var out []int
	for _, name := range names {
		if p := externals[name]; p != nil {
			out = append(out, p.Pid())
		}
	}
	return out
}

// seed returns a seed example's runtime and TrainJob, the TrainJob with
// the namespace, UID and generation that a stored one has.
func seed(b *testing.B, file string) (*trainer.TrainingRuntimeSpec, *trainer.TrainJob) {
	b.Helper()
	spec, job := frameworktest.Seed(b, file)
	job.Namespace = "default"
	job.UID = types.UID("4f1c2f0e-6b1d-4c59-9a5e-0d7f2d6c1a10")
	job.Generation = 1
	return spec, job
}

// afterML returns a seed's Info after the ML enforcement (Torch,
// in-process) and the refresh of derived values: the Info that
// Framework.Enforce hands to the pod-group plugins, and, for a runtime
// without a pod-group policy, to the builders.
func afterML(b *testing.B, file string) (*framework.Info, *trainer.TrainJob) {
	b.Helper()
	spec, job := seed(b, file)
	info := frameworktest.NewInfo(b, job, spec)
	if err := torch.New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		b.Fatal(err)
	}
	if err := framework.RefreshDerived(info, job.Name); err != nil {
		b.Fatal(err)
	}
	return info, job
}

func copyInfo(b *testing.B, info *framework.Info) *framework.Info {
	b.Helper()
	c, err := info.Copy()
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// jsonOf encodes v for the checks that both paths give the same result.
func jsonOf(b *testing.B, v any) string {
	b.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

func same(b *testing.B, what string, want, got any) {
	b.Helper()
	if diff := cmp.Diff(jsonOf(b, want), jsonOf(b, got)); diff != "" {
		b.Fatalf("%s differs from the in-process built-in's (-in-process +this path):\n%s", what, diff)
	}
}

// validate calls Validate as the framework does: through the plugin's
// Implementation.
func validate(ctx context.Context, p framework.Plugin, info *framework.Info, oldJob, newJob *trainer.TrainJob) ([]string, field.ErrorList, error) {
	return implementationOf(p).Validator.Validate(ctx, framework.ValidateRequest{Info: info, OldJob: oldJob, NewJob: newJob})
}

// running returns the object the API server would hold for a JobSet that
// Build made, once JobSet's controller has resumed it and every
// replicatedJob runs: what the Status point reads on most reconciles.
func running(b *testing.B, built *unstructured.Unstructured) *unstructured.Unstructured {
	b.Helper()
	js := &jobsetv1alpha2.JobSet{}
	if err := framework.FromUnstructured(built, js); err != nil {
		b.Fatal(err)
	}
	js.UID = types.UID("0b6e9a43-94b4-4d0e-8f5e-3c1f7b2a9d55")
	js.ResourceVersion = "48213"
	js.Generation = 1
	js.CreationTimestamp = metav1.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)
	js.Status.Conditions = []metav1.Condition{{
		Type:               string(jobsetv1alpha2.JobSetSuspended),
		Status:             metav1.ConditionFalse,
		Reason:             "ResumeJobs",
		Message:            "jobset is resumed",
		LastTransitionTime: metav1.Date(2026, 1, 5, 9, 30, 2, 0, time.UTC),
	}}
	for _, rj := range js.Spec.ReplicatedJobs {
		js.Status.ReplicatedJobsStatus = append(js.Status.ReplicatedJobsStatus, jobsetv1alpha2.ReplicatedJobStatus{
			Name: rj.Name, Ready: rj.Replicas, Active: rj.Replicas,
		})
	}
	u, err := framework.ToUnstructured(js, jobset.GVK)
	if err != nil {
		b.Fatal(err)
	}
	return u
}

// pointCase is the benchmark of one extension point.
type pointCase struct {
	point framework.ExtensionPoint
	// plugin is the built-in that owns the point for the input.
	plugin string
	// prepare makes the input, calls p once to check that its result is
	// the in-process built-in's, and returns the call to time.
	prepare func(b *testing.B, p framework.Plugin) func(context.Context) error
}

var pointCases = []pointCase{
	{
		// The admission path: the Info of the Torch seed, before any
		// enforcement, and a TrainJob being created. Validate changes
		// nothing, so every iteration validates the same Info.
		point: framework.PointValidate, plugin: torch.Name,
		prepare: func(b *testing.B, p framework.Plugin) func(context.Context) error {
			spec, job := seed(b, frameworktest.SeedTorch)
			info := frameworktest.NewInfo(b, job, spec)
			call := func(ctx context.Context, p framework.Plugin) ([]string, error) {
				w, errs, err := validate(ctx, p, info, nil, job)
				if err != nil {
					return nil, err
				}
				return w, errs.ToAggregate()
			}
			want, err := call(context.Background(), torch.New())
			if err != nil {
				b.Fatalf("the seed does not validate: %v", err)
			}
			got, err := call(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			same(b, "Validate's warnings", want, got)
			return func(ctx context.Context) error {
				_, err := call(ctx, p)
				return err
			}
		},
	},
	{
		// The Torch seed's Info, as NewInfo makes it. Enforce changes
		// Info: each iteration enforces a fresh Info.Copy (see
		// BenchmarkInfoCopy/info=seed-torch).
		point: framework.PointEnforceMLPolicy, plugin: torch.Name,
		prepare: func(b *testing.B, p framework.Plugin) func(context.Context) error {
			spec, job := seed(b, frameworktest.SeedTorch)
			base := frameworktest.NewInfo(b, job, spec)
			enforce := func(ctx context.Context, p framework.Plugin, info *framework.Info) error {
				return implementationOf(p).MLPolicyEnforcer.EnforceMLPolicy(ctx, info, job)
			}
			want, got := copyInfo(b, base), copyInfo(b, base)
			if err := enforce(context.Background(), torch.New(), want); err != nil {
				b.Fatal(err)
			}
			if err := enforce(context.Background(), p, got); err != nil {
				b.Fatal(err)
			}
			same(b, "the enforced Info", want, got)
			return func(ctx context.Context) error {
				info, err := base.Copy()
				if err != nil {
					return err
				}
				return enforce(ctx, p, info)
			}
		},
	},
	{
		// The gang seed (10 Torch nodes, coscheduling) after the ML
		// enforcement. Each iteration enforces a fresh Info.Copy (see
		// BenchmarkInfoCopy/info=seed-coscheduling-after-ml).
		point: framework.PointEnforcePodGroupPolicy, plugin: coscheduling.Name,
		prepare: func(b *testing.B, p framework.Plugin) func(context.Context) error {
			base, job := afterML(b, frameworktest.SeedCoscheduling)
			enforce := func(ctx context.Context, p framework.Plugin, info *framework.Info) error {
				return implementationOf(p).PodGroupPolicyEnforcer.EnforcePodGroupPolicy(ctx, info, job)
			}
			want, got := copyInfo(b, base), copyInfo(b, base)
			if err := enforce(context.Background(), coscheduling.New(), want); err != nil {
				b.Fatal(err)
			}
			if err := enforce(context.Background(), p, got); err != nil {
				b.Fatal(err)
			}
			if jsonOf(b, want) == jsonOf(b, base) {
				b.Fatal("EnforcePodGroupPolicy changed nothing: the input does not exercise the plugin")
			}
			same(b, "the enforced Info", want, got)
			return func(ctx context.Context) error {
				info, err := base.Copy()
				if err != nil {
					return err
				}
				return enforce(ctx, p, info)
			}
		},
	},
	{
		// The Torch seed's enforced Info. Build does not change Info
		// (checked here), so every iteration builds from the same one.
		point: framework.PointBuild, plugin: jobset.Name,
		prepare: func(b *testing.B, p framework.Plugin) func(context.Context) error {
			info, job := afterML(b, frameworktest.SeedTorch)
			before := jsonOf(b, info)
			build := func(ctx context.Context, p framework.Plugin) ([]framework.Object, error) {
				return implementationOf(p).Builder.Build(ctx, info, job)
			}
			want, err := build(context.Background(), jobset.New())
			if err != nil {
				b.Fatal(err)
			}
			got, err := build(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			if len(got) != 1 {
				b.Fatalf("built %d objects, want the JobSet", len(got))
			}
			same(b, "the built objects", want, got)
			if jsonOf(b, info) != before {
				b.Fatal("Build changed Info: the benchmark must build from a copy")
			}
			return func(ctx context.Context) error {
				_, err := build(ctx, p)
				return err
			}
		},
	},
	{
		// The JobSet that Build makes from the Torch seed, as the API
		// server holds it once running (status set by running). Status
		// changes neither the TrainJob nor the objects.
		point: framework.PointStatus, plugin: jobset.Name,
		prepare: func(b *testing.B, p framework.Plugin) func(context.Context) error {
			info, job := afterML(b, frameworktest.SeedTorch)
			objs, err := jobset.New().(framework.Builder).Build(context.Background(), info, job)
			if err != nil {
				b.Fatal(err)
			}
			owned := []*unstructured.Unstructured{running(b, objs[0].Unstructured)}
			status := func(ctx context.Context, p framework.Plugin) (*framework.StatusReport, error) {
				return implementationOf(p).StatusReporter.Status(ctx, info, job, owned)
			}
			want, err := status(context.Background(), jobset.New())
			if err != nil {
				b.Fatal(err)
			}
			got, err := status(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			if got == nil || len(got.JobsStatus) == 0 {
				b.Fatalf("Status = %+v, want the jobs' status", got)
			}
			same(b, "the status", want, got)
			return func(ctx context.Context) error {
				_, err := status(ctx, p)
				return err
			}
		},
	},
}

// BenchmarkCall times one call of each extension point of the built-in
// that owns it, in-process, out of process and as wasm. Watch is left out: no
// built-in implements it, and the host answers it from what the plugin
// said at start-up, without a call.
func BenchmarkCall(b *testing.B) {
	for _, pc := range pointCases {
		b.Run("point="+string(pc.point), func(b *testing.B) {
			for _, path := range paths {
				b.Run("path="+path, func(b *testing.B) {
					call := pc.prepare(b, pluginOf(b, path, pc.plugin))
					ctx := context.Background()
					b.ReportAllocs()
					cpu := startCPU(b, pids(path, pc.plugin)...)
					for b.Loop() {
						if err := call(ctx); err != nil {
							b.Fatal(err)
						}
					}
					cpu.report(b)
				})
			}
		})
	}
}

// BenchmarkInfoCopy times Info.Copy of the inputs that the Enforce
// benchmarks and BenchmarkReconcile copy on every iteration, so that
// readers can subtract it.
func BenchmarkInfoCopy(b *testing.B) {
	cases := []struct {
		name string
		info func(b *testing.B) *framework.Info
	}{
		{"seed-torch", func(b *testing.B) *framework.Info {
			spec, job := seed(b, frameworktest.SeedTorch)
			return frameworktest.NewInfo(b, job, spec)
		}},
		{"seed-coscheduling", func(b *testing.B) *framework.Info {
			spec, job := seed(b, frameworktest.SeedCoscheduling)
			return frameworktest.NewInfo(b, job, spec)
		}},
		{"seed-coscheduling-after-ml", func(b *testing.B) *framework.Info {
			info, _ := afterML(b, frameworktest.SeedCoscheduling)
			return info
		}},
	}
	for _, tc := range cases {
		b.Run("info="+tc.name, func(b *testing.B) {
			info := tc.info(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := info.Copy(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// newFramework enables the four built-ins in the default order, all
// in-process or all out of process.
func newFramework(b *testing.B, path string) *frameworkruntime.Framework {
	b.Helper()
	var specs []frameworkruntime.PluginSpec
	for _, name := range configv1alpha1.DefaultPlugins {
		s := frameworkruntime.PluginSpec{Name: name}
		if path != inProcess {
			s.Plugin = pluginOf(b, path, name)
		}
		specs = append(specs, s)
	}
	fw, err := frameworkruntime.New(context.Background(), builtin.Registry(), specs)
	if err != nil {
		b.Fatal(err)
	}
	return fw
}

// reconciled is what one reconcile's plugin work produces.
type reconciled struct {
	Info    *framework.Info
	Objects []frameworkruntime.BuiltObject
	Status  []*framework.StatusReport
}

// reconcile runs the plugin work of one reconcile, as the controller does
// after resolving the runtime: Enforce, Build, then Status over the owned
// objects that list returns. It starts from a copy of base, which it
// leaves alone.
func reconcile(ctx context.Context, fw *frameworkruntime.Framework, base *framework.Info, job *trainer.TrainJob, list frameworkruntime.OwnedLister) (*reconciled, error) {
	info, err := base.Copy()
	if err != nil {
		return nil, err
	}
	keys, err := info.PolicyKeys()
	if err != nil {
		return nil, err
	}
	cycle, err := fw.Current().NewCycle(job, keys)
	if err != nil {
		return nil, err
	}
	if err := cycle.Enforce(ctx, info); err != nil {
		return nil, err
	}
	objs, err := cycle.Build(ctx, info)
	if err != nil {
		return nil, err
	}
	st, err := cycle.Status(ctx, info, list)
	if err != nil {
		return nil, err
	}
	return &reconciled{Info: info, Objects: objs, Status: st}, nil
}

// BenchmarkReconcile times the plugin work of one reconcile through
// frameworkruntime.Framework with the four built-ins enabled, all in-process,
// all external or all wasm: Enforce (both policies), Build and Status. It
// leaves out what is the same on every path and not plugin work: resolving the
// runtime and NewInfo, the server-side applies, the cache reads and the
// status update. Each iteration starts from an Info.Copy of NewInfo's
// result (see BenchmarkInfoCopy/info=seed-<seed>).
//
// With the Torch seed, Torch and JobSet take part (Coscheduling owns no
// key of it, PlainML owns only jobs without a key); with the gang seed,
// Torch, Coscheduling and JobSet.
func BenchmarkReconcile(b *testing.B) {
	for _, file := range []string{frameworktest.SeedTorch, frameworktest.SeedCoscheduling} {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "seed-"), ".yaml")
		b.Run("seed="+name, func(b *testing.B) {
			for _, path := range paths {
				b.Run("path="+path, func(b *testing.B) {
					ctx := context.Background()
					spec, job := seed(b, file)
					base := frameworktest.NewInfo(b, job, spec)

					// The objects the API server holds: those the
					// in-process built-ins build, the JobSet running.
					want, err := reconcile(ctx, newFramework(b, inProcess), base, job, func(context.Context, schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
						return nil, nil
					})
					if err != nil {
						b.Fatal(err)
					}
					cluster := map[schema.GroupVersionKind][]*unstructured.Unstructured{}
					for _, o := range want.Objects {
						obj := o.Object
						if obj.GroupVersionKind() == jobset.GVK {
							obj = running(b, obj)
						}
						cluster[obj.GroupVersionKind()] = append(cluster[obj.GroupVersionKind()], obj)
					}
					list := func(_ context.Context, gvk schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
						return cluster[gvk], nil
					}
					if want, err = reconcile(ctx, newFramework(b, inProcess), base, job, list); err != nil {
						b.Fatal(err)
					}
					if want.Status == nil {
						b.Fatal("no status from the running JobSet")
					}

					fw := newFramework(b, path)
					got, err := reconcile(ctx, fw, base, job, list)
					if err != nil {
						b.Fatal(err)
					}
					same(b, "the reconcile's Info, objects and status", want, got)

					b.ReportAllocs()
					cpu := startCPU(b, pids(path, configv1alpha1.DefaultPlugins...)...)
					for b.Loop() {
						if _, err := reconcile(ctx, fw, base, job, list); err != nil {
							b.Fatal(err)
						}
					}
					cpu.report(b)
				})
			}
		})
	}
}
