package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The creation of a JobSet reconciles its TrainJob, unless the
// controller created it as the event says (same resourceVersion) and read
// the TrainJob's status from it; a later version, or a JobSet created by
// someone else, reconciles as before, and the skip is used once.
func TestOwnCreationsAreNotReconciledAgain(t *testing.T) {
	gvk := jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet")
	created := &ownCreations{}
	fake := &recordingHandler{}
	h := skipOwnCreations{EventHandler: fake, gvk: gvk, created: created}
	jobSet := func(name, rv string) *jobsetv1alpha2.JobSet {
		return &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name, ResourceVersion: rv,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: name, Controller: ptr.To(true)}},
		}}
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	ctx := context.Background()

	created.remember(gvk, types.NamespacedName{Namespace: "ns", Name: "mine"}, "10")
	created.remember(gvk, types.NamespacedName{Namespace: "ns", Name: "changed"}, "20")
	h.Create(ctx, event.CreateEvent{Object: jobSet("mine", "10")}, q)
	h.Create(ctx, event.CreateEvent{Object: jobSet("changed", "21")}, q)
	h.Create(ctx, event.CreateEvent{Object: jobSet("theirs", "30")}, q)
	// A second creation event of the same object (a relist) reconciles.
	h.Create(ctx, event.CreateEvent{Object: jobSet("mine", "10")}, q)
	if want := []string{"changed", "theirs", "mine"}; !slices.Equal(fake.created, want) {
		t.Errorf("reconciled for the creation of %v, want %v", fake.created, want)
	}
	if len(created.m) != 0 {
		t.Errorf("still remembered: %v", created.m)
	}

	// A creation whose event came before the create's answer was read
	// is remembered after it, and dropped once it is old.
	created.remember(gvk, types.NamespacedName{Namespace: "ns", Name: "raced"}, "50")
	created.m[ownCreation{gvk, types.NamespacedName{Namespace: "ns", Name: "raced"}}] = createdAt{rv: "50", at: time.Now().Add(-2 * ownCreationsTTL)}
	created.pruned = time.Time{}
	created.remember(gvk, types.NamespacedName{Namespace: "ns", Name: "later"}, "60")
	if _, ok := created.m[ownCreation{gvk, types.NamespacedName{Namespace: "ns", Name: "raced"}}]; ok || len(created.m) != 1 {
		t.Errorf("an old creation is still remembered: %v", created.m)
	}
	created.seen(gvk, types.NamespacedName{Namespace: "ns", Name: "later"}, "60")

	created.remember(gvk, types.NamespacedName{Namespace: "ns", Name: "deleted"}, "40")
	h.Delete(ctx, event.DeleteEvent{Object: jobSet("deleted", "41")}, q)
	if len(created.m) != 0 {
		t.Errorf("a deleted object is still remembered: %v", created.m)
	}
}

// recordingHandler records the names of the objects whose creation it was
// given.
type recordingHandler struct {
	handler.Funcs
	created []string
}

func (r *recordingHandler) Create(_ context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	r.created = append(r.created, e.Object.GetName())
}

func (r *recordingHandler) Delete(context.Context, event.DeleteEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}
