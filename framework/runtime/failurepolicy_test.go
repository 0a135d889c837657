package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// ---------------------------------------------------------------------------
// Fakes and helpers of the failure-policy tests

// policyInfo returns an Info with a trainer PodSet, so that plugins have
// something to change.
func policyInfo(mlPolicy string) *framework.Info {
	info := infoWith(mlPolicy, "")
	info.Labels = map[string]string{"team": "a"}
	info.PodSets = []framework.PodSet{{
		Name:         "node",
		AncestorStep: trainer.TrainerStep,
		Replicas:     1,
		Count:        2,
		Containers:   []framework.Container{{Name: "node", Image: "trainer:v1", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}},
	}}
	return info
}

// scribble changes Info everywhere a plugin may: maps, nested slices in
// place, and the list of PodSets.
func scribble(info *framework.Info, who string) {
	framework.MergeMap(&info.Labels, map[string]string{"by-" + strings.ToLower(who): "yes"})
	framework.MergeMap(&info.Annotations, map[string]string{"note-" + strings.ToLower(who): "yes"})
	info.PodSets[0].Count++
	info.PodSets[0].Containers[0].UpsertEnv(corev1.EnvVar{Name: "A", Value: who}, corev1.EnvVar{Name: "BY_" + strings.ToUpper(who), Value: "1"})
	info.PodSets = append(info.PodSets, framework.PodSet{Name: strings.ToLower(who), Replicas: 1, Count: 1})
}

// changer changes Info in both Enforce points and never fails.
type changer struct{ *fakePlugin }

func (p *changer) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	p.calls.add(p.desc.Name, framework.PointEnforceMLPolicy)
	scribble(info, p.desc.Name+"ML")
	return nil
}

func (p *changer) EnforcePodGroupPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	p.calls.add(p.desc.Name, framework.PointEnforcePodGroupPolicy)
	scribble(info, p.desc.Name+"PG")
	return nil
}

// saboteur changes Info in the Enforce point where it fails (mlErr or
// pgErr), then fails; it does nothing in the other.
type saboteur struct{ *fakePlugin }

func (p *saboteur) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	p.calls.add(p.desc.Name, framework.PointEnforceMLPolicy)
	if p.mlErr != nil {
		scribble(info, p.desc.Name+"ML")
	}
	return p.mlErr
}

func (p *saboteur) EnforcePodGroupPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	p.calls.add(p.desc.Name, framework.PointEnforcePodGroupPolicy)
	if p.pgErr != nil {
		scribble(info, p.desc.Name+"PG")
	}
	return p.pgErr
}

// supervisedPlugin is an out-of-process plugin as the framework sees it:
// its description, its Generation and whether it is ready change over
// time. Its type implements every point; what it described says which it
// really implements (only, when set).
type supervisedPlugin struct {
	*fakePlugin
	// generation is 0 while the plugin has never described itself.
	generation uint64
	ready      error
	only       []framework.ExtensionPoint
}

var _ frameworkruntime.Supervised = (*supervisedPlugin)(nil)

func (p *supervisedPlugin) Describe() framework.Description {
	d, _, _ := p.Described()
	return d
}

func (p *supervisedPlugin) Ready() error       { return p.ready }
func (p *supervisedPlugin) Generation() uint64 { return p.generation }

func (p *supervisedPlugin) Described() (framework.Description, framework.Implementation, uint64) {
	if p.generation == 0 {
		return framework.Description{Name: p.desc.Name}, framework.Implementation{}, 0
	}
	impl := framework.ImplementationOf(p.fakePlugin)
	if p.only != nil {
		impl = impl.Only(p.only)
	}
	// Its host configures it on each start, as external.Plugin's does.
	impl.Configurable = nil
	return p.desc, impl, p.generation
}

// supervisedBuilder is a supervised plugin whose type implements Build
// only.
type supervisedBuilder struct {
	desc  framework.Description
	calls *calls
}

func (p *supervisedBuilder) Describe() framework.Description { return p.desc }
func (p *supervisedBuilder) Ready() error                    { return nil }
func (p *supervisedBuilder) Generation() uint64              { return 1 }

func (p *supervisedBuilder) Described() (framework.Description, framework.Implementation, uint64) {
	return p.desc, framework.ImplementationOf(p), 1
}

func (p *supervisedBuilder) Build(context.Context, *framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
	p.calls.add(p.desc.Name, framework.PointBuild)
	return nil, nil
}

// ignoredCall is one failure that a phase ignored. The job it concerns is
// the cycle's.
type ignoredCall struct {
	Plugin string
	Point  framework.ExtensionPoint
}

func ignoredCalls(ignored frameworkruntime.Ignored) []ignoredCall {
	var out []ignoredCall
	for _, e := range ignored {
		out = append(out, ignoredCall{Plugin: e.Plugin, Point: e.Point})
	}
	return out
}

func noOwned(context.Context, schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func newFrameworkOf(t *testing.T, specs []frameworkruntime.PluginSpec) *frameworkruntime.Framework {
	t.Helper()
	fw, err := frameworkruntime.New(context.Background(), framework.Registry{}, specs)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return fw
}

// ---------------------------------------------------------------------------
// Metrics

// collector returns the plugin metric of that name among
// frameworkruntime.Collectors().
func collector(t *testing.T, name string) prometheus.Collector {
	t.Helper()
	for _, c := range frameworkruntime.Collectors() {
		ch := make(chan *prometheus.Desc, 8)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			if strings.Contains(d.String(), fmt.Sprintf("fqName: %q", name)) {
				return c
			}
		}
	}
	t.Fatalf("no collector named %s", name)
	return nil
}

func counterOf(t *testing.T, name, plugin string, point framework.ExtensionPoint) float64 {
	t.Helper()
	vec, ok := collector(t, name).(*prometheus.CounterVec)
	if !ok {
		t.Fatalf("%s is not a CounterVec", name)
	}
	return testutil.ToFloat64(vec.WithLabelValues(plugin, string(point)))
}

