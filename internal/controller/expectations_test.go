package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin/jobset"
	"github.com/trainforge/trainforge/builtin/plainml"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// The creation of a JobSet reconciles its TrainJob, unless a reconcile
// created it as the event says (same resourceVersion) and read the
// TrainJob's status from it. An event that comes before the create's
// answer is held back, and the answer decides: when it was not of the
// object the reconcile read, the reconcile asks to run again.
func TestOwnCreationsAreNotReconciledAgain(t *testing.T) {
	gvk := jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet")
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	type step struct {
		event        string // the creation event's resourceVersion
		answer       string // the create's answer's
		whole        bool
		eventFirst   bool
		wantEnqueued bool
		wantAgain    bool
	}
	for name, tc := range map[string]step{
		"answer, then the event of the object read":     {answer: "10", whole: true, event: "10"},
		"answer, then the event of a later version":     {answer: "10", whole: true, event: "11", wantEnqueued: true},
		"answer without the status, then the event":     {answer: "10", event: "10", wantEnqueued: true},
		"the event held back, then the answer":          {eventFirst: true, event: "10", answer: "10", whole: true},
		"the event held back, then a different answer":  {eventFirst: true, event: "10", answer: "12", whole: true, wantAgain: true},
		"the event held back, then an answer not whole": {eventFirst: true, event: "10", answer: "10", wantAgain: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := &expectations{}
			fake := &recordingHandler{}
			h := expectCreations{EventHandler: fake, gvk: gvk, expectations: e}
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			e.creating(key("js"), gvk, "js")
			if tc.eventFirst {
				h.Create(context.Background(), event.CreateEvent{Object: ownedJobSet("js", tc.event)}, q)
				e.created(key("js"), gvk, "js", tc.answer, tc.whole)
			} else {
				e.created(key("js"), gvk, "js", tc.answer, tc.whole)
				h.Create(context.Background(), event.CreateEvent{Object: ownedJobSet("js", tc.event)}, q)
			}
			if enqueued := len(fake.created) > 0; enqueued != tc.wantEnqueued {
				t.Errorf("the event reconciled: %v, want %v", enqueued, tc.wantEnqueued)
			}
			// A pass that skipped no failure runs again only for news.
			if again := e.requeue(key("js"), false); again != tc.wantAgain {
				t.Errorf("reconcile again: %v, want %v", again, tc.wantAgain)
			}
			if n := e.len(); n != 0 {
				t.Errorf("still expected: %v", e.jobs)
			}
		})
	}

	t.Run("others", func(t *testing.T) {
		e := &expectations{}
		fake := &recordingHandler{}
		h := expectCreations{EventHandler: fake, gvk: gvk, expectations: e}
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		ctx := context.Background()
		// Someone else's JobSet, and a second creation event (a relist).
		h.Create(ctx, event.CreateEvent{Object: ownedJobSet("theirs", "30")}, q)
		e.creating(key("mine"), gvk, "mine")
		e.created(key("mine"), gvk, "mine", "10", true)
		e.endPass(key("mine"))
		h.Create(ctx, event.CreateEvent{Object: ownedJobSet("mine", "10")}, q)
		h.Create(ctx, event.CreateEvent{Object: ownedJobSet("mine", "10")}, q)
		if want := []string{"theirs", "mine"}; !slices.Equal(fake.created, want) {
			t.Errorf("reconciled for the creation of %v, want %v", fake.created, want)
		}
		// A failed create, and a deleted object, are forgotten.
		e.creating(key("failed"), gvk, "failed")
		e.createFailed(key("failed"), gvk, "failed")
		e.creating(key("deleted"), gvk, "deleted")
		h.Delete(ctx, event.DeleteEvent{Object: ownedJobSet("deleted", "41")}, q)
		if e.len() != 0 {
			t.Errorf("still expected: %v", e.jobs)
		}
		// A creation whose event never comes is dropped once old.
		e.creating(key("lost"), gvk, "lost")
		e.jobs[key("lost")].creations[createdObject{gvk, "lost"}].at = time.Now().Add(-2 * creationTTL)
		e.pruned = time.Time{}
		e.creating(key("next"), gvk, "next")
		if _, ok := e.jobs[key("lost")]; ok || e.len() != 1 {
			t.Errorf("an old creation is still expected: %v", e.jobs)
		}
		// The creation of an object no TrainJob controls is not expected.
		e.creating(key("x"), gvk, "x")
		orphan := ownedJobSet("x", "5")
		orphan.OwnerReferences = nil
		h.Create(ctx, event.CreateEvent{Object: orphan}, q)
		if got := fake.created[len(fake.created)-1]; got != "x" {
			t.Errorf("the creation of an object no TrainJob controls was not passed on; last passed %s", got)
		}
	})

	// The findings of a pass are its own: one that skipped a failure
	// and created an object whose event is dropped runs again, and a
	// pass that failed before acting on its findings leaves none to the
	// next.
	t.Run("findings", func(t *testing.T) {
		e := &expectations{}
		e.creating(key("js"), gvk, "js")
		e.created(key("js"), gvk, "js", "10", true)
		if !e.requeue(key("js"), true) {
			t.Error("a pass that skipped a failure and created an object whose event is dropped does not run again")
		}
		e.creating(key("js2"), gvk, "js2")
		e.created(key("js2"), gvk, "js2", "10", true)
		job := trainJobOf("js2", "rt")
		job.Namespace = "ns"
		e.startPass(job)
		if e.requeue(key("js2"), true) {
			t.Error("the findings of a failed pass made the next one run again")
		}
	})
}

func ownedJobSet(name, rv string) *jobsetv1alpha2.JobSet {
	return &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: name, ResourceVersion: rv,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: name, Controller: ptr.To(true)}},
	}}
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

// A new TrainJob whose reconcile skipped a plugin's failure is reconciled
// again, as the creation of its JobSet used to make it: that is when the
// plugin is tried again. Once its objects exist, a skipped failure asks
// for nothing more (the next event does), and a reconcile with none asks
// for nothing.
func TestANewTrainJobWithAFailureIgnoredIsReconciledAgain(t *testing.T) {
	for _, fail := range []bool{true, false} {
		rt := runtimeOf("plain", nil)
		rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "trainer"}}
		f := newFixtureWith(t, nil, rt, trainJobOf("job", "plain"))
		fw, err := frameworkruntime.New(context.Background(), framework.Registry{}, []frameworkruntime.PluginSpec{
			{Name: "PlainML", Plugin: plainml.New()}, {Name: "JobSet", Plugin: jobset.New()},
			{Name: "FlakyStatus", Plugin: &flakyStatus{fail: fail}, FailurePolicy: frameworkruntime.FailurePolicyIgnore},
		})
		if err != nil {
			t.Fatal(err)
		}
		f.r.Framework = fw
		req := ctrl.Request{NamespacedName: jobKey}
		first, err := f.r.Reconcile(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if again := first.RequeueAfter > 0; again != fail {
			t.Errorf("failure skipped %v: the first reconcile asks to run again: %v, want %v", fail, again, fail)
		}
		second, err := f.r.Reconcile(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if second.RequeueAfter > 0 {
			t.Errorf("failure skipped %v: the reconcile of a TrainJob whose objects exist asks to run again after %v", fail, second.RequeueAfter)
		}
	}
}
