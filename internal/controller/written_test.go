package controller

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// reportingBuilder is fakeBuilder that also reports, as a condition,
// whether it saw its JobSet among the TrainJob's objects.
type reportingBuilder struct{ fakeBuilder }

func (b *reportingBuilder) Status(_ context.Context, _ *framework.Info, job *trainer.TrainJob, owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
	for _, o := range owned {
		if o.GetName() == job.Name && o.GroupVersionKind() == jobSetGVK {
			return &framework.StatusReport{Conditions: []metav1.Condition{{Type: "JobSetSeen", Status: metav1.ConditionTrue, Reason: "Seen", Message: "seen"}}}, nil
		}
	}
	return nil, nil
}

// The cache lags behind the apply that created the JobSet: the first
// status write must still be reported from it, or a second write follows
// as soon as the cache catches up (two status updates per TrainJob where
// one does).
func TestFirstStatusSeesTheObjectsJustApplied(t *testing.T) {
	f := newFixtureOf(t, &reportingBuilder{fakeBuilder{image: "v1"}}, runtimeOf("rt", nil), trainJobOf("job", "rt"))
	lagging := interceptor.NewClient(f.client.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*jobsetv1alpha2.JobSetList); ok {
				return nil // not in the cache yet
			}
			return c.List(ctx, list, opts...)
		},
	})
	f.r.Client = lagging
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(f.job(t, "job").Status.Conditions, "JobSetSeen") {
		t.Errorf("the first status write did not see the JobSet the reconcile applied; conditions: %+v", f.job(t, "job").Status.Conditions)
	}
}