// observationsOf returns the number of observations of the duration
// histogram for a plugin and point.
func observationsOf(t *testing.T, plugin string, point framework.ExtensionPoint) uint64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collector(t, "trainforge_plugin_call_duration_seconds"))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["plugin"] == plugin && labels["point"] == string(point) {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

// pointMetrics are the metrics of one plugin and point.
type pointMetrics struct {
	Calls, Errors, Ignored float64
	Durations              uint64
}

func metricsOf(t *testing.T, plugin string, point framework.ExtensionPoint) pointMetrics {
	t.Helper()
	return pointMetrics{
		Calls:     counterOf(t, "trainforge_plugin_calls_total", plugin, point),
		Errors:    counterOf(t, "trainforge_plugin_errors_total", plugin, point),
		Ignored:   counterOf(t, "trainforge_plugin_ignored_total", plugin, point),
		Durations: observationsOf(t, plugin, point),
	}
}

// metricsDelta records the metrics of some plugins and points; since()
// returns how much each changed.
type metricsDelta struct {
	t      *testing.T
	before map[string]pointMetrics
}

func snapshot(t *testing.T, plugins []string, points []framework.ExtensionPoint) metricsDelta {
	t.Helper()
	d := metricsDelta{t: t, before: map[string]pointMetrics{}}
	for _, p := range plugins {
		for _, pt := range points {
			d.before[p+"."+string(pt)] = metricsOf(t, p, pt)
		}
	}
	return d
}

// since returns the changes, leaving out those that did not change.
func (d metricsDelta) since() map[string]pointMetrics {
	d.t.Helper()
	out := map[string]pointMetrics{}
	for key, b := range d.before {
		plugin, point, _ := strings.Cut(key, ".")
		a := metricsOf(d.t, plugin, framework.ExtensionPoint(point))
		delta := pointMetrics{Calls: a.Calls - b.Calls, Errors: a.Errors - b.Errors, Ignored: a.Ignored - b.Ignored, Durations: a.Durations - b.Durations}
		if delta != (pointMetrics{}) {
			out[key] = delta
		}
	}
	return out
}

var phasePoints = []framework.ExtensionPoint{
	framework.PointValidate, framework.PointEnforceMLPolicy, framework.PointEnforcePodGroupPolicy, framework.PointBuild, framework.PointStatus,
}

// ---------------------------------------------------------------------------
// Failure policies

// goodPlugins returns two healthy plugins that take part in every job and
// leave a trace at every point: Good1 before the faulty plugin, Good2
// after it.
func goodPlugins() (good1, good2 framework.Plugin) {
	mk := func(name string, keys []string) *changer {
		lower := strings.ToLower(name)
		return &changer{&fakePlugin{
			desc:         framework.Description{Name: name, MLPolicyKeys: keys, Builds: []schema.GroupVersionKind{secretGVK}},
			validateWarn: []string{lower + " says hi"},
			build: func(*trainer.TrainJob) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{object(secretGVK, "", lower+"-secret")}
			},
			status: &framework.StatusReport{Conditions: []metav1.Condition{{Type: name + "Ready", Status: metav1.ConditionTrue, Reason: "Fine"}}},
		}}
	}
	return mk("Good1", []string{framework.NoPolicyKey}), mk("Good2", nil)
}

// policyResult is what one phase returns, for comparison.
type policyResult struct {
	Info     *framework.Info
	Built    []frameworkruntime.BuiltObject
	Status   []*framework.StatusReport
	Warnings []string
	Errs     field.ErrorList
}

// policyCase is one extension point at which the faulty plugin fails.
type policyCase struct {
	name   string
	point  framework.ExtensionPoint
	faulty func(cause error) framework.Plugin
	// run runs the phase in a cycle of its own and returns what it
	// returns, with what the cycle and the phase ignored. Validate
	// returns no Ignored: it says what it skipped in its warnings.
	run func(t *testing.T, set *frameworkruntime.PluginSet) (policyResult, frameworkruntime.Ignored, error)
}

// phaseCycle starts the cycle of testJob for info on set; a plugin that
// fails in NewCycle fails the test (no case's keys are unowned).
func phaseCycle(t *testing.T, set *frameworkruntime.PluginSet, info *framework.Info) *frameworkruntime.Cycle {
	t.Helper()
	cycle, err := cycleOf(set, info, testJob())
	if err != nil {
		t.Fatalf("NewCycle: %v", err)
	}
	return cycle
}

func policyCases() []policyCase {
	ctx := context.Background()
	enforce := func(t *testing.T, set *frameworkruntime.PluginSet) (policyResult, frameworkruntime.Ignored, error) {
		info := policyInfo("")
		cycle := phaseCycle(t, set, info)
		err := cycle.Enforce(ctx, info)
		return policyResult{Info: info}, cycle.Ignored(), err
	}
	return []policyCase{
		{
			name:  "EnforceMLPolicy",
			point: framework.PointEnforceMLPolicy,
			faulty: func(cause error) framework.Plugin {
				return &saboteur{&fakePlugin{desc: framework.Description{Name: "Faulty"}, mlErr: cause}}
			},
			run: enforce,
		},
		{
			name:  "EnforcePodGroupPolicy",
			point: framework.PointEnforcePodGroupPolicy,
			faulty: func(cause error) framework.Plugin {
				return &saboteur{&fakePlugin{desc: framework.Description{Name: "Faulty"}, pgErr: cause}}
			},
			run: enforce,
		},
		{
			name:  "Build",
			point: framework.PointBuild,
			faulty: func(cause error) framework.Plugin {
				return &fakePlugin{desc: framework.Description{Name: "Faulty", Builds: []schema.GroupVersionKind{configGVK}}, buildErr: cause}
			},
			run: func(t *testing.T, set *frameworkruntime.PluginSet) (policyResult, frameworkruntime.Ignored, error) {
				info := policyInfo("")
				cycle := phaseCycle(t, set, info)
				built, err := cycle.Build(ctx, info)
				return policyResult{Built: built}, cycle.Ignored(), err
			},
		},
		{
			name:  "Status",
			point: framework.PointStatus,
			faulty: func(cause error) framework.Plugin {
				return &fakePlugin{
					desc:      framework.Description{Name: "Faulty"},
					status:    &framework.StatusReport{Conditions: []metav1.Condition{{Type: "Good1Ready", Status: metav1.ConditionFalse, Reason: "FromFaulty"}}},
					statusErr: cause,
				}
			},
			run: func(t *testing.T, set *frameworkruntime.PluginSet) (policyResult, frameworkruntime.Ignored, error) {
				cycle := phaseCycle(t, set, policyInfo(""))
				st, err := cycle.Status(ctx, nil, noOwned)
				return policyResult{Status: st}, cycle.Ignored(), err
			},
		},
		{
			name:  "Validate",
			point: framework.PointValidate,
			faulty: func(cause error) framework.Plugin {
				return &fakePlugin{desc: framework.Description{Name: "Faulty"}, validateWarn: []string{"must not appear"}, validateErr: cause}
			},
			run: func(_ *testing.T, set *frameworkruntime.PluginSet) (policyResult, frameworkruntime.Ignored, error) {
				w, errs := set.Validate(ctx, framework.ValidateRequest{Info: policyInfo(""), NewJob: testJob()})
				return policyResult{Warnings: w, Errs: errs}, nil, nil
			},
		},
	}
}

