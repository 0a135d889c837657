package controller

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

func jobSetOf(parallelism int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
		"metadata": map[string]any{"name": "llm", "resourceVersion": "7"},
		"spec": map[string]any{"replicatedJobs": []any{
			map[string]any{"name": "node", "template": map[string]any{"spec": map[string]any{
				"parallelism": parallelism, "completions": parallelism,
				"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "node", "image": "a"}}}},
			}}},
		}},
	}}
	return u
}

// liveNode lists the size of the JobSet's node Job as its live fields.
var liveNode = &framework.LiveFields{Paths: []string{"/spec/replicatedJobs/0/template/spec/parallelism", "/spec/replicatedJobs/0/template/spec/completions"}}

func built(obj *unstructured.Unstructured, live *framework.LiveFields) frameworkruntime.BuiltObject {
	return frameworkruntime.BuiltObject{Plugin: "JobSet", Object: obj, Live: live}
}

func TestLiveChanges(t *testing.T) {
	ops, changes, err := liveChanges(jobSetOf(2), built(jobSetOf(4), liveNode))
	if err != nil {
		t.Fatal(err)
	}
	want := []jsonPatchOp{
		{Op: "add", Path: "/spec/replicatedJobs/0/template/spec/parallelism", Value: int64(4)},
		{Op: "add", Path: "/spec/replicatedJobs/0/template/spec/completions", Value: int64(4)},
	}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("ops (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"parallelism 2 → 4", "completions 2 → 4"}, changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

func TestLiveChangesNone(t *testing.T) {
	for name, desired := range map[string]frameworkruntime.BuiltObject{
		"same size":      built(jobSetOf(2), liveNode),
		"no live fields": built(jobSetOf(4), nil),
	} {
		ops, _, err := liveChanges(jobSetOf(2), desired)
		if err != nil || ops != nil {
			t.Errorf("%s: ops %v, err %v; want none", name, ops, err)
		}
	}
}

// The framework checks live fields at Build; a BuiltObject made another
// way with a bad one fails naming the plugin and the field.
func TestLiveChangesBadPath(t *testing.T) {
	for name, path := range map[string]string{
		"not a pointer": "spec/replicatedJobs",
		"missing field": "/spec/replicatedJobs/3/template/spec/parallelism",
	} {
		_, _, err := liveChanges(jobSetOf(2), built(jobSetOf(4), &framework.LiveFields{Paths: []string{path}}))
		if err == nil || !strings.Contains(err.Error(), "plugin JobSet") || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err %v, want one naming the plugin and the field", name, err)
		}
	}
}

// sizedBuilder builds a running JobSet whose Job's parallelism and
// completions, its size, are live fields.
type sizedBuilder struct{ size int64 }

func (*sizedBuilder) Describe() framework.Description {
	return framework.Description{Name: "FakeBuilder", MLPolicyKeys: []string{framework.NoPolicyKey}, Builds: []schema.GroupVersionKind{jobSetGVK}}
}

func (b *sizedBuilder) Build(_ context.Context, _ *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	u := jobSetOf(b.size)
	u.SetName(job.Name)
	u.SetResourceVersion("")
	_ = unstructured.SetNestedField(u.Object, false, "spec", "suspend")
	return []framework.Object{{Unstructured: u, Live: liveNode}}, nil
}

// A running JobSet resized away from the size it was applied at, then
// back to it: the desired state's hash is again the one it was applied
// with, and the size must still be written.
func TestAResizeBackToTheAppliedSizeIsWritten(t *testing.T) {
	builder := &sizedBuilder{size: 2}
	f := newFixtureOf(t, builder, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	for _, size := range []int64{2, 3, 2} {
		builder.size = size
		f.relabel(t, "job", strconv.FormatInt(size, 10))
		if err := f.reconcile(t, "job"); err != nil {
			t.Fatal(err)
		}
		rj := f.jobSet(t).Spec.ReplicatedJobs[0].Template.Spec
		if got := []int32{ptr.Deref(rj.Parallelism, 0), ptr.Deref(rj.Completions, 0)}; !cmp.Equal(got, []int32{int32(size), int32(size)}) {
			t.Fatalf("size %d: parallelism, completions = %v", size, got)
		}
	}
}
