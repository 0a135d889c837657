package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework/fieldpath"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// Results counted by resizes.
const (
	resizeResultResized = "resized"
	resizeResultRefused = "refused"
)

var resizes = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "trainforge_trainjob_resizes_total",
	Help: "Resizes of running elastic TrainJobs: written in place to their workload's live fields (result=resized), or refused (result=refused): by the API server (a workload controller that does not allow the change), or held by the plugin that built the workload (a TrainJob waiting in a queue).",
}, []string{"result"})

// resize is the outcome of writing a running object's live fields.
type resize struct {
	kind, name string
	// changes says what changed, for example "parallelism 2 → 4".
	changes []string
	// refused is why the object kept its old values: the API server's
	// refusal, or the controller's own.
	refused error
	// advice says what would let the resize through.
	advice string
}

// liveChanges returns the live fields of desired (BuiltObject.Live, which
// the framework checked at Build) whose value differs from current's, as
// JSON patch operations, and a description of each.
func liveChanges(current *unstructured.Unstructured, desired frameworkruntime.BuiltObject) ([]jsonPatchOp, []string, error) {
	if desired.Live == nil {
		return nil, nil, nil
	}
	var ops []jsonPatchOp
	var changes []string
	for _, p := range desired.Live.Paths {
		want, ok, err := fieldpath.AtPointer(desired.Object.Object, p)
		if err != nil || !ok {
			return nil, nil, fmt.Errorf("plugin %s: live field %s of %s %s: %v", desired.Plugin, p, desired.Object.GetKind(), desired.Object.GetName(), errOrMissing(err))
		}
		have, found, err := fieldpath.AtPointer(current.Object, p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: field %s: %w", current.GetKind(), current.GetName(), p, err)
		}
		if found && equality.Semantic.DeepEqual(have, want) {
			continue
		}
		ops = append(ops, jsonPatchOp{Op: "add", Path: p, Value: want})
		changes = append(changes, fmt.Sprintf("%s %v → %v", p[strings.LastIndex(p, "/")+1:], have, want))
	}
	if len(ops) == 0 {
		return nil, nil, nil
	}
	// No test of the resourceVersion: the values are absolute (a later
	// object gets the same), the pointers name fields of a part that
	// stays as it is while the object runs, and the API server answers a
	// failed test as it answers a refusal (422), which would hide one.
	return ops, changes, nil
}

func errOrMissing(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("not set")
}

// applyLive writes the live fields of a running object that differ from
// what its plugin built, by one JSON patch under the plugin's field
// manager. It returns nil when none differ. A refusal by the API server
// (an invalid or forbidden change: JobSet's webhook without its
// ElasticJobSet gate), or the plugin's hold on the fields (Live.Held: a
// TrainJob that a queue admitted at its size), is reported in the result
// with the plugin's advice, not as an error: the object runs on as it is.
func (r *TrainJobReconciler) applyLive(ctx context.Context, o frameworkruntime.BuiltObject, current client.Object) (*resize, error) {
	cur, err := asUnstructured(current, o.Object.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	ops, changes, err := liveChanges(cur, o)
	if err != nil || ops == nil {
		return nil, err
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	res := &resize{kind: o.Object.GetKind(), name: o.Object.GetName(), changes: changes, advice: o.Live.Advice}
	if held := o.Live.Held; held != "" {
		log.FromContext(ctx).Info("resize held by its plugin", "kind", res.kind, "name", res.name, "plugin", o.Plugin, "reason", held)
		resizes.WithLabelValues(resizeResultRefused).Inc()
		res.refused = errors.New(held)
		return res, nil
	}
	manager := FieldManagerPrefix + strings.ToLower(o.Plugin)
	err = r.Client.Patch(ctx, cur, client.RawPatch(types.JSONPatchType, data), client.FieldOwner(manager))
	switch {
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		log.FromContext(ctx).Info("resize refused", "kind", res.kind, "name", res.name, "error", err.Error())
		resizes.WithLabelValues(resizeResultRefused).Inc()
		res.refused = err
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("plugin %s: resizing %s %s: %w", o.Plugin, res.kind, res.name, err)
	}
	log.FromContext(ctx).Info("resized in place", "kind", res.kind, "name", res.name, "changes", changes)
	resizes.WithLabelValues(resizeResultResized).Inc()
	return res, nil
}

// recordResizes sets the Resized condition of an elastic TrainJob from
// this pass's resizes (its transitions give the Events), and the time of
// the last one accepted. A job whose workload runs at the size asked for,
// after a refusal, gets the condition back to True: a pass that built
// every object and refused nothing has them at that size (applied whole
// while suspended, as Kueue stops a queued job that changed size, or the
// size asked for went back to the one they run at).
func (r *TrainJobReconciler) recordResizes(job *trainer.TrainJob, done []*resize, now metav1.Time) {
	if len(done) == 0 {
		if c := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobResized); c != nil && c.Status == metav1.ConditionFalse {
			msg := "Its objects are at the size asked for"
			if n := job.Spec.Trainer; n != nil && n.NumNodes != nil {
				msg = fmt.Sprintf("Its objects are at the size asked for, spec.trainer.numNodes %d", *n.NumNodes)
			}
			setCondition(job, trainer.TrainJobResized, metav1.ConditionTrue, trainer.TrainJobResizedReason, msg)
		}
		return
	}
	for _, res := range done {
		if res.refused != nil {
			setCondition(job, trainer.TrainJobResized, metav1.ConditionFalse, trainer.TrainJobResizeRefusedReason,
				strings.TrimSuffix(fmt.Sprintf("%s %s not resized (%s): %v. %s", res.kind, res.name, strings.Join(res.changes, ", "), res.refused, res.advice), " "))
			continue
		}
		setCondition(job, trainer.TrainJobResized, metav1.ConditionTrue, trainer.TrainJobResizedReason,
			fmt.Sprintf("%s %s resized in place: %s", res.kind, res.name, strings.Join(res.changes, ", ")))
		if job.Status.Nodes == nil {
			job.Status.Nodes = &trainer.NodesStatus{}
		}
		job.Status.Nodes.LastResizeTime = &now
	}
}
