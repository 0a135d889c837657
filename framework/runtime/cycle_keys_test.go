package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// builderOf is a plugin owning keys that builds one object of kind gvk,
// named after itself, and records its calls.
func builderOf(rec *calls, name string, keys []string, gvk schema.GroupVersionKind) *fakePlugin {
	return &fakePlugin{
		desc:  framework.Description{Name: name, MLPolicyKeys: keys, Builds: []schema.GroupVersionKind{gvk}},
		calls: rec,
		build: func(*trainer.TrainJob) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{object(gvk, "", strings.ToLower(name))}
		},
	}
}

// builtNames returns "<plugin>:<object name>" of each built object.
func builtNames(built []frameworkruntime.BuiltObject) []string {
	var out []string
	for _, b := range built {
		out = append(out, b.Plugin+":"+b.Object.GetName())
	}
	return out
}

// A cycle chooses its plugins from the keys it was started with: what the
// phases are given later does not choose again (Build aside, below).
func TestCycleChoosesItsPluginsOnce(t *testing.T) {
	rec := &calls{}
	plain := builderOf(rec, "Plain", []string{framework.NoPolicyKey}, configGVK)
	torch := builderOf(rec, "Torch", []string{"torch"}, secretGVK)
	jax := builderOf(rec, "Jax", []string{"jax"}, jobSetGVK)
	fw := newFramework(t, registryOf(t, plain, torch, jax), "Plain", "Torch", "Jax")
	ctx := context.Background()
	job := testJob()

	torchKeys, err := policyInfo(`{"torch":{}}`).PolicyKeys()
	if err != nil {
		t.Fatal(err)
	}
	cycle, err := fw.Current().NewCycle(job, torchKeys)
	if err != nil {
		t.Fatalf("NewCycle: %v", err)
	}
	if diff := cmp.Diff(framework.PolicyKeys{ML: []string{"torch"}}, cycle.Keys()); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Torch"}, cycle.Shapers()); diff != "" {
		t.Errorf("Shapers (-want +got):\n%s", diff)
	}

	// The Info given to Enforce is a jax job's: the cycle's torch choice
	// stands.
	if err := cycle.Enforce(ctx, policyInfo(`{"jax":{}}`)); err != nil {
		t.Fatalf("Enforce: %v", err)
	}
	if _, err := cycle.Status(ctx, nil, noOwned); err != nil {
		t.Fatalf("Status: %v", err)
	}
	want := []string{"Torch.EnforceMLPolicy", "Torch.EnforcePodGroupPolicy", "Torch.Status"}
	if diff := cmp.Diff(want, rec.seq); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// rewriter is an ML enforcer that replaces the runtime's mlPolicy, as a
// plugin that translates a vendor key into a framework key does.
type rewriter struct {
	*fakePlugin
	to string
}

func (p *rewriter) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	p.calls.add(p.desc.Name, framework.PointEnforceMLPolicy)
	info.RuntimePolicy.MLPolicy = json.RawMessage(p.to)
	return nil
}

