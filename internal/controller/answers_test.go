package controller

import (
	"context"
	"encoding/json"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The status write replaces the status as an update would: a field the
// new status leaves out is gone, and a write from a stale copy is refused
// with a conflict, so that a reconcile that read an old TrainJob cannot
// overwrite a newer status (its runtime snapshot among it).
func TestReplaceStatusIsAnUpdateOfTheStatus(t *testing.T) {
	f := newFixtureWith(t, nil, trainJobOf("job", "plain"))
	ctx := context.Background()
	job := f.job(t, "job")
	job.Status.JobsStatus = []trainer.JobStatus{{Name: "node"}}
	setCondition(job, trainer.TrainJobCreated, metav1.ConditionTrue, trainer.TrainJobJobsCreatedReason, "created")
	if err := f.r.replaceStatus(ctx, job); err != nil {
		t.Fatal(err)
	}
	stored := f.job(t, "job")
	if stored.ResourceVersion != job.ResourceVersion {
		t.Errorf("resourceVersion %q after the write, the server holds %q", job.ResourceVersion, stored.ResourceVersion)
	}
	if len(stored.Status.JobsStatus) != 1 || len(stored.Status.Conditions) != 1 {
		t.Fatalf("status not written: %+v", stored.Status)
	}

	stale := stored.DeepCopy()
	job.Status.JobsStatus = nil
	if err := f.r.replaceStatus(ctx, job); err != nil {
		t.Fatal(err)
	}
	if got := f.job(t, "job").Status.JobsStatus; got != nil {
		t.Errorf("jobsStatus %+v kept, want it removed as an update would", got)
	}

	stale.Status.Conditions = nil
	if err := f.r.replaceStatus(ctx, stale); !apierrors.IsConflict(err) {
		t.Errorf("a write from a stale copy: %v, want a conflict", err)
	}
	if got := f.job(t, "job").Status.Conditions; len(got) != 1 {
		t.Errorf("conditions %+v after a refused write, want the newer status kept", got)
	}
}

// An object created by the apply is whole with the answer's metadata; one
// that existed with a status written (the cache lagged) is not, since the
// answer leaves its status out. The API server's answers are played by an
// interceptor: the fake client does not answer a PartialObjectMetadata
// patch as the API server does.
func TestCreateByApply(t *testing.T) {
	for _, tc := range []struct {
		name      string
		managers  []metav1.ManagedFieldsEntry
		wantWhole bool
	}{
		{name: "created", managers: []metav1.ManagedFieldsEntry{{Manager: "trainforge-jobset", Operation: metav1.ManagedFieldsOperationApply}}, wantWhole: true},
		{name: "existed with a status", managers: []metav1.ManagedFieldsEntry{
			{Manager: "trainforge-jobset", Operation: metav1.ManagedFieldsOperationApply},
			{Manager: "jobset-controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureWith(t, nil)
			var sent map[string]any
			f.r.Client = interceptor.NewClient(f.client.(client.WithWatch), interceptor.Funcs{
				Patch: func(_ context.Context, _ client.WithWatch, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
					answer, ok := obj.(*metav1.PartialObjectMetadata)
					if !ok || patch.Type() != types.ApplyPatchType {
						t.Fatalf("patch of a %T with %s, want an apply answered with metadata only", obj, patch.Type())
					}
					data, _ := patch.Data(obj)
					if err := json.Unmarshal(data, &sent); err != nil {
						t.Fatal(err)
					}
					answer.UID, answer.ResourceVersion = "uid-1", "7"
					answer.Labels = map[string]string{"app": "js", "added-by": "a webhook"}
					answer.ManagedFields = tc.managers
					return nil
				},
			})
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet"))
			obj.SetNamespace("ns")
			obj.SetName("js")
			obj.SetLabels(map[string]string{"app": "js"})
			_ = unstructured.SetNestedField(obj.Object, true, "spec", "suspend")

			whole, err := f.r.createByApply(context.Background(), &pass{job: types.NamespacedName{Namespace: "ns", Name: "js"}}, obj, "trainforge-jobset")
			if err != nil || whole != tc.wantWhole {
				t.Fatalf("createByApply = %v, %v; want %v, nil", whole, err, tc.wantWhole)
			}
			if suspend, _, _ := unstructured.NestedBool(sent, "spec", "suspend"); !suspend {
				t.Errorf("the apply sent %v, not the built object", sent)
			}
			x := f.r.expectations.jobs[types.NamespacedName{Namespace: "ns", Name: "js"}]
			remembered := x != nil && x.creations[createdObject{obj.GroupVersionKind(), "js"}] != nil
			if remembered != whole {
				t.Errorf("its creation event skipped: %v, want %v (only an object the status is read from)", remembered, whole)
			}
			if !whole {
				return
			}
			if obj.GetUID() != "uid-1" || obj.GetResourceVersion() != "7" || obj.GetLabels()["added-by"] != "a webhook" {
				t.Errorf("metadata %v, want the answer's", obj.Object["metadata"])
			}
			if suspend, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); !suspend {
				t.Error("the built spec was lost")
			}
		})
	}
}