func TestFailurePolicyFail(t *testing.T) {
	for _, policy := range []frameworkruntime.FailurePolicy{frameworkruntime.FailurePolicyFail, ""} {
		for _, tc := range policyCases() {
			t.Run(fmt.Sprintf("%s/policy %q", tc.name, policy), func(t *testing.T) {
				cause := errors.New("boom from the plugin")
				good1, good2 := goodPlugins()
				fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{
					{Name: "Good1", Plugin: good1},
					{Name: "Faulty", Plugin: tc.faulty(cause), FailurePolicy: policy},
					{Name: "Good2", Plugin: good2},
				})
				metrics := snapshot(t, []string{"Faulty"}, []framework.ExtensionPoint{tc.point})

				got, ignored, err := tc.run(t, fw.Current())

				if tc.point == framework.PointValidate {
					if err != nil {
						t.Fatalf("Validate returned %v", err)
					}
					want := field.ErrorList{field.InternalError(field.NewPath("spec"), errors.New(""))}
					if diff := cmp.Diff(want, got.Errs, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail")); diff != "" {
						t.Errorf("Validate errors (-want +got):\n%s", diff)
					}
					for _, s := range []string{"Faulty", "Validate", cause.Error()} {
						if len(got.Errs) == 1 && !strings.Contains(got.Errs[0].Detail, s) {
							t.Errorf("Validate error %q does not contain %q", got.Errs[0].Detail, s)
						}
					}
				} else {
					var pe *framework.PluginError
					if !errors.As(err, &pe) {
						t.Fatalf("error %v (%T), want a *PluginError", err, err)
					}
					if diff := cmp.Diff("Faulty "+string(tc.point), pe.Plugin+" "+string(pe.Point)); diff != "" {
						t.Errorf("PluginError plugin and point (-want +got):\n%s", diff)
					}
					if !errors.Is(err, cause) {
						t.Errorf("error %v does not wrap the plugin's error", err)
					}
					if !strings.Contains(err.Error(), "Faulty") || !strings.Contains(err.Error(), string(tc.point)) {
						t.Errorf("error %q does not name the plugin and the point", err)
					}
				}
				if len(ignored) != 0 {
					t.Errorf("ignored %v under Fail", ignored)
				}
				want := map[string]pointMetrics{"Faulty." + string(tc.point): {Calls: 1, Errors: 1, Durations: 1}}
				if diff := cmp.Diff(want, metrics.since()); diff != "" {
					t.Errorf("metrics change (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestFailurePolicyIgnore(t *testing.T) {
	for _, tc := range policyCases() {
		t.Run(tc.name, func(t *testing.T) {
			cause := errors.New("boom from the plugin")
			good1, good2 := goodPlugins()
			faulty := tc.faulty(cause)
			fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{
				{Name: "Good1", Plugin: good1},
				{Name: "Faulty", Plugin: faulty, FailurePolicy: frameworkruntime.FailurePolicyIgnore},
				{Name: "Good2", Plugin: good2},
			})
			metrics := snapshot(t, []string{"Faulty"}, []framework.ExtensionPoint{tc.point})

			got, ignored, err := tc.run(t, fw.Current())
			if err != nil {
				t.Fatalf("%s under Ignore: %v", tc.name, err)
			}

			// What the healthy plugins do alone: no trace of the faulty one.
			good1, good2 = goodPlugins()
			want, wantIgnored, err := tc.run(t, newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Good1", Plugin: good1}, {Name: "Good2", Plugin: good2}}).Current())
			if err != nil || len(wantIgnored) > 0 {
				t.Fatalf("%s without the faulty plugin: %v, ignored %v", tc.name, err, wantIgnored)
			}
			if tc.point == framework.PointValidate {
				want.Warnings = []string{want.Warnings[0], "plugin Faulty was skipped (failurePolicy Ignore): its Validate call failed", want.Warnings[1]}
			}
			// A plugin under Ignore works on a JSON copy of Info: empty maps
			// and slices may come back as nil.
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(framework.Info{})); diff != "" {
				t.Errorf("result (-without the faulty plugin +with it, ignored):\n%s", diff)
			}

			if tc.point != framework.PointValidate {
				if diff := cmp.Diff([]ignoredCall{{Plugin: "Faulty", Point: tc.point}}, ignoredCalls(ignored)); diff != "" {
					t.Errorf("ignored (-want +got):\n%s", diff)
				}
				if len(ignored) == 1 && !errors.Is(ignored[0], cause) {
					t.Errorf("the ignored error %v does not wrap the plugin's error", ignored[0])
				}
			}
			wantMetrics := map[string]pointMetrics{"Faulty." + string(tc.point): {Calls: 1, Errors: 1, Ignored: 1, Durations: 1}}
			if diff := cmp.Diff(wantMetrics, metrics.since()); diff != "" {
				t.Errorf("metrics change (-want +got):\n%s", diff)
			}
		})
	}
}

// Under Ignore a plugin works on a copy of Info; a call that succeeds
// keeps its changes as under Fail.
func TestFailurePolicyIgnoreKeepsChangesOfSuccessfulCalls(t *testing.T) {
	run := func(policy frameworkruntime.FailurePolicy) *framework.Info {
		good1, good2 := goodPlugins()
		mid := &changer{&fakePlugin{desc: framework.Description{Name: "Mid"}}}
		fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{
			{Name: "Good1", Plugin: good1},
			{Name: "Mid", Plugin: mid, FailurePolicy: policy},
			{Name: "Good2", Plugin: good2},
		})
		info := policyInfo("")
		cycle := mustCycle(t, fw.Current(), info, testJob())
		if err := cycle.Enforce(context.Background(), info); err != nil || len(cycle.Ignored()) > 0 {
			t.Fatalf("Enforce under %s: %v, ignored %v", policy, err, cycle.Ignored())
		}
		return info
	}
	want, got := run(frameworkruntime.FailurePolicyFail), run(frameworkruntime.FailurePolicyIgnore)
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(framework.Info{})); diff != "" {
		t.Errorf("Info (-under Fail +under Ignore):\n%s", diff)
	}
	if got.Labels["by-midml"] != "yes" || got.Labels["by-midpg"] != "yes" {
		t.Errorf("labels %v, want Mid's changes of both points", got.Labels)
	}
}

// A plugin error that wraps another plugin's PluginError is still the
// error of the plugin that returned it.
func TestWrappedPluginError(t *testing.T) {
	cause := errors.New("boom")
	wrapped := fmt.Errorf("asking the scheduler: %w", &framework.PluginError{Plugin: "Inner", Point: framework.PointBuild, Err: cause})
	for _, policy := range []frameworkruntime.FailurePolicy{frameworkruntime.FailurePolicyFail, frameworkruntime.FailurePolicyIgnore} {
		t.Run(string(policy), func(t *testing.T) {
			p := &fakePlugin{desc: framework.Description{Name: "Outer", MLPolicyKeys: []string{framework.NoPolicyKey}}, mlErr: wrapped}
			fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Outer", Plugin: p, FailurePolicy: policy}})
			info := policyInfo("")
			cycle := mustCycle(t, fw.Current(), info, testJob())
			err := cycle.Enforce(context.Background(), info)
			ignored := cycle.Ignored()
			if policy == frameworkruntime.FailurePolicyIgnore {
				if err != nil {
					t.Fatalf("Enforce: %v", err)
				}
				if diff := cmp.Diff([]ignoredCall{{Plugin: "Outer", Point: framework.PointEnforceMLPolicy}}, ignoredCalls(ignored)); diff != "" {
					t.Errorf("ignored (-want +got):\n%s", diff)
				}
				if len(ignored) == 1 && (!errors.Is(ignored[0], cause) || !strings.Contains(ignored[0].Error(), "Inner")) {
					t.Errorf("ignored error %q lost the inner error", ignored[0])
				}
				return
			}
			if len(ignored) > 0 {
				t.Errorf("ignored %v under Fail", ignored)
			}
			var pe *framework.PluginError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *PluginError", err, err)
			}
			if diff := cmp.Diff("Outer EnforceMLPolicy", pe.Plugin+" "+string(pe.Point)); diff != "" {
				t.Errorf("PluginError plugin and point (-want +got):\n%s", diff)
			}
			if !errors.Is(err, cause) || !strings.Contains(err.Error(), "Inner") {
				t.Errorf("error %q lost the inner error", err)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Checks of built objects

func TestBuiltObjectChecks(t *testing.T) {
	cases := []struct {
		name    string
		objects []*unstructured.Unstructured // the first is valid when there are several
		live    *framework.LiveFields        // of the last object
		wantErr []string
	}{
		{
			name:    "a kind the plugin did not declare",
			objects: []*unstructured.Unstructured{object(configGVK, "", "ok"), object(podGVK, "", "sneaky")},
			wantErr: []string{"v1/Pod", "did not declare"},
		},
		{
			name:    "a declared group with another version",
			objects: []*unstructured.Unstructured{object(schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1", Kind: "JobSet"}, "", "x")},
			wantErr: []string{"jobset.x-k8s.io/v1/JobSet", "did not declare"},
		},
		{
			name:    "another namespace",
			objects: []*unstructured.Unstructured{object(configGVK, "team-a", "ok"), object(configGVK, "kube-system", "escape")},
			wantErr: []string{`"kube-system"`, `"team-a"`, `"escape"`},
		},
		{
			name:    "no name",
			objects: []*unstructured.Unstructured{object(configGVK, "", "")},
			wantErr: []string{"without a name"},
		},
		{
			name:    "a nil object",
			objects: []*unstructured.Unstructured{nil},
			wantErr: []string{"nil object"},
		},
		{
			name:    "a live field the object does not set",
			objects: []*unstructured.Unstructured{object(configGVK, "", "sized")},
			live:    &framework.LiveFields{Paths: []string{"/data/size"}},
			wantErr: []string{"v1/ConfigMap sized", "live field /data/size", "does not set it"},
		},
		{
			name:    "a live field that is not a JSON pointer",
			objects: []*unstructured.Unstructured{object(configGVK, "", "sized")},
			live:    &framework.LiveFields{Paths: []string{"metadata.name"}},
			wantErr: []string{"live field metadata.name", "not a JSON pointer"},
		},
		{
			name:    "live fields without a path",
			objects: []*unstructured.Unstructured{object(configGVK, "", "sized")},
			live:    &framework.LiveFields{Held: "held"},
			wantErr: []string{"live fields without a path"},
		},
	}
	for _, tc := range cases {
		for _, policy := range []frameworkruntime.FailurePolicy{frameworkruntime.FailurePolicyFail, frameworkruntime.FailurePolicyIgnore} {
			t.Run(tc.name+"/"+string(policy), func(t *testing.T) {
				good1, good2 := goodPlugins()
				bad := &fakePlugin{
					desc:  framework.Description{Name: "Builder", Builds: []schema.GroupVersionKind{configGVK, jobSetGVK}},
					build: func(*trainer.TrainJob) []*unstructured.Unstructured { return tc.objects },
					live:  tc.live,
				}
				fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{
					{Name: "Good1", Plugin: good1},
					{Name: "Builder", Plugin: bad, FailurePolicy: policy},
					{Name: "Good2", Plugin: good2},
				})
				metrics := snapshot(t, []string{"Builder"}, []framework.ExtensionPoint{framework.PointBuild})
				info := policyInfo("")
				cycle := mustCycle(t, fw.Current(), info, testJob())
				built, err := cycle.Build(context.Background(), info)
				ignored := cycle.Ignored()
				if diff := cmp.Diff(map[string]pointMetrics{"Builder.Build": {Calls: 1, Errors: 1, Ignored: ignoredCount(policy), Durations: 1}}, metrics.since()); diff != "" {
					t.Errorf("metrics change (-want +got):\n%s", diff)
				}
				if policy == frameworkruntime.FailurePolicyFail {
					if len(ignored) > 0 {
						t.Errorf("ignored %v under Fail", ignored)
					}
					var pe *framework.PluginError
					if !errors.As(err, &pe) || pe.Plugin != "Builder" || pe.Point != framework.PointBuild {
						t.Fatalf("error %v, want a *PluginError of Builder at Build", err)
					}
					for _, s := range append([]string{"Builder"}, tc.wantErr...) {
						if !strings.Contains(err.Error(), s) {
							t.Errorf("error %q does not contain %q", err, s)
						}
					}
					return
				}
				if err != nil {
					t.Fatalf("Build under Ignore: %v", err)
				}
				var got []string
				for _, b := range built {
					got = append(got, b.Plugin+":"+b.Object.GetName())
				}
				if diff := cmp.Diff([]string{"Good1:good1-secret", "Good2:good2-secret"}, got); diff != "" {
					t.Errorf("built objects (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]ignoredCall{{Plugin: "Builder", Point: framework.PointBuild}}, ignoredCalls(ignored)); diff != "" {
					t.Errorf("ignored (-want +got):\n%s", diff)
				}
				for _, s := range tc.wantErr {
					if len(ignored) == 1 && !strings.Contains(ignored[0].Error(), s) {
						t.Errorf("ignored error %q does not contain %q", ignored[0], s)
					}
				}
			})
		}
	}
}

func ignoredCount(policy frameworkruntime.FailurePolicy) float64 {
	if policy == frameworkruntime.FailurePolicyIgnore {
		return 1
	}
	return 0
}

// ---------------------------------------------------------------------------
// Metrics per plugin and point

func TestCallMetrics(t *testing.T) {
	rec := &calls{}
	a := &fakePlugin{
		desc:  framework.Description{Name: "MetricsA", MLPolicyKeys: []string{framework.NoPolicyKey}, Builds: []schema.GroupVersionKind{secretGVK}},
		calls: rec,
		build: func(*trainer.TrainJob) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{object(secretGVK, "", "s")}
		},
	}
	b := &fakePlugin{desc: framework.Description{Name: "MetricsB"}, calls: rec, mlErr: errors.New("no"), statusErr: errors.New("no")}
	notTakingPart := &fakePlugin{desc: framework.Description{Name: "MetricsTorch", MLPolicyKeys: []string{"torch"}}, calls: rec}
	names := []string{"MetricsA", "MetricsB", "MetricsTorch", "MetricsBare"}
	fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{
		{Name: "MetricsA", Plugin: a},
		{Name: "MetricsB", Plugin: b, FailurePolicy: frameworkruntime.FailurePolicyIgnore},
		{Name: "MetricsTorch", Plugin: notTakingPart},
		{Name: "MetricsBare", Plugin: barePlugin{name: "MetricsBare"}},
	})
	metrics := snapshot(t, names, phasePoints)

	ctx := context.Background()
	info, job := policyInfo(""), testJob()
	set := fw.Current()
	for range 2 {
		if _, errs := set.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job}); len(errs) > 0 {
			t.Fatalf("Validate: %v", errs)
		}
	}
	cycle := mustCycle(t, set, info, job)
	if err := cycle.Enforce(ctx, info); err != nil {
		t.Fatalf("Enforce: %v", err)
	}
	if _, err := cycle.Build(ctx, info); err != nil {
		t.Fatalf("Build: %v", err)
	}
	if _, err := cycle.Status(ctx, nil, noOwned); err != nil {
		t.Fatalf("Status: %v", err)
	}
	ignored := cycle.Ignored()
	wantIgnored := []ignoredCall{{Plugin: "MetricsB", Point: framework.PointEnforceMLPolicy}, {Plugin: "MetricsB", Point: framework.PointStatus}}
	if diff := cmp.Diff(wantIgnored, ignoredCalls(ignored)); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}

	ok := pointMetrics{Calls: 1, Durations: 1}
	failed := pointMetrics{Calls: 1, Errors: 1, Ignored: 1, Durations: 1}
	want := map[string]pointMetrics{
		"MetricsA.Validate":              {Calls: 2, Durations: 2},
		"MetricsA.EnforceMLPolicy":       ok,
		"MetricsA.EnforcePodGroupPolicy": ok,
		"MetricsA.Build":                 ok,
		"MetricsA.Status":                ok,
		"MetricsB.Validate":              {Calls: 2, Durations: 2},
		"MetricsB.EnforceMLPolicy":       failed,
		"MetricsB.EnforcePodGroupPolicy": ok,
		"MetricsB.Build":                 ok,
		"MetricsB.Status":                failed,
	}
	if diff := cmp.Diff(want, metrics.since()); diff != "" {
		t.Errorf("metrics change (-want +got):\n%s", diff)
	}
}

// ---------------------------------------------------------------------------
// Supervised plugins

func TestSupervisedPluginNotKnown(t *testing.T) {
	const reason = "process exited: signal: killed; restarting in 4s"
	cases := []struct {
		name     string
		policy   frameworkruntime.FailurePolicy
		mlPolicy string
		// wantErr are substrings of the error of NewCycle and of the
		// warning of Validate; none means the job goes on.
		wantErr []string
		// wantIgnored are what the cycle ignored: the plugin is skipped
		// once, when the cycle chooses its plugins.
		wantIgnored []ignoredCall
		// wantMetrics are the points at which the ignored metric counts
		// the skip: the cycle's and Validate's.
		wantMetrics []framework.ExtensionPoint
		wantBuilt   []string
	}{
		{
			name:     "Fail, a key no known plugin owns",
			policy:   frameworkruntime.FailurePolicyFail,
			mlPolicy: `{"torch":{}}`,
			wantErr:  []string{"Ext", "mlPolicy.torch", reason},
		},
		{
			name:      "Fail, keys owned by known plugins",
			policy:    frameworkruntime.FailurePolicyFail,
			wantBuilt: []string{"Plain:plain-secret"},
		},
		{
			// A plugin that is down took no call: there is no answer to
			// skip under Ignore, and the TrainJob waits for it as under
			// Fail (as for a plugin whose calls are unavailable).
			name:     "Ignore, a key no known plugin owns",
			policy:   frameworkruntime.FailurePolicyIgnore,
			mlPolicy: `{"torch":{}}`,
			wantErr:  []string{"Ext", "mlPolicy.torch", reason},
		},
		{
			name:      "Ignore, keys owned by known plugins",
			policy:    frameworkruntime.FailurePolicyIgnore,
			wantBuilt: []string{"Plain:plain-secret"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &calls{}
			plain := &fakePlugin{
				desc:  framework.Description{Name: "Plain", MLPolicyKeys: []string{framework.NoPolicyKey}, Builds: []schema.GroupVersionKind{secretGVK}},
				calls: rec,
				build: func(*trainer.TrainJob) []*unstructured.Unstructured {
					return []*unstructured.Unstructured{object(secretGVK, "", "plain-secret")}
				},
			}
			ext := &supervisedPlugin{
				fakePlugin: &fakePlugin{desc: framework.Description{Name: "Ext", MLPolicyKeys: []string{"torch"}}, calls: rec},
				ready:      errors.New(reason),
			}
			fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{
				{Name: "Plain", Plugin: plain},
				{Name: "Ext", Plugin: ext, FailurePolicy: tc.policy},
			})
			metrics := snapshot(t, []string{"Ext"}, phasePoints)
			ctx := context.Background()
			info, job := policyInfo(tc.mlPolicy), testJob()
			set := fw.Current()

			warnings, verrs := set.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job})
			cycle, cerr := cycleOf(set, info, job)
			var ignored frameworkruntime.Ignored

			if len(tc.wantErr) > 0 {
				// Admission lets the job in with a warning: the plugin may
				// start later, and the job waits for it.
				if len(verrs) > 0 {
					t.Errorf("Validate errors %v, want a warning only", verrs)
				}
				for _, s := range append(tc.wantErr, "the TrainJob waits for it") {
					if !strings.Contains(strings.Join(warnings, "\n"), s) {
						t.Errorf("Validate warnings %q do not contain %q", warnings, s)
					}
				}
				if cerr == nil || cycle != nil {
					t.Fatalf("NewCycle = %v, %v; want no cycle and an error", cycle, cerr)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(cerr.Error(), s) {
						t.Errorf("NewCycle error %q does not contain %q", cerr, s)
					}
				}
				var unowned *frameworkruntime.UnownedPolicyKeyError
				if !errors.As(cerr, &unowned) || unowned.Key != "torch" {
					t.Errorf("NewCycle error %v does not wrap an UnownedPolicyKeyError of torch", cerr)
				}
				var notStarted *frameworkruntime.NotStartedError
				if !errors.As(cerr, &notStarted) {
					t.Errorf("NewCycle error %v (%T) is not a *NotStartedError", cerr, cerr)
				}
			} else {
				if len(verrs) > 0 || cerr != nil {
					t.Fatalf("errors: Validate %v, NewCycle %v; want none", verrs, cerr)
				}
				eerr := cycle.Enforce(ctx, info)
				built, berr := cycle.Build(ctx, info)
				_, serr := cycle.Status(ctx, nil, noOwned)
				ignored = cycle.Ignored()
				if eerr != nil || berr != nil || serr != nil {
					t.Fatalf("errors: Enforce %v, Build %v, Status %v; want none", eerr, berr, serr)
				}
				var got []string
				for _, b := range built {
					got = append(got, b.Plugin+":"+b.Object.GetName())
				}
				if diff := cmp.Diff(tc.wantBuilt, got); diff != "" {
					t.Errorf("built (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.wantIgnored, ignoredCalls(ignored)); diff != "" {
				t.Errorf("ignored (-want +got):\n%s", diff)
			}
			for _, e := range ignored {
				if !strings.Contains(e.Error(), "mlPolicy.torch") || !strings.Contains(e.Error(), reason) {
					t.Errorf("ignored error %q does not name the key and the reason", e)
				}
			}
			wantMetrics := map[string]pointMetrics{}
			for _, point := range tc.wantMetrics {
				wantMetrics["Ext."+string(point)] = pointMetrics{Ignored: 1}
			}
			if diff := cmp.Diff(wantMetrics, metrics.since()); diff != "" {
				t.Errorf("metrics change (-want +got):\n%s", diff)
			}
			for _, c := range rec.seq {
				if strings.HasPrefix(c, "Ext.") {
					t.Errorf("the plugin that never started was called: %s", c)
				}
			}
			// Without a runtime, the reporters that are known are asked.
			without := set.NewCycleWithoutRuntime(job)
			if _, err := without.Status(ctx, nil, noOwned); err != nil || len(without.Ignored()) > 0 {
				t.Errorf("Status without a runtime: %v, ignored %v", err, without.Ignored())
			}
		})
	}
}

// A supervised plugin that describes itself anew (a restart into another
// version) is seen by the set compiled after its Generation changed; a set
// taken before, and the cycles started on it, keep what it said before.
func TestSupervisedPluginDescribedAnew(t *testing.T) {
	rec := &calls{}
	ext := &supervisedPlugin{
		fakePlugin: &fakePlugin{
			desc: framework.Description{
				Name:         "Ext",
				Version:      "v1",
				MLPolicyKeys: []string{"torch"},
				Builds:       []schema.GroupVersionKind{secretGVK},
			},
			calls: rec,
			build: func(*trainer.TrainJob) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{object(secretGVK, "", "s")}
			},
		},
		generation: 1,
		only:       []framework.ExtensionPoint{framework.PointEnforceMLPolicy, framework.PointBuild},
	}
	fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Ext", Plugin: ext}})
	ctx := context.Background()
	job := testJob()

	before := fw.Current()
	if fw.Current() != before {
		t.Fatal("Current compiled a new set while no plugin described itself anew")
	}
	torchInfo := policyInfo(`{"torch":{}}`)
	torchCycle := mustCycle(t, before, torchInfo, job)
	if err := torchCycle.Enforce(ctx, torchInfo); err != nil {
		t.Fatalf("Enforce of a torch job: %v", err)
	}

	// The process restarts as a newer version: other keys, other kinds.
	ext.desc = framework.Description{
		Name:         "Ext",
		Version:      "v2",
		MLPolicyKeys: []string{"jax"},
		Builds:       []schema.GroupVersionKind{configGVK},
	}
	ext.generation = 2

	// The cycle under way finishes with what the plugin said when it began.
	built, err := torchCycle.Build(ctx, torchInfo)
	if err != nil || len(built) != 1 || built[0].Object.GetKind() != "Secret" {
		t.Errorf("Build of the torch job begun before the restart = %v, %v; want its Secret", built, err)
	}

	after := fw.Current()
	if after == before || after.ID() == before.ID() {
		t.Fatalf("Current after the new Generation is the set of before (ID %d)", before.ID())
	}
	if fw.Current() != after {
		t.Error("Current compiled the set again without a new Generation")
	}
	_, err = cycleOf(after, policyInfo(`{"torch":{}}`), job)
	var unowned *frameworkruntime.UnownedPolicyKeyError
	if !errors.As(err, &unowned) || unowned.Key != "torch" {
		t.Errorf("NewCycle of a torch job after the change: %v, want torch unowned", err)
	}
	jaxInfo := policyInfo(`{"jax":{}}`)
	jaxCycle := mustCycle(t, after, jaxInfo, job)
	if err := jaxCycle.Enforce(ctx, jaxInfo); err != nil {
		t.Errorf("Enforce of a jax job after the change: %v", err)
	}
	_, err = jaxCycle.Build(ctx, jaxInfo)
	if err == nil || !strings.Contains(err.Error(), "v1/Secret") || !strings.Contains(err.Error(), "did not declare") {
		t.Errorf("Build of a Secret after the plugin stopped declaring it: %v, want a refusal", err)
	}
	want := []string{"Ext.EnforceMLPolicy", "Ext.Build", "Ext.EnforceMLPolicy", "Ext.Build"}
	if diff := cmp.Diff(want, rec.seq); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]framework.Description{ext.desc}, after.Descriptions()); diff != "" {
		t.Errorf("Descriptions after the restart (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("v1", before.Descriptions()[0].Version); diff != "" {
		t.Errorf("Descriptions of the set taken before (-want +got):\n%s", diff)
	}
	sources, ignored, err := after.WatchSources(ctx)
	if err != nil || len(ignored) > 0 {
		t.Fatalf("WatchSources: %v, ignored %v", err, ignored)
	}
	if diff := cmp.Diff([]frameworkruntime.PluginWatchSource{{WatchSource: framework.WatchSource{Kind: configGVK, Mapping: framework.MapByOwner}, Plugin: "Ext"}}, sources); diff != "" {
		t.Errorf("WatchSources (-want +got):\n%s", diff)
	}
}

