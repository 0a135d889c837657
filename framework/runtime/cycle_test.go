package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
	"github.com/trainforge/trainforge/framework/internal/testfixture"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

var (
	jobSetGVK   = schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}
	podGroupGVK = schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}
	secretGVK   = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	configGVK   = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	podGVK      = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
)

// calls records the calls of the fake plugins of one test, in order, as
// "<plugin>.<point>".
type calls struct{ seq []string }

func (c *calls) add(plugin string, point framework.ExtensionPoint) {
	if c != nil {
		c.seq = append(c.seq, plugin+"."+string(point))
	}
}

// fakePlugin implements every extension point and records its calls.
type fakePlugin struct {
	desc  framework.Description
	calls *calls

	// What the plugin returns.
	configureErr error
	validateWarn []string
	validateErrs field.ErrorList
	validateErr  error // the call itself failed, as an external plugin's can
	mlErr, pgErr error
	build        func(job *trainer.TrainJob) []*unstructured.Unstructured
	live         *framework.LiveFields // of the last object built
	buildErr     error
	watch        []framework.WatchSource
	watchErr     error
	status       *framework.StatusReport
	statusErr    error

	// What the plugin was given.
	gotArgs     json.RawMessage
	configured  bool
	gotMLPolicy json.RawMessage
	gotPGPolicy json.RawMessage
	gotOwned    []*unstructured.Unstructured
	// statusInfo is the Info of each Status call.
	statusInfo []*framework.Info
}

var (
	_ framework.Configurable           = (*fakePlugin)(nil)
	_ framework.Validator              = (*fakePlugin)(nil)
	_ framework.MLPolicyEnforcer       = (*fakePlugin)(nil)
	_ framework.PodGroupPolicyEnforcer = (*fakePlugin)(nil)
	_ framework.Builder                = (*fakePlugin)(nil)
	_ framework.Watcher                = (*fakePlugin)(nil)
	_ framework.StatusReporter         = (*fakePlugin)(nil)
)

func (p *fakePlugin) Describe() framework.Description { return p.desc }

func (p *fakePlugin) Configure(_ context.Context, args json.RawMessage) error {
	// Not recorded in calls: New configures every plugin, and the tests
	// of the phases look at what happens after.
	p.configured = true
	p.gotArgs = args
	return p.configureErr
}

func (p *fakePlugin) Validate(_ context.Context, _ framework.ValidateRequest) ([]string, field.ErrorList, error) {
	p.calls.add(p.desc.Name, framework.PointValidate)
	if p.validateErr != nil {
		return nil, nil, p.validateErr
	}
	return p.validateWarn, p.validateErrs, nil
}

func (p *fakePlugin) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	p.calls.add(p.desc.Name, framework.PointEnforceMLPolicy)
	p.gotMLPolicy = append(json.RawMessage(nil), info.RuntimePolicy.MLPolicy...)
	return p.mlErr
}

func (p *fakePlugin) EnforcePodGroupPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	p.calls.add(p.desc.Name, framework.PointEnforcePodGroupPolicy)
	p.gotPGPolicy = append(json.RawMessage(nil), info.RuntimePolicy.PodGroupPolicy...)
	return p.pgErr
}

func (p *fakePlugin) Build(_ context.Context, _ *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	p.calls.add(p.desc.Name, framework.PointBuild)
	if p.buildErr != nil {
		return nil, p.buildErr
	}
	if p.build == nil {
		return nil, nil
	}
	objs := framework.Apply(p.build(job)...)
	if p.live != nil && len(objs) > 0 {
		objs[len(objs)-1].Live = p.live
	}
	return objs, nil
}

func (p *fakePlugin) Watch(context.Context) ([]framework.WatchSource, error) {
	p.calls.add(p.desc.Name, framework.PointWatch)
	return p.watch, p.watchErr
}

func (p *fakePlugin) Status(_ context.Context, info *framework.Info, _ *trainer.TrainJob, owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
	p.calls.add(p.desc.Name, framework.PointStatus)
	p.gotOwned = owned
	p.statusInfo = append(p.statusInfo, info)
	return p.status, p.statusErr
}

// barePlugin implements Plugin only: no Configure, no extension point.
type barePlugin struct{ name string }

func (p barePlugin) Describe() framework.Description { return framework.Description{Name: p.name} }