// An enforcer that changes the runtime's policy keys has the builders and
// status reporters chosen again by the keys it left, checked as NewCycle
// checks them.
func TestCycleChoosesAgainWhenAnEnforcerChangedThePolicyKeys(t *testing.T) {
	const reason = "exec: permission denied"
	enforced := []string{"Translator.EnforceMLPolicy", "Plain.EnforceMLPolicy", "Translator.EnforcePodGroupPolicy", "Plain.EnforcePodGroupPolicy"}
	cases := []struct {
		name string
		to   string
		// withExt enables Ext, a plugin under Ignore that has not
		// started and so may own any key.
		withExt bool
		// wantErr names the key of the error of the cycle (of Enforce or
		// of Build); then nothing is built.
		wantErr     string
		wantBuilt   []string
		wantCalls   []string // after Enforce's
		wantIgnored []string // the plugins skipped
	}{
		{
			name:      "keys unchanged: the plugins chosen at the start",
			to:        `{"numNodes":4}`,
			wantBuilt: []string{"Translator:translator", "Plain:plain"},
			wantCalls: []string{"Translator.Build", "Plain.Build", "Translator.Status", "Plain.Status"},
		},
		{
			name:      "a key set by the enforcer: its owner builds and reports, the owner of no key does not",
			to:        `{"torch":{}}`,
			wantBuilt: []string{"Translator:translator", "Torch:torch"},
			wantCalls: []string{"Translator.Build", "Torch.Build", "Translator.Status", "Torch.Status"},
		},
		{
			name:    "a key that no plugin owns",
			to:      `{"deepspeed":{}}`,
			wantErr: "mlPolicy.deepspeed",
		},
		{
			// Ext, under Ignore, may own the key: it took no call, so
			// there is nothing to skip; the cycle waits for it, as
			// NewCycle would (a *NotStartedError), and the TrainJob is
			// retried.
			name:    "a key that only a plugin that has not started may own",
			to:      `{"jax":{}}`,
			withExt: true,
			wantErr: "mlPolicy.jax: no running plugin owns this key; it may belong to a plugin that has not started: Ext",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &calls{}
			// Translator owns every key, so that it takes part before and
			// after; Plain owns the jobs without a key.
			translator := &rewriter{builderOf(rec, "Translator", []string{framework.AnyPolicyKey}, configGVK), tc.to}
			plain := builderOf(rec, "Plain", []string{framework.NoPolicyKey}, secretGVK)
			torch := builderOf(rec, "Torch", []string{"torch"}, jobSetGVK)
			specs := []frameworkruntime.PluginSpec{
				{Name: "Translator", Plugin: translator},
				{Name: "Plain", Plugin: plain},
				{Name: "Torch", Plugin: torch},
			}
			if tc.withExt {
				ext := &supervisedPlugin{fakePlugin: &fakePlugin{desc: framework.Description{Name: "Ext", MLPolicyKeys: []string{"jax"}}, calls: rec}, ready: errors.New(reason)}
				specs = append(specs, frameworkruntime.PluginSpec{Name: "Ext", Plugin: ext, FailurePolicy: frameworkruntime.FailurePolicyIgnore})
			}
			fw := newFrameworkOf(t, specs)
			metrics := snapshot(t, []string{"Ext"}, phasePoints)
			ctx := context.Background()
			info := policyInfo("")
			cycle := mustCycle(t, fw.Current(), info, testJob())

			err := cycle.Enforce(ctx, info)
			var built []frameworkruntime.BuiltObject
			if err == nil {
				built, err = cycle.Build(ctx, info)
			}
			if err == nil {
				_, err = cycle.Status(ctx, nil, noOwned)
			}
			ignored := cycle.Ignored()
			if tc.wantErr != "" {
				var unowned *frameworkruntime.UnownedPolicyKeyError
				if !errors.As(err, &unowned) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("cycle error %v, want an *UnownedPolicyKeyError naming %s", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("cycle: %v", err)
			}
			if diff := cmp.Diff(tc.wantBuilt, builtNames(built)); diff != "" {
				t.Errorf("built (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(append(enforced, tc.wantCalls...), rec.seq); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			var gotIgnored []string
			for _, e := range ignored {
				gotIgnored = append(gotIgnored, e.Plugin)
				if !strings.Contains(e.Error(), "mlPolicy.jax") || !strings.Contains(e.Error(), reason) {
					t.Errorf("ignored error %q does not name the key and the reason", e)
				}
			}
			if diff := cmp.Diff(tc.wantIgnored, gotIgnored); diff != "" {
				t.Errorf("ignored plugins (-want +got):\n%s", diff)
			}
			var counted float64
			for _, m := range metrics.since() {
				counted += m.Ignored
			}
			if want := float64(len(tc.wantIgnored)); counted != want {
				t.Errorf("trainforge_plugin_ignored_total of Ext grew by %v, want %v", counted, want)
			}
		})
	}
}

// Replace changes the set that Current returns; a cycle under way finishes
// with the set it was started on.
func TestReplaceDuringACycle(t *testing.T) {
	rec := &calls{}
	fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Old", Plugin: builderOf(rec, "Old", []string{framework.NoPolicyKey}, secretGVK)}})
	next := newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "New", Plugin: builderOf(rec, "New", []string{framework.NoPolicyKey}, configGVK)}})
	ctx := context.Background()
	info, job := policyInfo(""), testJob()

	before := fw.Current()
	cycle := mustCycle(t, before, info, job)
	if err := cycle.Enforce(ctx, info); err != nil {
		t.Fatalf("Enforce: %v", err)
	}

	fw.Replace(next)

	built, err := cycle.Build(ctx, info)
	if err != nil {
		t.Fatalf("Build of the cycle begun before Replace: %v", err)
	}
	if diff := cmp.Diff([]string{"Old:old"}, builtNames(built)); diff != "" {
		t.Errorf("built by the cycle begun before Replace (-want +got):\n%s", diff)
	}
	after := fw.Current()
	if after.ID() == before.ID() || after.ID() != next.Current().ID() {
		t.Errorf("Current after Replace has ID %d; want next's %d, not the old %d", after.ID(), next.Current().ID(), before.ID())
	}
	if got := before.Descriptions(); len(got) != 1 || got[0].Name != "Old" {
		t.Errorf("the set taken before Replace now describes %v, want Old", got)
	}
	built, err = mustCycle(t, after, info, job).Build(ctx, info)
	if err != nil {
		t.Fatalf("Build after Replace: %v", err)
	}
	if diff := cmp.Diff([]string{"New:new"}, builtNames(built)); diff != "" {
		t.Errorf("built after Replace (-want +got):\n%s", diff)
	}
	want := []string{"Old.EnforceMLPolicy", "Old.EnforcePodGroupPolicy", "Old.Build", "New.Build"}
	if diff := cmp.Diff(want, rec.seq); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// Without a runtime (deleted, and no snapshot) every described status