// A supervised plugin that starts for the first time joins the set
// compiled after: the jobs whose key it owns run, and its kinds are
// watched.
func TestSupervisedPluginFirstStart(t *testing.T) {
	rec := &calls{}
	ext := &supervisedPlugin{
		fakePlugin: &fakePlugin{
			desc:  framework.Description{Name: "Ext", Version: "v1", MLPolicyKeys: []string{"torch"}, Builds: []schema.GroupVersionKind{secretGVK}},
			calls: rec,
		},
		ready: errors.New("starting"),
	}
	fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Ext", Plugin: ext}})
	ctx := context.Background()
	info, job := policyInfo(`{"torch":{}}`), testJob()

	before := fw.Current()
	if diff := cmp.Diff([]framework.Description{{Name: "Ext"}}, before.Descriptions()); diff != "" {
		t.Errorf("Descriptions before the start (-want +got):\n%s", diff)
	}
	var notStarted *frameworkruntime.NotStartedError
	if _, err := cycleOf(before, info, job); !errors.As(err, &notStarted) {
		t.Errorf("NewCycle before the start: %v, want a *NotStartedError", err)
	}
	if sources, _, err := before.WatchSources(ctx); err != nil || len(sources) > 0 {
		t.Errorf("WatchSources before the start = %v, %v; want none", sources, err)
	}

	ext.generation, ext.ready = 1, nil
	after := fw.Current()
	if after == before {
		t.Fatal("Current did not compile the set again after the plugin's first start")
	}
	if err := after.Ready(); err != nil {
		t.Errorf("Ready after the start: %v", err)
	}
	if diff := cmp.Diff([]framework.Description{ext.desc}, after.Descriptions()); diff != "" {
		t.Errorf("Descriptions after the start (-want +got):\n%s", diff)
	}
	if err := mustCycle(t, after, info, job).Enforce(ctx, info); err != nil {
		t.Fatalf("Enforce after the start: %v", err)
	}
	if diff := cmp.Diff([]string{"Ext.EnforceMLPolicy", "Ext.EnforcePodGroupPolicy"}, rec.seq); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	sources, _, err := after.WatchSources(ctx)
	if err != nil {
		t.Fatalf("WatchSources: %v", err)
	}
	if diff := cmp.Diff([]frameworkruntime.PluginWatchSource{{WatchSource: framework.WatchSource{Kind: secretGVK, Mapping: framework.MapByOwner}, Plugin: "Ext"}}, sources); diff != "" {
		t.Errorf("WatchSources after the start (-want +got):\n%s", diff)
	}
}

