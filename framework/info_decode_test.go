package framework_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// What MLPolicy, PodGroupPolicy and TemplateSpec return is the caller's to
// change: two calls return equal values that share nothing, and bytes a
// plugin put in place of the runtime's are what the next call decodes.
func TestInfoDecodedPolicies(t *testing.T) {
	info := infoWith(`{"numNodes":2,"torch":{"numProcPerNode":4}}`, `{"coscheduling":{"scheduleTimeoutSeconds":60}}`)

	first, err := info.MLPolicy()
	if err != nil {
		t.Fatalf("MLPolicy: %v", err)
	}
	second, err := info.MLPolicy()
	if err != nil {
		t.Fatalf("MLPolicy again: %v", err)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("MLPolicy twice (-first +second):\n%s", diff)
	}
	if first == second || first.Torch == second.Torch || first.NumNodes == second.NumNodes {
		t.Fatal("two MLPolicy calls share memory: a caller's change would reach the other")
	}
	*first.NumNodes = 99
	first.Torch = nil
	third, err := info.MLPolicy()
	if err != nil {
		t.Fatalf("MLPolicy a third time: %v", err)
	}
	if ptr.Deref(third.NumNodes, 0) != 2 || third.Torch == nil {
		t.Errorf("MLPolicy after a caller changed its copy = numNodes %v, torch %v; want the runtime's 2 and torch", ptr.Deref(third.NumNodes, 0), third.Torch)
	}

	pg1, err := info.PodGroupPolicy()
	if err != nil {
		t.Fatalf("PodGroupPolicy: %v", err)
	}
	pg1.Coscheduling.ScheduleTimeoutSeconds = ptr.To[int32](1)
	pg2, err := info.PodGroupPolicy()
	if err != nil {
		t.Fatalf("PodGroupPolicy again: %v", err)
	}
	if got := ptr.Deref(pg2.Coscheduling.ScheduleTimeoutSeconds, 0); got != 60 {
		t.Errorf("PodGroupPolicy after a caller changed its copy: scheduleTimeoutSeconds %d, want 60", got)
	}

	// A plugin replaces the policy: it is decoded anew, and so are its keys.
	info.RuntimePolicy.MLPolicy = json.RawMessage(`{"numNodes":3,"jax":{}}`)
	replaced, err := info.MLPolicy()
	if err != nil {
		t.Fatalf("MLPolicy after the replacement: %v", err)
	}
	if ptr.Deref(replaced.NumNodes, 0) != 3 || replaced.JAX == nil || replaced.Torch != nil {
		t.Errorf("MLPolicy after the replacement = %+v, want numNodes 3 and jax only", replaced)
	}
	keys, err := info.PolicyKeys()
	if err != nil {
		t.Fatalf("PolicyKeys: %v", err)
	}
	if diff := cmp.Diff(framework.PolicyKeys{ML: []string{"jax"}, PodGroup: []string{"coscheduling"}}, keys); diff != "" {
		t.Errorf("PolicyKeys after the replacement (-want +got):\n%s", diff)
	}

	// Bytes of the same length are still other bytes.
	info.RuntimePolicy.MLPolicy = json.RawMessage(`{"numNodes":7,"jax":{}}`)
	if p, err := info.MLPolicy(); err != nil || ptr.Deref(p.NumNodes, 0) != 7 {
		t.Errorf("MLPolicy after a replacement of the same length = %+v, %v; want numNodes 7", p, err)
	}

	info.RuntimePolicy.MLPolicy = json.RawMessage(`{"numNodes":"many"}`)
	if _, err := info.MLPolicy(); err == nil || !strings.Contains(err.Error(), "Info.runtimePolicy.mlPolicy") {
		t.Errorf("MLPolicy of a bad replacement: %v, want an error naming Info.runtimePolicy.mlPolicy", err)
	}
	if _, err := info.PolicyKeys(); err == nil {
		t.Error("PolicyKeys of a bad mlPolicy succeeded")
	}
	info.RuntimePolicy = framework.RuntimePolicy{}
	if ml, err := info.MLPolicy(); ml != nil || err != nil {
		t.Errorf("MLPolicy without a policy = %v, %v; want nil, nil", ml, err)
	}
}

func TestInfoTemplateSpec(t *testing.T) {
	rt := frameworktest.Runtime(t, templateOf(replicatedJob("node", "trainer", "node")))
	info := frameworktest.NewInfo(t, testJob(), rt)

	first, err := info.TemplateSpec()
	if err != nil {
		t.Fatalf("TemplateSpec: %v", err)
	}
	if diff := cmp.Diff(&rt.Template, first); diff != "" {
		t.Errorf("TemplateSpec of NewInfo (-runtime's +got):\n%s", diff)
	}
	first.Spec.ReplicatedJobs[0].Name = "changed"
	first.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image = "changed"
	second, err := info.TemplateSpec()
	if err != nil {
		t.Fatalf("TemplateSpec again: %v", err)
	}
	if diff := cmp.Diff(&rt.Template, second); diff != "" {
		t.Errorf("TemplateSpec after a caller changed its copy (-runtime's +got):\n%s", diff)
	}
	// The PodSets share nothing with the template either.
	if got := info.PodSets[0].Containers[0].Image; got == "changed" {
		t.Errorf("a change of TemplateSpec's result reached the PodSets: image %q", got)
	}

	// A plugin replaces the template: it is decoded anew.
	replacement := rt.Template.DeepCopy()
	replacement.Spec.ReplicatedJobs[0].Name = "worker"
	raw, err := json.Marshal(replacement)
	if err != nil {
		t.Fatal(err)
	}
	info.Template = raw
	got, err := info.TemplateSpec()
	if err != nil {
		t.Fatalf("TemplateSpec after the replacement: %v", err)
	}
	if diff := cmp.Diff(replacement, got); diff != "" {
		t.Errorf("TemplateSpec after the replacement (-want +got):\n%s", diff)
	}
	info.Template = json.RawMessage(`{"spec":{"replicatedJobs":"none"}}`)
	if _, err := info.TemplateSpec(); err == nil || !strings.Contains(err.Error(), "Info.template") {
		t.Errorf("TemplateSpec of a bad template: %v, want an error naming Info.template", err)
	}
}

// A copy of Info decodes its own bytes: changes to either side stay apart.
func TestInfoCopyDecodesItsOwn(t *testing.T) {
	info := infoWith(`{"numNodes":2}`, "")
	if _, err := info.MLPolicy(); err != nil {
		t.Fatalf("MLPolicy: %v", err)
	}
	cp, err := info.Copy()
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	cp.RuntimePolicy.MLPolicy = json.RawMessage(`{"numNodes":5}`)
	orig, err := info.MLPolicy()
	if err != nil {
		t.Fatal(err)
	}
	copied, err := cp.MLPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if a, b := ptr.Deref(orig.NumNodes, 0), ptr.Deref(copied.NumNodes, 0); a != 2 || b != 5 {
		t.Errorf("numNodes of the original and the copy = %d, %d; want 2, 5", a, b)
	}
}
