package fieldpath_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainforge/trainforge/framework/fieldpath"
)

func mustParse(t *testing.T, texts ...string) []fieldpath.Path {
	t.Helper()
	out, err := fieldpath.ParseAll(texts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func jobSet() *jobsetv1alpha2.JobSet {
	pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "pytorch"}}}}
	js := &jobsetv1alpha2.JobSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "job", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "trainforge"}}},
		Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{
			{Name: "launcher", Replicas: 1},
			{Name: "node", Replicas: 1},
		}},
		Status: jobsetv1alpha2.JobSetStatus{Restarts: 2},
	}
	for i := range js.Spec.ReplicatedJobs {
		js.Spec.ReplicatedJobs[i].Template.Spec.Template = *pod.DeepCopy()
		js.Spec.ReplicatedJobs[i].Template.Spec.Parallelism = new(int32(4))
	}
	return js
}

// The same paths clear the same fields of a typed object and of its
// unstructured form, and nothing else.
func TestClearTypedAndUnstructuredAlike(t *testing.T) {
	paths := mustParse(t, "metadata.managedFields", "spec.replicatedJobs[].template.spec.template")

	want := jobSet()
	want.ManagedFields = nil
	for i := range want.Spec.ReplicatedJobs {
		want.Spec.ReplicatedJobs[i].Template.Spec.Template = corev1.PodTemplateSpec{}
	}

	typed := jobSet()
	for _, p := range paths {
		fieldpath.Clear(typed, p)
	}
	if d := cmp.Diff(want, typed); d != "" {
		t.Errorf("typed JobSet after Clear (-want +got):\n%s", d)
	}

	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(jobSet())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		fieldpath.Clear(content, p)
	}
	got := &jobsetv1alpha2.JobSet{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("unstructured JobSet after Clear (-want +got):\n%s", d)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(content, "metadata", "managedFields"); found {
		t.Error("unstructured: metadata.managedFields is still there, want it removed")
	}
}

// A path that leads nowhere clears nothing and does not panic: a field the
// type lacks, a nil pointer on the way, a scalar where a list is named.
func TestClearPathsThatLeadNowhere(t *testing.T) {
	for _, text := range []string{"spec.noSuchField", "spec.replicatedJobs[].template.spec.podFailurePolicy.rules", "status.restarts[].x", "metadata.name[].x", "spec.suspend.value"} {
		p := mustParse(t, text)[0]
		typed := jobSet()
		fieldpath.Clear(typed, p)
		if d := cmp.Diff(jobSet(), typed); d != "" {
			t.Errorf("%s: typed object changed (-want +got):\n%s", text, d)
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(jobSet())
		if err != nil {
			t.Fatal(err)
		}
		before, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(jobSet())
		fieldpath.Clear(content, p)
		if d := cmp.Diff(before, content); d != "" {
			t.Errorf("%s: unstructured object changed (-want +got):\n%s", text, d)
		}
	}
	fieldpath.Clear(nil, mustParse(t, "spec")[0])
	fieldpath.Clear((*jobsetv1alpha2.JobSet)(nil), mustParse(t, "spec")[0])
}

func TestParseRefusesWhatIsNotAPath(t *testing.T) {
	for text, want := range map[string]string{
		"":              "field path is empty",
		"spec..x":       `part 2 ("")`,
		"spec.a[0].b":   `part 2 ("a[0]")`,
		"[]":            `part 1 ("[]")`,
		"spec.jobs[][]": `part 2 ("jobs[][]")`,
	} {
		_, err := fieldpath.Parse(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", text, err, want)
		}
	}
}

func BenchmarkClearJobSetPodTemplates(b *testing.B) {
	p := mustParse(&testing.T{}, "spec.replicatedJobs[].template.spec.template")[0]
	objs := make([]*jobsetv1alpha2.JobSet, b.N)
	for i := range objs {
		objs[i] = jobSet()
	}
	b.ResetTimer()
	for i := range b.N {
		fieldpath.Clear(objs[i], p)
	}
}