func TestReady(t *testing.T) {
	sup := func(name string, known bool, ready error) *supervisedPlugin {
		p := &supervisedPlugin{fakePlugin: &fakePlugin{desc: framework.Description{Name: name}}, ready: ready}
		if known {
			p.generation = 1
		}
		return p
	}
	cases := []struct {
		name    string
		specs   []frameworkruntime.PluginSpec
		want    []string // substrings; none means ready
		notWant []string
	}{
		{
			name: "Fail plugins not ready are named, Ignore and in-process ones are not",
			specs: []frameworkruntime.PluginSpec{
				{Name: "InProc", Plugin: &fakePlugin{desc: framework.Description{Name: "InProc"}}},
				{Name: "FailDown", Plugin: sup("FailDown", false, errors.New("exec: permission denied"))},
				{Name: "FailCrashing", Plugin: sup("FailCrashing", true, errors.New("restarting after 3 crashes")), FailurePolicy: frameworkruntime.FailurePolicyFail},
				{Name: "IgnoreDown", Plugin: sup("IgnoreDown", false, errors.New("sha256 mismatch")), FailurePolicy: frameworkruntime.FailurePolicyIgnore},
				{Name: "FailUp", Plugin: sup("FailUp", true, nil)},
			},
			want:    []string{"FailDown", "exec: permission denied", "FailCrashing", "restarting after 3 crashes"},
			notWant: []string{"IgnoreDown", "sha256 mismatch", "FailUp", "InProc"},
		},
		{
			name: "only Ignore plugins are down",
			specs: []frameworkruntime.PluginSpec{
				{Name: "IgnoreDown", Plugin: sup("IgnoreDown", false, errors.New("sha256 mismatch")), FailurePolicy: frameworkruntime.FailurePolicyIgnore},
				{Name: "FailUp", Plugin: sup("FailUp", true, nil)},
			},
		},
		{
			name:  "in-process plugins only",
			specs: []frameworkruntime.PluginSpec{{Name: "InProc", Plugin: &fakePlugin{desc: framework.Description{Name: "InProc"}}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := newFrameworkOf(t, tc.specs).Current().Ready()
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("Ready: %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Ready = nil, want an error naming %v", tc.want)
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Ready error %q does not contain %q", err, s)
				}
			}
			for _, s := range tc.notWant {
				if strings.Contains(err.Error(), s) {
					t.Errorf("Ready error %q contains %q", err, s)
				}
			}
		})
	}
}

