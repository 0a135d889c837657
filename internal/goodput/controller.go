package goodput

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/internal/metricsreg"
	"github.com/trainforge/trainforge/internal/statusapply"
)

// FieldManager is the field manager of status.goodput: the account is
// applied alone, so that it never races the conditions the TrainJob
// controller writes or the progress the status endpoint writes.
const FieldManager = "trainforge-goodput"

// DefaultRefresh is how long the figures of a lasting state may go
// without being brought up to date in the status.
const DefaultRefresh = time.Minute

// Controller keeps status.goodput of every TrainJob. It runs on the
// leader, from the cache, and is woken by every change of a TrainJob: the
// records the account reads are all in the TrainJob.
type Controller struct {
	Client client.Client
	// Clock is the real one when nil.
	Clock clock.PassiveClock
	// Refresh is DefaultRefresh when zero.
	Refresh time.Duration
}

// SetupWithManager adds the controller, and the goodput metrics of the
// manager's cache, to the manager.
func (c *Controller) SetupWithManager(mgr ctrl.Manager, reg prometheus.Registerer) error {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Refresh == 0 {
		c.Refresh = DefaultRefresh
	}
	if err := metricsreg.Replace(reg, &collector{reader: mgr.GetCache(), clock: c.Clock}); err != nil {
		return fmt.Errorf("registering the goodput metrics: %w", err)
	}
	// A TrainJob whose code has not reported progress has no account: its
	// events are not queued at all.
	reported := predicate.NewPredicateFuncs(func(o client.Object) bool {
		job, ok := o.(*trainer.TrainJob)
		return ok && (job.Status.TrainerStatus != nil || job.Status.Goodput != nil)
	})
	return ctrl.NewControllerManagedBy(mgr).Named("goodput").For(&trainer.TrainJob{}, builder.WithPredicates(reported)).Complete(c)
}

// Reconcile brings one TrainJob's account up to date.
func (c *Controller) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &trainer.TrainJob{}
	if err := c.Client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !job.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	g, changed := Account(job, c.Clock.Now(), c.Refresh)
	if g == nil || g.State == trainer.GoodputFinished && !changed {
		return ctrl.Result{}, nil
	}
	if changed && !equality.Semantic.DeepEqual(g, job.Status.Goodput) {
		if err := c.apply(ctx, job, g); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				// Deleted, or deleted and created again under its name.
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, fmt.Errorf("writing status.goodput: %w", err)
		}
	}
	if g.State == trainer.GoodputFinished {
		return ctrl.Result{}, nil
	}
	// A state that lasts (training, most of all) changes nothing in the
	// TrainJob: bring its figures up to date after refresh.
	return ctrl.Result{RequeueAfter: c.Refresh}, nil
}

// apply writes status.goodput with the account's own field manager, on
// the TrainJob of that UID only.
func (c *Controller) apply(ctx context.Context, job *trainer.TrainJob, g *trainer.GoodputStatus) error {
	_, err := statusapply.Field(ctx, c.Client, job, "goodput", g, FieldManager)
	return err
}