// reporter is asked, each with the owned objects of the kinds it builds;
// a supervised plugin that never started is not.
func TestStatusWithoutRuntime(t *testing.T) {
	rec := &calls{}
	plain := builderOf(rec, "Plain", []string{framework.NoPolicyKey}, secretGVK)
	torch := builderOf(rec, "Torch", []string{"torch"}, jobSetGVK)
	volcano := builderOf(rec, "Volcano", nil, configGVK)
	volcano.desc.PodGroupPolicyKeys = []string{"volcano"}
	volcano.status = &framework.StatusReport{Conditions: []metav1.Condition{{Type: "GangScheduled", Status: metav1.ConditionTrue, Reason: "FromVolcano"}}}
	ext := &supervisedPlugin{fakePlugin: &fakePlugin{desc: framework.Description{Name: "Ext", Builds: []schema.GroupVersionKind{podGVK}}, calls: rec}, ready: errors.New("starting")}
	fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{
		{Name: "Plain", Plugin: plain},
		{Name: "Torch", Plugin: torch},
		{Name: "Volcano", Plugin: volcano},
		{Name: "Ext", Plugin: ext, FailurePolicy: frameworkruntime.FailurePolicyIgnore},
	})
	podGroup := object(configGVK, "team-a", "job")
	var listed []schema.GroupVersionKind
	list := func(_ context.Context, gvk schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
		listed = append(listed, gvk)
		if gvk == configGVK {
			return []*unstructured.Unstructured{podGroup}, nil
		}
		return nil, nil
	}
	cycle := fw.Current().NewCycleWithoutRuntime(testJob())
	got, err := cycle.Status(context.Background(), nil, list)
	if err != nil || len(cycle.Ignored()) > 0 {
		t.Fatalf("Status: %v, ignored %v", err, cycle.Ignored())
	}
	want := []*framework.StatusReport{{Conditions: []metav1.Condition{{Type: "GangScheduled", Status: metav1.ConditionTrue, Reason: "FromVolcano"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Plain.Status", "Torch.Status", "Volcano.Status"}, rec.seq); diff != "" {
		t.Errorf("reporters asked (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]schema.GroupVersionKind{secretGVK, jobSetGVK, configGVK}, listed); diff != "" {
		t.Errorf("kinds listed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]*unstructured.Unstructured{podGroup}, volcano.gotOwned); diff != "" {
		t.Errorf("objects given to Volcano (-want +got):\n%s", diff)
	}
}