func TestNewWithSupervisedPluginsAndPolicies(t *testing.T) {
	cases := []struct {
		name    string
		spec    frameworkruntime.PluginSpec
		wantErr []string // none means success
	}{
		{
			name: "a known supervised plugin describing itself under another name",
			spec: frameworkruntime.PluginSpec{Name: "Ext", Plugin: &supervisedPlugin{
				fakePlugin: &fakePlugin{desc: framework.Description{Name: "Impostor"}}, generation: 1,
			}},
			wantErr: []string{`"Ext"`, `"Impostor"`},
		},
		{
			name: "a supervised plugin that never started cannot be checked yet",
			spec: frameworkruntime.PluginSpec{Name: "Ext", Plugin: &supervisedPlugin{
				fakePlugin: &fakePlugin{desc: framework.Description{Name: "Impostor"}}, ready: errors.New("starting"),
			}},
		},
		{
			name:    "an unknown failure policy",
			spec:    frameworkruntime.PluginSpec{Name: "P", Plugin: &fakePlugin{desc: framework.Description{Name: "P"}}, FailurePolicy: "Sometimes"},
			wantErr: []string{`"P"`, `"Sometimes"`, "Fail", "Ignore"},
		},
		{
			name:    "a failure policy in lower case",
			spec:    frameworkruntime.PluginSpec{Name: "P", Plugin: &fakePlugin{desc: framework.Description{Name: "P"}}, FailurePolicy: "ignore"},
			wantErr: []string{`"P"`, `"ignore"`},
		},
		{
			name: "an unknown failure policy of a supervised plugin",
			spec: frameworkruntime.PluginSpec{Name: "Ext", Plugin: &supervisedPlugin{
				fakePlugin: &fakePlugin{desc: framework.Description{Name: "Ext"}}, generation: 1,
			}, FailurePolicy: "Retry"},
			wantErr: []string{`"Ext"`, `"Retry"`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := frameworkruntime.New(context.Background(), framework.Registry{}, []frameworkruntime.PluginSpec{tc.spec})
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("New succeeded, want an error containing %q", tc.wantErr)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("New error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestNewDoesNotConfigureSupervisedPlugins(t *testing.T) {
	ext := &supervisedPlugin{fakePlugin: &fakePlugin{desc: framework.Description{Name: "Ext"}}, generation: 1}
	registry := framework.Registry{"Ext": func(framework.Handle) framework.Plugin { return ext }}
	if _, err := frameworkruntime.New(context.Background(), registry, []frameworkruntime.PluginSpec{{Name: "Ext", Args: []byte(`{"x":1}`)}}); err != nil {
		t.Fatalf("New: %v", err)
	}
	if ext.configured {
		t.Error("New configured a supervised plugin; its host configures it on each start")
	}
}

// ---------------------------------------------------------------------------
// Points

// Plugin types implementing subsets of the points.
type (
	buildOnlyPlugin    struct{ barePlugin }
	configStatusPlugin struct{ barePlugin }
	validatingEnforcer struct{ barePlugin }
	groupWatcher       struct{ barePlugin }
)

func (buildOnlyPlugin) Build(context.Context, *framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
	return nil, nil
}

func (configStatusPlugin) Configure(context.Context, json.RawMessage) error { return nil }

func (configStatusPlugin) Status(context.Context, *framework.Info, *trainer.TrainJob, []*unstructured.Unstructured) (*framework.StatusReport, error) {
	return nil, nil
}

func (validatingEnforcer) Validate(context.Context, framework.ValidateRequest) ([]string, field.ErrorList, error) {
	return nil, nil, nil
}

func (validatingEnforcer) EnforceMLPolicy(context.Context, *framework.Info, *trainer.TrainJob) error {
	return nil
}

func (groupWatcher) EnforcePodGroupPolicy(context.Context, *framework.Info, *trainer.TrainJob) error {
	return nil
}

func (groupWatcher) Watch(context.Context) ([]framework.WatchSource, error) { return nil, nil }

func TestImplementationOf(t *testing.T) {
	cases := []struct {
		name   string
		plugin framework.Plugin
		want   []framework.ExtensionPoint
	}{
		{name: "none", plugin: barePlugin{name: "x"}},
		{name: "Build", plugin: buildOnlyPlugin{}, want: []framework.ExtensionPoint{framework.PointBuild}},
		{name: "Configure and Status", plugin: configStatusPlugin{}, want: []framework.ExtensionPoint{framework.PointConfigure, framework.PointStatus}},
		{name: "Validate and EnforceMLPolicy", plugin: validatingEnforcer{}, want: []framework.ExtensionPoint{framework.PointValidate, framework.PointEnforceMLPolicy}},
		{name: "EnforcePodGroupPolicy and Watch", plugin: groupWatcher{}, want: []framework.ExtensionPoint{framework.PointEnforcePodGroupPolicy, framework.PointWatch}},
		{name: "every point, in reconcile order", plugin: &fakePlugin{}, want: allPoints},
		{name: "a supervised wrapper", plugin: &supervisedPlugin{fakePlugin: &fakePlugin{}}, want: allPoints},
		{name: "a supervised wrapper of Build only", plugin: &supervisedBuilder{}, want: []framework.ExtensionPoint{framework.PointBuild}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, framework.ImplementationOf(tc.plugin).Points()); diff != "" {
				t.Errorf("ImplementationOf(...).Points() (-want +got):\n%s", diff)
			}
		})
	}
}

var allPoints = []framework.ExtensionPoint{
	framework.PointConfigure, framework.PointValidate, framework.PointEnforceMLPolicy, framework.PointEnforcePodGroupPolicy,
	framework.PointBuild, framework.PointWatch, framework.PointStatus,
}

// Only keeps the points listed that the implementation has, in the order
// of a reconcile: what the host calls of a plugin behind the protocol.
func TestImplementationOnly(t *testing.T) {
	cases := []struct {
		name   string
		plugin framework.Plugin
		only   []framework.ExtensionPoint
		want   []framework.ExtensionPoint
	}{
		{name: "two of every point, in reconcile order", plugin: &fakePlugin{},
			only: []framework.ExtensionPoint{framework.PointStatus, framework.PointValidate},
			want: []framework.ExtensionPoint{framework.PointValidate, framework.PointStatus}},
		{name: "a point the type lacks is not made up", plugin: buildOnlyPlugin{},
			only: []framework.ExtensionPoint{framework.PointStatus, framework.PointBuild},
			want: []framework.ExtensionPoint{framework.PointBuild}},
		{name: "none listed", plugin: &fakePlugin{}, only: []framework.ExtensionPoint{}},
		{name: "a point this host does not know", plugin: &fakePlugin{}, only: []framework.ExtensionPoint{"Reserve"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, framework.ImplementationOf(tc.plugin).Only(tc.only).Points()); diff != "" {
				t.Errorf("Only(%v).Points() (-want +got):\n%s", tc.only, diff)
			}
		})
	}
}

// The set calls only the points of a plugin's implementation: the one a
// supervised plugin described, else its type's; and shows each plugin's
// description as the plugin gave it.
func TestSetCallsOnlyImplementedPoints(t *testing.T) {
	cases := []struct {
		name   string
		plugin func(rec *calls) framework.Plugin
		want   []string
	}{
		{
			name: "a supervised plugin whose implementation omits Build",
			plugin: func(rec *calls) framework.Plugin {
				return &supervisedPlugin{
					fakePlugin: &fakePlugin{
						desc:  framework.Description{Name: "P", Builds: []schema.GroupVersionKind{secretGVK}},
						calls: rec,
					},
					generation: 1,
					only:       []framework.ExtensionPoint{framework.PointEnforceMLPolicy},
				}
			},
			want: []string{"P.EnforceMLPolicy"},
		},
		{
			name: "a supervised plugin that implements no point",
			plugin: func(rec *calls) framework.Plugin {
				return &supervisedPlugin{fakePlugin: &fakePlugin{desc: framework.Description{Name: "P"}, calls: rec}, generation: 1, only: []framework.ExtensionPoint{}}
			},
		},
		{
			name: "a supervised plugin whose type implements only Build",
			plugin: func(rec *calls) framework.Plugin {
				return &supervisedBuilder{desc: framework.Description{Name: "P"}, calls: rec}
			},
			want: []string{"P.Build"},
		},
		{
			name: "an in-process plugin",
			plugin: func(rec *calls) framework.Plugin {
				return &fakePlugin{desc: framework.Description{Name: "P"}, calls: rec}
			},
			want: []string{"P.Validate", "P.EnforceMLPolicy", "P.EnforcePodGroupPolicy", "P.Build", "P.Watch", "P.Status"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &calls{}
			p := tc.plugin(rec)
			fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{
				{Name: "Plain", Plugin: ownerPlugin{desc: framework.Description{Name: "Plain", MLPolicyKeys: []string{framework.NoPolicyKey}}}},
				{Name: "P", Plugin: p},
			})
			ctx := context.Background()
			info, job := policyInfo(""), testJob()
			set := fw.Current()
			if _, errs := set.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job}); len(errs) > 0 {
				t.Fatalf("Validate: %v", errs)
			}
			cycle := mustCycle(t, set, info, job)
			if err := cycle.Enforce(ctx, info); err != nil {
				t.Fatalf("Enforce: %v", err)
			}
			if _, err := cycle.Build(ctx, info); err != nil {
				t.Fatalf("Build: %v", err)
			}
			if _, _, err := set.WatchSources(ctx); err != nil {
				t.Fatalf("WatchSources: %v", err)
			}
			if _, err := cycle.Status(ctx, nil, noOwned); err != nil {
				t.Fatalf("Status: %v", err)
			}
			if diff := cmp.Diff(tc.want, rec.seq); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(p.Describe(), set.Descriptions()[1]); diff != "" {
				t.Errorf("Descriptions (-the plugin's +shown):\n%s", diff)
			}
		})
	}
}

