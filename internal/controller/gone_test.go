package controller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin/jobset"
	"github.com/trainforge/trainforge/builtin/plainml"
	"github.com/trainforge/trainforge/framework"
)

// A JobSet without StatusFinalizer (built before the controller put it on,
// and running since) deleted the moment it finished
// (ttlSecondsAfterFinished 0), so that no reconcile saw it finished: the
// delete event still carries it, and the job is finished from it instead
// of being built again, and counted in the lifecycle metrics. One deleted
// while it ran is built again.
func TestAJobSetDeletedAsItFinishesIsNotBuiltAgain(t *testing.T) {
	for _, tc := range []struct {
		name        string
		condition   *metav1.Condition
		wantState   string
		wantRebuilt bool
	}{
		{"completed", &metav1.Condition{Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "jobset completed successfully"},
			trainer.TrainJobComplete, false},
		{"failed", &metav1.Condition{Type: string(jobsetv1alpha2.JobSetFailed), Status: metav1.ConditionTrue, Reason: "FailedJobs", Message: "jobset failed"},
			trainer.TrainJobFailed, false},
		{"running", nil, trainer.TrainJobCreated, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := runtimeOf("plain", nil)
			rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "trainer"}}
			f := newFixtureWith(t, []framework.Plugin{plainml.New(), jobset.New()}, rt, trainJobOf("job", "plain"))
			ctx := context.Background()
			if err := f.reconcile(t, "job"); err != nil {
				t.Fatal(err)
			}
			js := &jobsetv1alpha2.JobSet{}
			key := client.ObjectKey{Namespace: "ns", Name: "job"}
			if err := f.client.Get(ctx, key, js); err != nil {
				t.Fatal(err)
			}
			controllerutil.RemoveFinalizer(js, StatusFinalizer)
			if err := f.client.Update(ctx, js); err != nil {
				t.Fatal(err)
			}
			if tc.condition != nil {
				js.Status.Conditions = []metav1.Condition{*tc.condition}
			}
			counted := finishCounts()
			// The JobSet goes; the controller sees only the delete event.
			if err := f.client.Delete(ctx, js); err != nil {
				t.Fatal(err)
			}
			h := rememberDeleted{EventHandler: &handler.Funcs{}, gvk: jobset.GVK, gone: &f.r.gone}
			h.Delete(ctx, event.DeleteEvent{Object: js}, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()))

			if err := f.reconcile(t, "job"); err != nil {
				t.Fatal(err)
			}
			conds := f.job(t, "job").Status.Conditions
			if got := conds[len(conds)-1].Type; got != tc.wantState {
				t.Errorf("State column reads %s, want %s; conditions %v", got, tc.wantState, summary(conds))
			}
			err := f.client.Get(ctx, key, &jobsetv1alpha2.JobSet{})
			if rebuilt := err == nil; rebuilt != tc.wantRebuilt {
				t.Errorf("JobSet built again: %v, want %v (get: %v)", rebuilt, tc.wantRebuilt, err)
			}
			if got, want := finishCounts()-counted, map[bool]float64{true: 0, false: 1}[tc.wantRebuilt]; got != want {
				t.Errorf("completions and failures counted %v, want %v", got, want)
			}
			if _, ok := f.r.gone.m[types.NamespacedName{Namespace: "ns", Name: "job"}]; ok {
				t.Error("the deleted JobSet is still remembered after the reconcile")
			}
		})
	}
}