// registryOf registers each plugin under its own name; the factory returns
// that very instance so that the test can look at what it recorded.
func registryOf(t *testing.T, plugins ...framework.Plugin) framework.Registry {
	t.Helper()
	r := framework.Registry{}
	for _, p := range plugins {
		p := p
		if err := r.Register(p.Describe().Name, func(framework.Handle) framework.Plugin { return p }); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func specsOf(names ...string) []frameworkruntime.PluginSpec {
	out := make([]frameworkruntime.PluginSpec, 0, len(names))
	for _, n := range names {
		out = append(out, frameworkruntime.PluginSpec{Name: n})
	}
	return out
}

func newFramework(t *testing.T, registry framework.Registry, names ...string) *frameworkruntime.Framework {
	t.Helper()
	fw, err := frameworkruntime.New(context.Background(), registry, specsOf(names...))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return fw
}

// The fixtures shared with package framework's tests.
var (
	testJob  = testfixture.TrainJob
	infoWith = testfixture.InfoWith
)

// cycleOf starts the cycle of job through set, with the policy keys that
// info's runtime sets.
func cycleOf(set *frameworkruntime.PluginSet, info *framework.Info, job *trainer.TrainJob) (*frameworkruntime.Cycle, error) {
	keys, err := info.PolicyKeys()
	if err != nil {
		return nil, err
	}
	return set.NewCycle(job, keys)
}

// mustCycle is cycleOf for a job whose keys are owned, with every plugin
// under Fail: nothing may be ignored.
func mustCycle(t *testing.T, set *frameworkruntime.PluginSet, info *framework.Info, job *trainer.TrainJob) *frameworkruntime.Cycle {
	t.Helper()
	cycle, err := cycleOf(set, info, job)
	if err != nil {
		t.Fatalf("NewCycle: %v", err)
	}
	return cycle
}

// noneIgnored fails the test when a phase ignored a failure: every plugin
// of the test is under Fail.
func noneIgnored(t *testing.T, phase string, ignored frameworkruntime.Ignored) {
	t.Helper()
	if len(ignored) > 0 {
		t.Errorf("%s ignored %v under Fail", phase, ignored)
	}
}

// enforce runs Enforce in a cycle of its own, as a reconcile does.
func enforce(t *testing.T, fw *frameworkruntime.Framework, info *framework.Info, job *trainer.TrainJob) error {
	t.Helper()
	cycle, err := cycleOf(fw.Current(), info, job)
	if err != nil {
		return err
	}
	err = cycle.Enforce(context.Background(), info)
	noneIgnored(t, "Enforce", cycle.Ignored())
	return err
}

// build runs Build in a cycle of its own.
func build(t *testing.T, fw *frameworkruntime.Framework, info *framework.Info, job *trainer.TrainJob) ([]frameworkruntime.BuiltObject, error) {
	t.Helper()
	cycle, err := cycleOf(fw.Current(), info, job)
	if err != nil {
		return nil, err
	}
	built, err := cycle.Build(context.Background(), info)
	noneIgnored(t, "Build", cycle.Ignored())
	return built, err
}

// status runs Status in a cycle of its own.
func status(t *testing.T, fw *frameworkruntime.Framework, info *framework.Info, job *trainer.TrainJob, list frameworkruntime.OwnedLister) (*trainer.TrainJobStatus, error) {
	t.Helper()
	cycle, err := cycleOf(fw.Current(), info, job)
	if err != nil {
		return nil, err
	}
	reports, err := cycle.Status(context.Background(), info, list)
	noneIgnored(t, "Status", cycle.Ignored())
	if err != nil || len(reports) == 0 {
		return nil, err
	}
	// The reports as the controller merges them, with the transition
	// times (the merge's, now) left out.
	merged := job.DeepCopy()
	merged.Status = trainer.TrainJobStatus{}
	framework.ApplyTo(merged, reports...)
	for i := range merged.Status.Conditions {
		merged.Status.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	return &merged.Status, nil
}

// watchSources runs WatchSources on the set in use.
func watchSources(t *testing.T, fw *frameworkruntime.Framework) ([]frameworkruntime.PluginWatchSource, error) {
	t.Helper()
	sources, ignored, err := fw.Current().WatchSources(context.Background())
	noneIgnored(t, "WatchSources", ignored)
	return sources, err
}

func object(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// ---------------------------------------------------------------------------
// New

func TestNew(t *testing.T) {
	cases := []struct {
		name      string
		plugins   func() []framework.Plugin
		registry  framework.Registry // instead of plugins
		specs     []frameworkruntime.PluginSpec
		wantErr   []string // substrings; empty means success
		wantPoint framework.ExtensionPoint
		wantNames []string
	}{
		{
			name: "plugins in config order",
			plugins: func() []framework.Plugin {
				return []framework.Plugin{&fakePlugin{desc: framework.Description{Name: "A"}}, &fakePlugin{desc: framework.Description{Name: "B"}}, barePlugin{name: "C"}}
			},
			specs:     specsOf("C", "A", "B"),
			wantNames: []string{"C", "A", "B"},
		},
		{
			name: "unregistered name",
			plugins: func() []framework.Plugin {
				return []framework.Plugin{&fakePlugin{desc: framework.Description{Name: "A"}}}
			},
			specs:   specsOf("A", "Missing"),
			wantErr: []string{`"Missing"`, "not registered"},
		},
		{
			name: "Describe name differs from the entry",
			registry: framework.Registry{"A": func(framework.Handle) framework.Plugin {
				return &fakePlugin{desc: framework.Description{Name: "Impostor"}}
			}},
			specs:   specsOf("A"),
			wantErr: []string{`"A"`, `"Impostor"`},
		},
		{
			name: "args rejected by Configure",
			plugins: func() []framework.Plugin {
				return []framework.Plugin{&fakePlugin{desc: framework.Description{Name: "A"}, configureErr: errors.New("scheduleTimeoutSeconds must be positive")}}
			},
			specs:     []frameworkruntime.PluginSpec{{Name: "A", Args: json.RawMessage(`{"scheduleTimeoutSeconds":-1}`)}},
			wantErr:   []string{"A", "Configure", "scheduleTimeoutSeconds must be positive"},
			wantPoint: framework.PointConfigure,
		},
		{
			name:      "args given to a plugin that takes none",
			plugins:   func() []framework.Plugin { return []framework.Plugin{barePlugin{name: "Bare"}} },
			specs:     []frameworkruntime.PluginSpec{{Name: "Bare", Args: json.RawMessage(`{"x":1}`)}},
			wantErr:   []string{"Bare", "Configure", "takes no args"},
			wantPoint: framework.PointConfigure,
		},
		{
			name:      "null args to a plugin that takes none",
			plugins:   func() []framework.Plugin { return []framework.Plugin{barePlugin{name: "Bare"}} },
			specs:     []frameworkruntime.PluginSpec{{Name: "Bare", Args: json.RawMessage(`null`)}},
			wantNames: []string{"Bare"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			registry := tc.registry
			if registry == nil {
				registry = registryOf(t, tc.plugins()...)
			}
			fw, err := frameworkruntime.New(context.Background(), registry, tc.specs)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("New succeeded, want an error containing %q", tc.wantErr)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("New error %q does not contain %q", err, s)
					}
				}
				if tc.wantPoint != "" {
					var pe *framework.PluginError
					if !errors.As(err, &pe) {
						t.Fatalf("New error %T is not a *PluginError", err)
					}
					if diff := cmp.Diff(tc.specs[0].Name+"/"+string(tc.wantPoint), pe.Plugin+"/"+string(pe.Point)); diff != "" {
						t.Errorf("PluginError plugin/point (-want +got):\n%s", diff)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			var got []string
			for _, d := range fw.Current().Descriptions() {
				got = append(got, d.Name)
			}
			if diff := cmp.Diff(tc.wantNames, got); diff != "" {
				t.Errorf("Descriptions() names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewPassesArgsToConfigure(t *testing.T) {
	withArgs := &fakePlugin{desc: framework.Description{Name: "WithArgs"}}
	withoutArgs := &fakePlugin{desc: framework.Description{Name: "WithoutArgs"}}
	specs := []frameworkruntime.PluginSpec{
		{Name: "WithArgs", Args: json.RawMessage(`{"scheduleTimeoutSeconds":60}`)},
		{Name: "WithoutArgs"},
	}
	if _, err := frameworkruntime.New(context.Background(), registryOf(t, withArgs, withoutArgs), specs); err != nil {
		t.Fatalf("New: %v", err)
	}
	if diff := cmp.Diff(`{"scheduleTimeoutSeconds":60}`, string(withArgs.gotArgs)); diff != "" {
		t.Errorf("args given to Configure (-want +got):\n%s", diff)
	}
	if !withoutArgs.configured || withoutArgs.gotArgs != nil {
		t.Errorf("plugin without args: configured=%v args=%s; want Configure called with no args", withoutArgs.configured, withoutArgs.gotArgs)
	}
}

// ---------------------------------------------------------------------------
// Order

func TestPhasesRunInConfigOrder(t *testing.T) {
	cases := []struct {
		name  string
		order []string
		want  []string
	}{
		{
			name:  "A B C",
			order: []string{"A", "B", "C"},
			want: []string{
				"A.EnforceMLPolicy", "B.EnforceMLPolicy", "C.EnforceMLPolicy",
				"A.EnforcePodGroupPolicy", "B.EnforcePodGroupPolicy", "C.EnforcePodGroupPolicy",
				"A.Build", "B.Build", "C.Build",
			},
		},
		{
			name:  "C A B",
			order: []string{"C", "A", "B"},
			want: []string{
				"C.EnforceMLPolicy", "A.EnforceMLPolicy", "B.EnforceMLPolicy",
				"C.EnforcePodGroupPolicy", "A.EnforcePodGroupPolicy", "B.EnforcePodGroupPolicy",
				"C.Build", "A.Build", "B.Build",
			},
		},
		{
			name:  "B only",
			order: []string{"B"},
			want:  []string{"B.EnforceMLPolicy", "B.EnforcePodGroupPolicy", "B.Build"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &calls{}
			// A owns "no key" so that a runtime without mlPolicy is served;
			// B and C own no key at all and so run for every job.
			a := &fakePlugin{desc: framework.Description{Name: "A", MLPolicyKeys: []string{framework.NoPolicyKey}}, calls: rec}
			b := &fakePlugin{desc: framework.Description{Name: "B"}, calls: rec}
			c := &fakePlugin{desc: framework.Description{Name: "C"}, calls: rec}
			// Silent owns "no key" too and implements no point, so that the
			// runtime is served whatever the order, without adding calls.
			silent := ownerPlugin{desc: framework.Description{Name: "Silent", MLPolicyKeys: []string{framework.NoPolicyKey}}}
			fw := newFramework(t, registryOf(t, a, b, c, silent), append(tc.order, "Silent")...)
			ctx := context.Background()
			info, job := infoWith("", ""), testJob()
			cycle := mustCycle(t, fw.Current(), info, job)
			if err := cycle.Enforce(ctx, info); err != nil {
				t.Fatalf("Enforce: %v", err)
			}
			if _, err := cycle.Build(ctx, info); err != nil {
				t.Fatalf("Build: %v", err)
			}
			noneIgnored(t, "Enforce and Build", cycle.Ignored())
			if diff := cmp.Diff(tc.want, rec.seq); diff != "" {
				t.Errorf("call sequence (-want +got):\n%s", diff)
			}
		})
	}
}

// ownerPlugin implements Plugin only, with the keys it owns.
type ownerPlugin struct{ desc framework.Description }

func (p ownerPlugin) Describe() framework.Description { return p.desc }

// ---------------------------------------------------------------------------
// Dispatch by policy key

func TestDispatchByPolicyKey(t *testing.T) {
	// Every plugin runs every point, so the call sequence shows who took part.
	plugins := []struct {
		name      string
		mlKeys    []string
		groupKeys []string
	}{
		{name: "Plain", mlKeys: []string{framework.NoPolicyKey}},
		{name: "Torch", mlKeys: []string{"torch"}},
		{name: "Any", mlKeys: []string{framework.AnyPolicyKey}},
		{name: "Keyless"},
		{name: "Gang", groupKeys: []string{"coscheduling"}},
		{name: "AnyGang", groupKeys: []string{framework.AnyPolicyKey}},
		{name: "Multi", mlKeys: []string{"mpi", "jax"}},
	}
	cases := []struct {
		name     string
		mlPolicy string
		groupPol string
		wantPart []string // the plugins that take part, in order
	}{
		{
			name:     "torch runs the torch owner, not the no-key owner",
			mlPolicy: `{"numNodes":2,"torch":{}}`,
			wantPart: []string{"Torch", "Any", "Keyless", "AnyGang"},
		},
		{
			name:     "no mlPolicy runs the no-key owner",
			wantPart: []string{"Plain", "Any", "Keyless", "AnyGang"},
		},
		{
			name:     "numNodes alone is no key",
			mlPolicy: `{"numNodes":5}`,
			wantPart: []string{"Plain", "Any", "Keyless", "AnyGang"},
		},
		{
			name:     "a plugin owning several keys runs for any of them",
			mlPolicy: `{"jax":{}}`,
			wantPart: []string{"Any", "Keyless", "AnyGang", "Multi"},
		},
		{
			name:     "a podGroupPolicy owner runs only when its key is set",
			mlPolicy: `{"torch":{}}`,
			groupPol: `{"coscheduling":{}}`,
			wantPart: []string{"Torch", "Any", "Keyless", "Gang", "AnyGang"},
		},
		{
			name:     "podGroupPolicy without a key is no gang",
			groupPol: `{}`,
			wantPart: []string{"Plain", "Any", "Keyless", "AnyGang"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &calls{}
			var all []framework.Plugin
			var names []string
			for _, p := range plugins {
				all = append(all, &fakePlugin{desc: framework.Description{Name: p.name, MLPolicyKeys: p.mlKeys, PodGroupPolicyKeys: p.groupKeys}, calls: rec})
				names = append(names, p.name)
			}
			fw := newFramework(t, registryOf(t, all...), names...)
			info, job := infoWith(tc.mlPolicy, tc.groupPol), testJob()
			ctx := context.Background()
			set := fw.Current()
			if err := set.CheckPolicyKeys(info); err != nil {
				t.Fatalf("CheckPolicyKeys: %v", err)
			}
			cycle := mustCycle(t, set, info, job)
			if err := cycle.Enforce(ctx, info); err != nil {
				t.Fatalf("Enforce: %v", err)
			}
			if _, err := cycle.Build(ctx, info); err != nil {
				t.Fatalf("Build: %v", err)
			}
			if _, errs := set.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job}); len(errs) > 0 {
				t.Fatalf("Validate: %v", errs)
			}
			if _, err := cycle.Status(ctx, nil, func(context.Context, schema.GroupVersionKind) ([]*unstructured.Unstructured, error) { return nil, nil }); err != nil {
				t.Fatalf("Status: %v", err)
			}
			var want []string
			for _, point := range []framework.ExtensionPoint{framework.PointEnforceMLPolicy, framework.PointEnforcePodGroupPolicy, framework.PointBuild, framework.PointValidate, framework.PointStatus} {
				for _, n := range tc.wantPart {
					want = append(want, n+"."+string(point))
				}
			}
			if diff := cmp.Diff(want, rec.seq); diff != "" {
				t.Errorf("call sequence (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnownedPolicyKey(t *testing.T) {
	cases := []struct {
		name       string
		plugins    []framework.Description
		mlPolicy   string
		groupPol   string
		wantPolicy string
		wantKey    string
		wantText   string
	}{
		{
			name:       "vendor mlPolicy key without an owner",
			plugins:    []framework.Description{{Name: "Plain", MLPolicyKeys: []string{""}}, {Name: "Torch", MLPolicyKeys: []string{"torch"}}},
			mlPolicy:   `{"deepspeed":{"stage":3}}`,
			wantPolicy: "mlPolicy", wantKey: "deepspeed", wantText: "mlPolicy.deepspeed",
		},
		{
			name:       "a '*' plugin does not own a key it never named",
			plugins:    []framework.Description{{Name: "Plain", MLPolicyKeys: []string{""}}, {Name: "Any", MLPolicyKeys: []string{"*"}}},
			mlPolicy:   `{"deepspeed":{}}`,
			wantPolicy: "mlPolicy", wantKey: "deepspeed", wantText: "mlPolicy.deepspeed",
		},
		{
			name:       "typed mlPolicy key without an owner",
			plugins:    []framework.Description{{Name: "Plain", MLPolicyKeys: []string{""}}},
			mlPolicy:   `{"torch":{}}`,
			wantPolicy: "mlPolicy", wantKey: "torch", wantText: "mlPolicy.torch",
		},
		{
			name:       "vendor podGroupPolicy key without an owner",
			plugins:    []framework.Description{{Name: "Plain", MLPolicyKeys: []string{""}}, {Name: "Gang", PodGroupPolicyKeys: []string{"coscheduling"}}},
			groupPol:   `{"kai":{"queue":"a"}}`,
			wantPolicy: "podGroupPolicy", wantKey: "kai", wantText: "podGroupPolicy.kai",
		},
		{
			name:       "the key owned by an mlPolicy owner does not count for podGroupPolicy",
			plugins:    []framework.Description{{Name: "Plain", MLPolicyKeys: []string{"", "coscheduling"}}},
			groupPol:   `{"coscheduling":{}}`,
			wantPolicy: "podGroupPolicy", wantKey: "coscheduling", wantText: "podGroupPolicy.coscheduling",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &calls{}
			var all []framework.Plugin
			var names []string
			for _, d := range tc.plugins {
				all = append(all, &fakePlugin{desc: d, calls: rec})
				names = append(names, d.Name)
			}
			fw := newFramework(t, registryOf(t, all...), names...)
			info, job := infoWith(tc.mlPolicy, tc.groupPol), testJob()
			ctx := context.Background()
			want := &frameworkruntime.UnownedPolicyKeyError{Policy: tc.wantPolicy, Key: tc.wantKey}
			check := func(phase string, err error) {
				t.Helper()
				var ue *frameworkruntime.UnownedPolicyKeyError
				if !errors.As(err, &ue) {
					t.Errorf("%s: error %v (%T), want an *UnownedPolicyKeyError", phase, err, err)
					return
				}
				if diff := cmp.Diff(want, ue); diff != "" {
					t.Errorf("%s: UnownedPolicyKeyError (-want +got):\n%s", phase, diff)
				}
				if !strings.Contains(err.Error(), tc.wantText) {
					t.Errorf("%s: error %q does not name %q", phase, err, tc.wantText)
				}
			}
			set := fw.Current()
			check("CheckPolicyKeys", set.CheckPolicyKeys(info))
			// No phase can run: the cycle of a reconcile does not start.
			cycle, err := cycleOf(set, info, job)
			check("NewCycle", err)
			if cycle != nil {
				t.Errorf("NewCycle = %v; want no cycle", cycle)
			}

			_, errs := set.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job})
			if len(errs) != 1 || errs[0].Field != "spec.runtimeRef" || !strings.Contains(errs[0].Error(), tc.wantText) {
				t.Errorf("Validate errors = %v, want one on spec.runtimeRef naming %q", errs, tc.wantText)
			}
			if len(rec.seq) > 0 {
				t.Errorf("plugins were called despite the unowned key: %v", rec.seq)
			}
		})
	}
}

func TestNoOwnerOfNoKey(t *testing.T) {
	torch := &fakePlugin{desc: framework.Description{Name: "Torch", MLPolicyKeys: []string{"torch"}}}
	fw := newFramework(t, registryOf(t, torch), "Torch")
	for _, ml := range []string{"", `{}`, `{"numNodes":3}`} {
		err := fw.Current().CheckPolicyKeys(infoWith(ml, ""))
		if err == nil || !strings.Contains(err.Error(), "mlPolicy sets no framework key") {
			t.Errorf("CheckPolicyKeys(mlPolicy %q) = %v, want an error saying no plugin runs jobs without a key", ml, err)
		}
	}
}

// TestVendorKeyReachesPlugin is the DESIGN §9 pitfall end to end: a runtime
// decoded from YAML with mlPolicy.deepspeed reaches the vendor plugin that
// owns "deepspeed" raw, and fails without it.
func TestVendorKeyReachesPlugin(t *testing.T) {
	const runtimeYAML = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
spec:
  mlPolicy:
    numNodes: 4
    deepspeed:
      stage: 3
      offload: {optimizer: cpu}
  podGroupPolicy:
    kai: {queue: research}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: trainer
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: deepspeed
`
	spec := frameworktest.Runtime(t, runtimeYAML)
	job := testJob()

	t.Run("without an owner", func(t *testing.T) {
		plain := &fakePlugin{desc: framework.Description{Name: "Plain", MLPolicyKeys: []string{""}}}
		kai := &fakePlugin{desc: framework.Description{Name: "Kai", PodGroupPolicyKeys: []string{"kai"}}}
		fw := newFramework(t, registryOf(t, plain, kai), "Plain", "Kai")
		err := enforce(t, fw, frameworktest.NewInfo(t, job, spec), job)
		var ue *frameworkruntime.UnownedPolicyKeyError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "mlPolicy.deepspeed") {
			t.Fatalf("Enforce error = %v, want an *UnownedPolicyKeyError naming mlPolicy.deepspeed", err)
		}
	})

	t.Run("with a vendor owner", func(t *testing.T) {
		rec := &calls{}
		plain := &fakePlugin{desc: framework.Description{Name: "Plain", MLPolicyKeys: []string{""}}, calls: rec}
		ds := &fakePlugin{desc: framework.Description{Name: "DeepSpeed", MLPolicyKeys: []string{"deepspeed"}}, calls: rec}
		kai := &fakePlugin{desc: framework.Description{Name: "Kai", PodGroupPolicyKeys: []string{"kai"}}, calls: rec}
		fw := newFramework(t, registryOf(t, plain, ds, kai), "Plain", "DeepSpeed", "Kai")
		if err := enforce(t, fw, frameworktest.NewInfo(t, job, spec), job); err != nil {
			t.Fatalf("Enforce: %v", err)
		}
		want := []string{"DeepSpeed.EnforceMLPolicy", "Kai.EnforceMLPolicy", "DeepSpeed.EnforcePodGroupPolicy", "Kai.EnforcePodGroupPolicy"}
		if diff := cmp.Diff(want, rec.seq); diff != "" {
			t.Errorf("call sequence (-want +got):\n%s", diff)
		}
		var gotML struct {
			NumNodes  int32          `json:"numNodes"`
			DeepSpeed map[string]any `json:"deepspeed"`
		}
		if err := json.Unmarshal(ds.gotMLPolicy, &gotML); err != nil {
			t.Fatalf("the plugin's mlPolicy %q: %v", ds.gotMLPolicy, err)
		}
		wantDS := map[string]any{"stage": float64(3), "offload": map[string]any{"optimizer": "cpu"}}
		if diff := cmp.Diff(wantDS, gotML.DeepSpeed); diff != "" {
			t.Errorf("mlPolicy.deepspeed seen by the plugin (-want +got):\n%s", diff)
		}
		if gotML.NumNodes != 4 {
			t.Errorf("mlPolicy.numNodes seen by the plugin = %d, want 4", gotML.NumNodes)
		}
		var gotPG map[string]any
		if err := json.Unmarshal(kai.gotPGPolicy, &gotPG); err != nil {
			t.Fatalf("the plugin's podGroupPolicy %q: %v", kai.gotPGPolicy, err)
		}
		if diff := cmp.Diff(map[string]any{"kai": map[string]any{"queue": "research"}}, gotPG); diff != "" {
			t.Errorf("podGroupPolicy seen by the plugin (-want +got):\n%s", diff)
		}
	})
}

// ---------------------------------------------------------------------------
// Plugin errors

func TestPluginErrors(t *testing.T) {
	cause := errors.New("boom")
	cases := []struct {
		name      string
		plugin    *fakePlugin
		run       func(*testing.T, *frameworkruntime.Framework) error
		wantPoint framework.ExtensionPoint
	}{
		{
			name:   "EnforceMLPolicy",
			plugin: &fakePlugin{mlErr: cause},
			run: func(t *testing.T, fw *frameworkruntime.Framework) error {
				return enforce(t, fw, infoWith("", ""), testJob())
			},
			wantPoint: framework.PointEnforceMLPolicy,
		},
		{
			name:   "EnforcePodGroupPolicy",
			plugin: &fakePlugin{pgErr: cause},
			run: func(t *testing.T, fw *frameworkruntime.Framework) error {
				return enforce(t, fw, infoWith("", ""), testJob())
			},
			wantPoint: framework.PointEnforcePodGroupPolicy,
		},
		{
			name:   "Build",
			plugin: &fakePlugin{buildErr: cause},
			run: func(t *testing.T, fw *frameworkruntime.Framework) error {
				_, err := build(t, fw, infoWith("", ""), testJob())
				return err
			},
			wantPoint: framework.PointBuild,
		},
		{
			name:   "Status",
			plugin: &fakePlugin{statusErr: cause},
			run: func(t *testing.T, fw *frameworkruntime.Framework) error {
				_, err := status(t, fw, infoWith("", ""), testJob(), func(context.Context, schema.GroupVersionKind) ([]*unstructured.Unstructured, error) { return nil, nil })
				return err
			},
			wantPoint: framework.PointStatus,
		},
		{
			name:   "Status lister",
			plugin: &fakePlugin{desc: framework.Description{Builds: []schema.GroupVersionKind{jobSetGVK}}},
			run: func(t *testing.T, fw *frameworkruntime.Framework) error {
				_, err := status(t, fw, infoWith("", ""), testJob(), func(context.Context, schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
					return nil, cause
				})
				return err
			},
			wantPoint: framework.PointStatus,
		},
		{
			name:   "Watch",
			plugin: &fakePlugin{watchErr: cause},
			run: func(t *testing.T, fw *frameworkruntime.Framework) error {
				_, err := watchSources(t, fw)
				return err
			},
			wantPoint: framework.PointWatch,
		},
		{
			name:   "an error that already is a PluginError is kept",
			plugin: &fakePlugin{mlErr: &framework.PluginError{Plugin: "Inner", Point: framework.PointBuild, Err: cause}},
			run: func(t *testing.T, fw *frameworkruntime.Framework) error {
				return enforce(t, fw, infoWith("", ""), testJob())
			},
			wantPoint: framework.PointBuild,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.plugin.desc.Name = "Faulty"
			tc.plugin.desc.MLPolicyKeys = []string{framework.NoPolicyKey}
			fw := newFramework(t, registryOf(t, tc.plugin), "Faulty")
			err := tc.run(t, fw)
			var pe *framework.PluginError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *PluginError", err, err)
			}
			wantPlugin := "Faulty"
			if tc.plugin.mlErr != nil && tc.plugin.mlErr != cause {
				wantPlugin = "Inner"
			}
			if diff := cmp.Diff(wantPlugin+" "+string(tc.wantPoint), pe.Plugin+" "+string(pe.Point)); diff != "" {
				t.Errorf("PluginError plugin and point (-want +got):\n%s", diff)
			}
			if !errors.Is(err, cause) {
				t.Errorf("error %v does not wrap the plugin's error", err)
			}
			if !strings.Contains(err.Error(), wantPlugin) || !strings.Contains(err.Error(), string(tc.wantPoint)) {
				t.Errorf("error %q does not name the plugin and the point", err)
			}
		})
	}
}

func TestEnforceStopsAtTheFirstError(t *testing.T) {
	rec := &calls{}
	a := &fakePlugin{desc: framework.Description{Name: "A", MLPolicyKeys: []string{""}}, calls: rec}
	b := &fakePlugin{desc: framework.Description{Name: "B"}, calls: rec, mlErr: errors.New("no")}
	c := &fakePlugin{desc: framework.Description{Name: "C"}, calls: rec}
	fw := newFramework(t, registryOf(t, a, b, c), "A", "B", "C")
	if err := enforce(t, fw, infoWith("", ""), testJob()); err == nil {
		t.Fatal("Enforce succeeded, want B's error")
	}
	if diff := cmp.Diff([]string{"A.EnforceMLPolicy", "B.EnforceMLPolicy"}, rec.seq); diff != "" {
		t.Errorf("call sequence (-want +got):\n%s", diff)
	}
}

// ---------------------------------------------------------------------------
// Validate

func TestValidateCollectsWarningsAndErrors(t *testing.T) {
	a := &fakePlugin{
		desc:         framework.Description{Name: "A", MLPolicyKeys: []string{""}},
		validateWarn: []string{"numNodes is large"},
		validateErrs: field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "env").Index(0), "PET_NNODES", "reserved")},
	}
	b := &fakePlugin{desc: framework.Description{Name: "B"}, validateWarn: []string{"deprecated runtime"}}
	notTakingPart := &fakePlugin{
		desc:         framework.Description{Name: "Torch", MLPolicyKeys: []string{"torch"}},
		validateWarn: []string{"must not appear"},
		validateErrs: field.ErrorList{field.Forbidden(field.NewPath("spec"), "must not appear")},
	}
	fw := newFramework(t, registryOf(t, a, b, notTakingPart), "A", "Torch", "B")
	warnings, errs := fw.Current().Validate(context.Background(), framework.ValidateRequest{Info: infoWith("", ""), NewJob: testJob()})
	if diff := cmp.Diff([]string{"A: numNodes is large", "B: deprecated runtime"}, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(a.validateErrs, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// ---------------------------------------------------------------------------
// Build

func TestBuild(t *testing.T) {
	owner := metav1.OwnerReference{
		APIVersion:         "trainer.kubeflow.org/v1alpha1",
		Kind:               "TrainJob",
		Name:               "job",
		UID:                types.UID("uid-1234"),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
	managed := func(extra map[string]string) map[string]string {
		m := map[string]string{"trainer.kubeflow.org/trainjob-name": "job", "app.kubernetes.io/managed-by": "trainforge"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name    string
		builds  []schema.GroupVersionKind
		objects func() []*unstructured.Unstructured
		want    func() []*unstructured.Unstructured
		wantErr []string
	}{
		{
			name:   "namespace, owner and labels set by the runner",
			builds: []schema.GroupVersionKind{jobSetGVK, secretGVK},
			objects: func() []*unstructured.Unstructured {
				js := object(jobSetGVK, "", "job")
				js.SetLabels(map[string]string{"mine": "yes"})
				s := object(secretGVK, "team-a", "job-ssh")
				// A plugin cannot choose another owner or another TrainJob name.
				s.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "y"}})
				s.SetLabels(map[string]string{"trainer.kubeflow.org/trainjob-name": "other"})
				return []*unstructured.Unstructured{js, s}
			},
			want: func() []*unstructured.Unstructured {
				js := object(jobSetGVK, "team-a", "job")
				js.SetLabels(managed(map[string]string{"mine": "yes"}))
				js.SetOwnerReferences([]metav1.OwnerReference{owner})
				s := object(secretGVK, "team-a", "job-ssh")
				s.SetLabels(managed(nil))
				s.SetOwnerReferences([]metav1.OwnerReference{owner})
				return []*unstructured.Unstructured{js, s}
			},
		},
		{
			name:   "kind not declared",
			builds: []schema.GroupVersionKind{jobSetGVK},
			objects: func() []*unstructured.Unstructured {
				return []*unstructured.Unstructured{object(configGVK, "", "job-cm")}
			},
			wantErr: []string{"Maker", "Build", "v1/ConfigMap", "did not declare"},
		},
		{
			name:   "same kind, other version",
			builds: []schema.GroupVersionKind{jobSetGVK},
			objects: func() []*unstructured.Unstructured {
				return []*unstructured.Unstructured{object(jobSetGVK.GroupKind().WithVersion("v1alpha1"), "", "job")}
			},
			wantErr: []string{"Maker", "jobset.x-k8s.io/v1alpha1/JobSet", "did not declare"},
		},
		{
			name:   "other namespace",
			builds: []schema.GroupVersionKind{secretGVK},
			objects: func() []*unstructured.Unstructured {
				return []*unstructured.Unstructured{object(secretGVK, "kube-system", "steal")}
			},
			wantErr: []string{"Maker", "Build", `"kube-system"`, `"team-a"`},
		},
		{
			name:    "no name",
			builds:  []schema.GroupVersionKind{secretGVK},
			objects: func() []*unstructured.Unstructured { return []*unstructured.Unstructured{object(secretGVK, "", "")} },
			wantErr: []string{"Maker", "without a name"},
		},
		{
			name:    "nil object",
			builds:  []schema.GroupVersionKind{secretGVK},
			objects: func() []*unstructured.Unstructured { return []*unstructured.Unstructured{nil} },
			wantErr: []string{"Maker", "nil object"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plain := &fakePlugin{desc: framework.Description{Name: "Plain", MLPolicyKeys: []string{""}}}
			maker := &fakePlugin{
				desc:  framework.Description{Name: "Maker", Builds: tc.builds},
				build: func(*trainer.TrainJob) []*unstructured.Unstructured { return tc.objects() },
			}
			fw := newFramework(t, registryOf(t, plain, maker), "Plain", "Maker")
			got, err := build(t, fw, infoWith("", ""), testJob())
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Build succeeded with %v, want an error", got)
				}
				var pe *framework.PluginError
				if !errors.As(err, &pe) || pe.Plugin != "Maker" || pe.Point != framework.PointBuild {
					t.Errorf("Build error %v, want a *PluginError of Maker at Build", err)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Build error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			var want []frameworkruntime.BuiltObject
			for _, o := range tc.want() {
				want = append(want, frameworkruntime.BuiltObject{Plugin: "Maker", Object: o})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Build (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildKeepsPluginOrder(t *testing.T) {
	mk := func(name string, gvk schema.GroupVersionKind) *fakePlugin {
		return &fakePlugin{
			desc: framework.Description{Name: name, MLPolicyKeys: []string{framework.AnyPolicyKey}, Builds: []schema.GroupVersionKind{gvk}},
			build: func(job *trainer.TrainJob) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{object(gvk, "", job.Name)}
			},
		}
	}
	plain := &fakePlugin{desc: framework.Description{Name: "Plain", MLPolicyKeys: []string{""}}}
	fw := newFramework(t, registryOf(t, plain, mk("Gang", podGroupGVK), mk("JobSet", jobSetGVK)), "Plain", "JobSet", "Gang")
	got, err := build(t, fw, infoWith("", ""), testJob())
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	var order []string
	for _, o := range got {
		order = append(order, o.Plugin+":"+o.Object.GetKind())
	}
	if diff := cmp.Diff([]string{"JobSet:JobSet", "Gang:PodGroup"}, order); diff != "" {
		t.Errorf("built objects (-want +got):\n%s", diff)
	}
}

// ---------------------------------------------------------------------------
// Status

func TestStatus(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: reason}
	}
	jobSet := object(jobSetGVK, "team-a", "job")
	podGroup := object(podGroupGVK, "team-a", "job")
	secret := object(secretGVK, "team-a", "job-ssh")
	owned := map[schema.GroupVersionKind][]*unstructured.Unstructured{
		jobSetGVK:   {jobSet},
		podGroupGVK: {podGroup},
		secretGVK:   {secret},
		configGVK:   {object(configGVK, "team-a", "not-listed")},
	}

	rec := &calls{}
	plain := &fakePlugin{desc: framework.Description{Name: "Plain", MLPolicyKeys: []string{""}}, calls: rec}
	js := &fakePlugin{
		desc:  framework.Description{Name: "JobSet", Builds: []schema.GroupVersionKind{jobSetGVK}},
		calls: rec,
		status: &framework.StatusReport{
			Conditions: []metav1.Condition{cond("Created", metav1.ConditionTrue, "JobsCreated"), cond("Complete", metav1.ConditionFalse, "Running")},
			JobsStatus: []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1)}},
		},
	}
	gang := &fakePlugin{
		desc:   framework.Description{Name: "Gang", Builds: []schema.GroupVersionKind{podGroupGVK, secretGVK}},
		calls:  rec,
		status: &framework.StatusReport{Conditions: []metav1.Condition{cond("Complete", metav1.ConditionTrue, "Done"), cond("GangScheduled", metav1.ConditionTrue, "Scheduled")}},
	}
	silent := &fakePlugin{desc: framework.Description{Name: "Silent", Builds: []schema.GroupVersionKind{configGVK}}, calls: rec}
	volcano := &fakePlugin{
		desc:   framework.Description{Name: "Volcano", PodGroupPolicyKeys: []string{"volcano"}, Builds: []schema.GroupVersionKind{configGVK}},
		calls:  rec,
		status: &framework.StatusReport{Conditions: []metav1.Condition{cond("Complete", metav1.ConditionFalse, "NotMine")}},
	}
	fw := newFramework(t, registryOf(t, plain, js, gang, silent, volcano), "Plain", "JobSet", "Gang", "Silent", "Volcano")

	var listed []schema.GroupVersionKind
	list := func(_ context.Context, gvk schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
		listed = append(listed, gvk)
		return owned[gvk], nil
	}
	got, err := status(t, fw, infoWith("", ""), testJob(), list)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	want := &trainer.TrainJobStatus{
		Conditions: []metav1.Condition{
			cond("Created", metav1.ConditionTrue, "JobsCreated"),
			cond("Complete", metav1.ConditionTrue, "Done"),
			cond("GangScheduled", metav1.ConditionTrue, "Scheduled"),
		},
		JobsStatus: []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1)}},
	}
	// Later reporters win per condition type; where the replaced condition
	// ends up in the list is not part of the contract.
	sortConds := cmpopts.SortSlices(func(a, b metav1.Condition) bool { return a.Type < b.Type })
	if diff := cmp.Diff(want, got, sortConds); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]*unstructured.Unstructured{jobSet}, js.gotOwned); diff != "" {
		t.Errorf("objects given to JobSet (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]*unstructured.Unstructured{podGroup, secret}, gang.gotOwned); diff != "" {
		t.Errorf("objects given to Gang (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(owned[configGVK], silent.gotOwned); diff != "" {
		t.Errorf("objects given to Silent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]schema.GroupVersionKind{jobSetGVK, podGroupGVK, secretGVK, configGVK}, listed); diff != "" {
		t.Errorf("kinds listed (-want +got):\n%s", diff)
	}
	wantCalls := []string{"Plain.Status", "JobSet.Status", "Gang.Status", "Silent.Status"}
	if diff := cmp.Diff(wantCalls, rec.seq); diff != "" {
		t.Errorf("reporters called (-want +got):\n%s", diff)
	}
}

// TestCycleStatusInfo: every status reporter gets the Info Status is given,
// the one the job's objects were built from (protocol 1.5), and nil on a
// cycle without a runtime, which has none.
func TestCycleStatusInfo(t *testing.T) {
	a := &fakePlugin{desc: framework.Description{Name: "A", Builds: []schema.GroupVersionKind{jobSetGVK}}}
	b := &fakePlugin{desc: framework.Description{Name: "B", MLPolicyKeys: []string{"torch"}}}
	fw := newFramework(t, registryOf(t, a, b), "A", "B")
	info := infoWith(`{"torch":{}}`, "")
	noOwned := func(context.Context, schema.GroupVersionKind) ([]*unstructured.Unstructured, error) { return nil, nil }

	cycle, err := cycleOf(fw.Current(), info, testJob())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cycle.Status(context.Background(), info, noOwned); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*fakePlugin{a, b} {
		if len(p.statusInfo) != 1 || p.statusInfo[0] != info {
			t.Errorf("%s's Status got Info %v, want the Info given to the cycle's Status", p.desc.Name, p.statusInfo)
		}
	}

	a.statusInfo = nil
	if _, err := fw.Current().NewCycleWithoutRuntime(testJob()).Status(context.Background(), nil, noOwned); err != nil {
		t.Fatal(err)
	}
	if len(a.statusInfo) != 1 || a.statusInfo[0] != nil {
		t.Errorf("without a runtime, A's Status got Info %v, want one call with none", a.statusInfo)
	}
}

func TestStatusLaterReporterWins(t *testing.T) {
	cases := []struct {
		name  string
		order []string
		want  string
	}{
		{name: "A then B", order: []string{"A", "B"}, want: "FromB"},
		{name: "B then A", order: []string{"B", "A"}, want: "FromA"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mk := func(name string) *fakePlugin {
				return &fakePlugin{
					desc:   framework.Description{Name: name, MLPolicyKeys: []string{""}},
					status: &framework.StatusReport{Conditions: []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue, Reason: "From" + name}}},
				}
			}
			fw := newFramework(t, registryOf(t, mk("A"), mk("B")), tc.order...)
			got, err := status(t, fw, infoWith("", ""), testJob(), func(context.Context, schema.GroupVersionKind) ([]*unstructured.Unstructured, error) { return nil, nil })
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			want := &trainer.TrainJobStatus{Conditions: []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue, Reason: tc.want}}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusNilWhenNobodyReports(t *testing.T) {
	plain := &fakePlugin{desc: framework.Description{Name: "Plain", MLPolicyKeys: []string{""}}}
	fw := newFramework(t, registryOf(t, plain, barePlugin{name: "Bare"}), "Plain", "Bare")
	got, err := status(t, fw, infoWith("", ""), testJob(), func(context.Context, schema.GroupVersionKind) ([]*unstructured.Unstructured, error) { return nil, nil })
	if err != nil || got != nil {
		t.Errorf("Status = %v, %v; want nil, nil", got, err)
	}
}

// ---------------------------------------------------------------------------
// WatchSources

func TestWatchSources(t *testing.T) {
	cases := []struct {
		name    string
		plugins []*fakePlugin
		want    []framework.WatchSource
		wantErr []string
	}{
		{
			name: "built kinds by owner, declared kinds after, no duplicates, plugin order",
			plugins: []*fakePlugin{
				{
					desc: framework.Description{Name: "JobSet", Builds: []schema.GroupVersionKind{jobSetGVK, secretGVK}},
					watch: []framework.WatchSource{
						{Kind: podGVK, Mapping: framework.MapByLabel, Label: "trainer.kubeflow.org/trainjob-name"},
						{Kind: jobSetGVK, Mapping: framework.MapByOwner},
					},
				},
				{desc: framework.Description{Name: "Gang", Builds: []schema.GroupVersionKind{podGroupGVK, jobSetGVK}}},
				{desc: framework.Description{Name: "Quiet"}},
			},
			want: []framework.WatchSource{
				{Kind: jobSetGVK, Mapping: framework.MapByOwner},
				{Kind: secretGVK, Mapping: framework.MapByOwner},
				{Kind: podGVK, Mapping: framework.MapByLabel, Label: "trainer.kubeflow.org/trainjob-name"},
				{Kind: podGroupGVK, Mapping: framework.MapByOwner},
			},
		},
		{
			name: "a field is omitted only when every Watch of the kind omits it; building it omits nothing",
			plugins: []*fakePlugin{
				{desc: framework.Description{Name: "Gang", Builds: []schema.GroupVersionKind{jobSetGVK}}},
				{
					desc:  framework.Description{Name: "JobSet", Builds: []schema.GroupVersionKind{jobSetGVK}},
					watch: []framework.WatchSource{{Kind: jobSetGVK, Mapping: framework.MapByOwner, Omit: []string{"spec.replicatedJobs[].template.spec.template", "metadata.annotations"}}},
				},
				{
					desc:  framework.Description{Name: "Reader"},
					watch: []framework.WatchSource{{Kind: jobSetGVK, Mapping: framework.MapByOwner, Omit: []string{"spec.replicatedJobs[].template.spec.template"}}},
				},
				{
					desc:  framework.Description{Name: "Pods"},
					watch: []framework.WatchSource{{Kind: jobSetGVK, Mapping: framework.MapByLabel, Label: "x", Omit: []string{"status"}}},
				},
			},
			want: []framework.WatchSource{
				{Kind: jobSetGVK, Mapping: framework.MapByOwner, Omit: []string{"spec.replicatedJobs[].template.spec.template"}},
				{Kind: jobSetGVK, Mapping: framework.MapByLabel, Label: "x", Omit: []string{"status"}},
			},
		},
		{
			name: "a Watch that omits nothing keeps every field of the kind",
			plugins: []*fakePlugin{
				{
					desc:  framework.Description{Name: "JobSet", Builds: []schema.GroupVersionKind{jobSetGVK}},
					watch: []framework.WatchSource{{Kind: jobSetGVK, Mapping: framework.MapByOwner, Omit: []string{"spec.replicatedJobs[].template.spec.template"}}},
				},
				{desc: framework.Description{Name: "Reader"}, watch: []framework.WatchSource{{Kind: jobSetGVK, Mapping: framework.MapByOwner}}},
			},
			want: []framework.WatchSource{{Kind: jobSetGVK, Mapping: framework.MapByOwner, Omit: []string{}}},
		},
		{
			name:    "an omitted field that is not a field path",
			plugins: []*fakePlugin{{desc: framework.Description{Name: "W"}, watch: []framework.WatchSource{{Kind: podGVK, Mapping: framework.MapByOwner, Omit: []string{"spec.containers[0]"}}}}},
			wantErr: []string{"W", "Watch", "v1/Pod", `omit: field path "spec.containers[0]"`, "not a field name"},
		},
		{
			name:    "label mapping without a label",
			plugins: []*fakePlugin{{desc: framework.Description{Name: "W"}, watch: []framework.WatchSource{{Kind: podGVK, Mapping: framework.MapByLabel}}}},
			wantErr: []string{"W", "Watch", "v1/Pod"},
		},
		{
			name:    "unknown mapping",
			plugins: []*fakePlugin{{desc: framework.Description{Name: "W"}, watch: []framework.WatchSource{{Kind: podGVK, Mapping: "Annotation", Label: "x"}}}},
			wantErr: []string{"W", "Watch", "v1/Pod"},
		},
		{
			name:    "empty mapping",
			plugins: []*fakePlugin{{desc: framework.Description{Name: "W"}, watch: []framework.WatchSource{{Kind: podGVK}}}},
			wantErr: []string{"W", "Watch"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var all []framework.Plugin
			var names []string
			for _, p := range tc.plugins {
				all = append(all, p)
				names = append(names, p.desc.Name)
			}
			fw := newFramework(t, registryOf(t, all...), names...)
			got, err := watchSources(t, fw)
			if len(tc.wantErr) > 0 {
				var pe *framework.PluginError
				if !errors.As(err, &pe) || pe.Point != framework.PointWatch {
					t.Fatalf("WatchSources error %v, want a *PluginError at Watch", err)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("WatchSources error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("WatchSources: %v", err)
			}
			var sources []framework.WatchSource
			for _, s := range got {
				sources = append(sources, s.WatchSource)
			}
			if diff := cmp.Diff(tc.want, sources); diff != "" {
				t.Errorf("WatchSources (-want +got):\n%s", diff)
			}
		})
	}
}