func TestDescriptionTakesPart(t *testing.T) {
	cases := []struct {
		name   string
		desc   framework.Description
		ml, pg string
		want   bool
	}{
		{name: "no keys: every job", desc: framework.Description{}, ml: `{"torch":{}}`, want: true},
		{name: "owned ml key", desc: framework.Description{MLPolicyKeys: []string{"torch"}}, ml: `{"torch":{}}`, want: true},
		{name: "other ml key", desc: framework.Description{MLPolicyKeys: []string{"mpi"}}, ml: `{"torch":{}}`, want: false},
		{name: "no framework key owned by empty key", desc: framework.Description{MLPolicyKeys: []string{""}}, ml: `{"numNodes":2}`, want: true},
		{name: "empty key with a framework key", desc: framework.Description{MLPolicyKeys: []string{""}}, ml: `{"torch":{}}`, want: false},
		{name: "star owns every job", desc: framework.Description{PodGroupPolicyKeys: []string{"*"}}, ml: `{"torch":{}}`, want: true},
		{name: "owned pod-group key", desc: framework.Description{PodGroupPolicyKeys: []string{"coscheduling"}}, pg: `{"coscheduling":{}}`, want: true},
		{name: "pod-group owner, no pod-group key", desc: framework.Description{PodGroupPolicyKeys: []string{"coscheduling"}}, ml: `{"torch":{}}`, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := infoWith(tc.ml, tc.pg).PolicyKeys()
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.desc.TakesPart(keys); got != tc.want {
				t.Errorf("TakesPart(%+v) = %v, want %v", keys, got, tc.want)
			}
		})
	}
}

