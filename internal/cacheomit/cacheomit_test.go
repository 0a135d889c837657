package cacheomit_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainforge/trainforge/internal/cacheomit"
)

var jobSetKind = jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet")

// cachedJobSet is a JobSet as an informer delivers it typed: no TypeMeta,
// managedFields, a failure policy, a pod template and a status.
func cachedJobSet() *jobsetv1alpha2.JobSet {
	return &jobsetv1alpha2.JobSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "job",
			Annotations:     map[string]string{"trainforge.dev/desired-hash": "0123"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "job", UID: "uid", Controller: ptr.To(true)}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "trainforge-jobset", Operation: metav1.ManagedFieldsOperationApply}},
		},
		Spec: jobsetv1alpha2.JobSetSpec{
			Suspend:       ptr.To(false),
			FailurePolicy: &jobsetv1alpha2.FailurePolicy{MaxRestarts: 3},
			ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{{
				Name: "node", Replicas: 1,
				Template: batchv1.JobTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
					Spec: batchv1.JobSpec{
						Parallelism: ptr.To[int32](4),
						Template: corev1.PodTemplateSpec{
							ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
							Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "pytorch", Command: []string{"torchrun"}}}},
						},
					},
				},
			}},
		},
		Status: jobsetv1alpha2.JobSetStatus{Restarts: 1, ReplicatedJobsStatus: []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Ready: 1}}},
	}
}

// withoutPodTemplates is what the cache keeps of cachedJobSet when the
// plugin omits the pod templates.
func withoutPodTemplates() *jobsetv1alpha2.JobSet {
	js := cachedJobSet()
	js.ManagedFields = nil
	js.Spec.ReplicatedJobs[0].Template.Spec.Template = corev1.PodTemplateSpec{}
	return js
}

func newTable(t *testing.T) *cacheomit.Table {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, jobsetv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	table := cacheomit.New(scheme)
	if err := table.Set(jobSetKind, []string{"spec.replicatedJobs[].template.spec.template"}); err != nil {
		t.Fatal(err)
	}
	return table
}

// A kind's omitted fields go from its typed and unstructured objects, with
// managedFields; nothing else changes.
func TestTransformOmitsTheDeclaredFields(t *testing.T) {
	table := newTable(t)
	got, err := table.Transform(cachedJobSet())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(withoutPodTemplates(), got); diff != "" {
		t.Errorf("typed JobSet (-want +got):\n%s", diff)
	}

	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cachedJobSet())
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetGroupVersionKind(jobSetKind)
	got, err = table.Transform(u)
	if err != nil {
		t.Fatal(err)
	}
	back := &jobsetv1alpha2.JobSet{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.(*unstructured.Unstructured).Object, back); err != nil {
		t.Fatal(err)
	}
	back.TypeMeta = metav1.TypeMeta{}
	if diff := cmp.Diff(withoutPodTemplates(), back); diff != "" {
		t.Errorf("unstructured JobSet (-want +got):\n%s", diff)
	}
}

// A kind no plugin omits anything of keeps every field but managedFields,
// even where its fields are named as an omitted kind's are.
func TestTransformKeepsOtherKinds(t *testing.T) {
	table := newTable(t)
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "managedFields": []any{map[string]any{"manager": "m"}}},
		"spec":     map[string]any{"replicatedJobs": []any{map[string]any{"template": map[string]any{"spec": map[string]any{"template": "kept"}}}}},
	}}
	got, err := table.Transform(cm)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedSlice(got.(*unstructured.Unstructured).Object, "spec", "replicatedJobs"); len(v) != 1 || v[0].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["template"] != "kept" {
		t.Errorf("another kind's fields changed: %v", got)
	}
	if len(got.(*unstructured.Unstructured).GetManagedFields()) != 0 {
		t.Errorf("another kind kept its managedFields")
	}

	// Once no plugin omits them, a JobSet keeps its templates.
	if err := table.Set(jobSetKind, nil); err != nil {
		t.Fatal(err)
	}
	kept, err := table.Transform(cachedJobSet())
	if err != nil {
		t.Fatal(err)
	}
	want := cachedJobSet()
	want.ManagedFields = nil
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Errorf("JobSet with nothing omitted (-want +got):\n%s", diff)
	}
}

func TestSetRefusesAMalformedPath(t *testing.T) {
	err := newTable(t).Set(jobSetKind, []string{"spec..template"})
	if err == nil {
		t.Fatal("Set accepted spec..template")
	}
	if want := `omitting fields of jobset.x-k8s.io/v1alpha2, Kind=JobSet from the cache: field path "spec..template": part 2 ("") is not a field name`; err.Error()[:len(want)] != want {
		t.Errorf("error = %q, want it to start with %q", err, want)
	}
}
