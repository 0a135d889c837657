package operator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// cachedJobSet is a JobSet as the API server returns it: managedFields,
// the controller's annotation and finalizer, a failure policy, a pod
// template and a status.
func cachedJobSet() *jobsetv1alpha2.JobSet {
	js := &jobsetv1alpha2.JobSet{
		TypeMeta: metav1.TypeMeta{APIVersion: jobsetv1alpha2.SchemeGroupVersion.String(), Kind: "JobSet"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "job",
			Annotations:     map[string]string{"trainforge.dev/desired-hash": "0123"},
			Finalizers:      []string{"trainforge.dev/trainjob-status"},
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
	return js
}

// withoutPodTemplates is what the cache should keep of cachedJobSet.
func withoutPodTemplates() *jobsetv1alpha2.JobSet {
	js := cachedJobSet()
	js.ManagedFields = nil
	js.Spec.ReplicatedJobs[0].Template.Spec.Template = corev1.PodTemplateSpec{}
	return js
}

func TestStripJobSetPodTemplates(t *testing.T) {
	got, err := StripJobSetPodTemplates(cachedJobSet())
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
	want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(withoutPodTemplates())
	if err != nil {
		t.Fatal(err)
	}
	// An empty PodTemplateSpec encodes as {"metadata":{},"spec":{"containers":null}};
	// the unstructured copy drops the field instead.
	unstructured.RemoveNestedField(want, "spec", "replicatedJobs")
	rjs, _, _ := unstructured.NestedSlice(raw, "spec", "replicatedJobs")
	for _, rj := range rjs {
		unstructured.RemoveNestedField(rj.(map[string]any), "template", "spec", "template")
	}
	_ = unstructured.SetNestedSlice(want, rjs, "spec", "replicatedJobs")
	delete(want["metadata"].(map[string]any), "managedFields")
	got, err = StripJobSetPodTemplates(&unstructured.Unstructured{Object: raw})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.(*unstructured.Unstructured).Object); diff != "" {
		t.Errorf("unstructured JobSet (-want +got):\n%s", diff)
	}

	// Another kind keeps its templates (only managedFields go).
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "managedFields": []any{map[string]any{"manager": "m"}}},
		"spec":     map[string]any{"replicatedJobs": []any{map[string]any{"template": map[string]any{"spec": map[string]any{"template": "kept"}}}}},
	}}
	got, err = StripJobSetPodTemplates(cm)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedSlice(got.(*unstructured.Unstructured).Object, "spec", "replicatedJobs"); len(v) != 1 || v[0].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["template"] != "kept" {
		t.Errorf("another kind's fields changed: %v", got)
	}
	if len(got.(*unstructured.Unstructured).GetManagedFields()) != 0 {
		t.Errorf("another kind kept its managedFields")
	}
}