func TestWatchSourcesUnderIgnore(t *testing.T) {
	cause := errors.New("watch list unavailable")
	for _, tc := range []struct {
		policy  frameworkruntime.FailurePolicy
		wantErr bool
	}{{frameworkruntime.FailurePolicyFail, true}, {frameworkruntime.FailurePolicyIgnore, false}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			builder := &fakePlugin{desc: framework.Description{Name: "Builder", Builds: []schema.GroupVersionKind{secretGVK}}}
			watcher := &fakePlugin{desc: framework.Description{Name: "Watcher", Builds: []schema.GroupVersionKind{configGVK}}, watchErr: cause}
			fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{
				{Name: "Builder", Plugin: builder},
				{Name: "Watcher", Plugin: watcher, FailurePolicy: tc.policy},
			})
			metrics := snapshot(t, []string{"Watcher"}, []framework.ExtensionPoint{framework.PointWatch})
			got, ignored, err := fw.Current().WatchSources(context.Background())
			if diff := cmp.Diff(map[string]pointMetrics{"Watcher.Watch": {Calls: 1, Errors: 1, Ignored: ignoredCount(tc.policy), Durations: 1}}, metrics.since()); diff != "" {
				t.Errorf("metrics change (-want +got):\n%s", diff)
			}
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "plugin Watcher, Watch") {
					t.Fatalf("WatchSources error %v, want one naming plugin Watcher at Watch", err)
				}
				if len(ignored) > 0 {
					t.Errorf("ignored %v under Fail", ignored)
				}
				return
			}
			if err != nil {
				t.Fatalf("WatchSources: %v", err)
			}
			var kinds []string
			for _, s := range got {
				kinds = append(kinds, s.Plugin+":"+s.Kind.Kind)
			}
			// The watcher's built kind is still watched; its Watch is skipped.
			if diff := cmp.Diff([]string{"Builder:Secret", "Watcher:ConfigMap"}, kinds); diff != "" {
				t.Errorf("WatchSources (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]ignoredCall{{Plugin: "Watcher", Point: framework.PointWatch}}, ignoredCalls(ignored)); diff != "" {
				t.Errorf("ignored (-want +got):\n%s", diff)
			}
			if len(ignored) == 1 && !errors.Is(ignored[0], cause) {
				t.Errorf("the ignored error %v does not wrap the plugin's error", ignored[0])
			}
		})
	}
}
