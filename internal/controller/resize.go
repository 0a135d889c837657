package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
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
	"github.com/trainforge/trainforge/framework"
)

// ElasticFeatureGate is the JobSet controller's feature gate that lets a
// running JobSet's Job parallelism and completions change (JobSet v0.12,
// alpha, off by default; set in the featureGates map of the controller's
// Configuration file); without it JobSet's webhook refuses a resize.
const ElasticFeatureGate = "ElasticJobSet"

// KueueQueueNameLabel is the label that submits a job to a Kueue queue:
// Kueue admits the job with a quota for its size when it resumes it.
const KueueQueueNameLabel = "kueue.x-k8s.io/queue-name"

// Results counted by resizes.
const (
	resizeResultResized = "resized"
	resizeResultRefused = "refused"
)

var resizes = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "trainforge_trainjob_resizes_total",
	Help: "Resizes of running elastic TrainJobs: written in place to their workload's live fields (result=resized), or refused (result=refused): by the API server, as a JobSet controller without the ElasticJobSet feature gate does, or by the controller for a TrainJob in a Kueue queue.",
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

// liveChanges returns the live fields (framework.LiveFieldsAnnotation) of
// desired whose value differs from current's, as JSON patch operations,
// and a description of each. A malformed annotation is the plugin's
// error.
func liveChanges(current, desired *unstructured.Unstructured) ([]jsonPatchOp, []string, error) {
	raw, ok := desired.GetAnnotations()[framework.LiveFieldsAnnotation]
	if !ok {
		return nil, nil, nil
	}
	var pointers []string
	if err := json.Unmarshal([]byte(raw), &pointers); err != nil {
		return nil, nil, fmt.Errorf("annotation %s of %s %s: %w", framework.LiveFieldsAnnotation, desired.GetKind(), desired.GetName(), err)
	}
	var ops []jsonPatchOp
	var changes []string
	for _, p := range pointers {
		want, ok, err := atPointer(desired.Object, p)
		if err != nil || !ok {
			return nil, nil, fmt.Errorf("annotation %s of %s %s: field %s: %v", framework.LiveFieldsAnnotation, desired.GetKind(), desired.GetName(), p, errOrMissing(err))
		}
		have, found, err := atPointer(current.Object, p)
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

// atPointer reads the value at a JSON pointer of obj.
func atPointer(obj map[string]any, pointer string) (any, bool, error) {
	if !strings.HasPrefix(pointer, "/") {
		return nil, false, fmt.Errorf("%q is not a JSON pointer", pointer)
	}
	var cur any = obj
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false, nil
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false, nil
			}
			cur = v[i]
		default:
			return nil, false, nil
		}
	}
	return cur, true, nil
}

// applyLive writes the live fields of a running object that differ from
// what its plugin built, by one JSON patch under the plugin's field
// manager. It returns nil when none differ. A refusal by the API server
// (an invalid or forbidden change: JobSet's webhook without its
// ElasticJobSet gate) is reported in the result, not as an error: the
// object runs on as it is.
//
// A TrainJob in a Kueue queue is not resized while it runs: Kueue admitted
// it with a quota for its size, and its elastic workloads do not cover
// TrainJob, so a resize would take the job past its admitted quota
// unseen by Kueue. Kueue's TrainJob integration sees the new size itself
// (its pod sets no longer match the admitted Workload): it stops the job,
// replaces the Workload and resumes the job when the quota admits the new
// size; suspended, the JobSet is applied whole at that size.
func (r *TrainJobReconciler) applyLive(ctx context.Context, o framework.BuiltObject, current client.Object, kueueQueue string) (*resize, error) {
	cur, err := asUnstructured(current, o.Object.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	ops, changes, err := liveChanges(cur, o.Object)
	if err != nil || ops == nil {
		return nil, err
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	res := &resize{kind: o.Object.GetKind(), name: o.Object.GetName(), changes: changes}
	if kueueQueue != "" {
		log.FromContext(ctx).Info("resize refused: the TrainJob is in a Kueue queue", "kind", res.kind, "name", res.name, "queue", kueueQueue)
		resizes.WithLabelValues(resizeResultRefused).Inc()
		res.refused = fmt.Errorf("the TrainJob is in Kueue queue %q (label %s), which admitted it with a quota for its size, and Kueue's elastic workloads do not cover TrainJob", kueueQueue, KueueQueueNameLabel)
		res.advice = "Kueue stops (suspends) the TrainJob when it sees that its Workload no longer matches, and resumes it at the new size once the queue's quota admits that: the job restarts at the new size (from its last checkpoint) instead of resizing in place. Until Kueue stops it, it runs at its old size"
		return res, nil
	}
	manager := FieldManagerPrefix + strings.ToLower(o.Plugin)
	err = r.Client.Patch(ctx, cur, client.RawPatch(types.JSONPatchType, data), client.FieldOwner(manager))
	switch {
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		log.FromContext(ctx).Info("resize refused", "kind", res.kind, "name", res.name, "error", err.Error())
		resizes.WithLabelValues(resizeResultRefused).Inc()
		res.refused = err
		res.advice = fmt.Sprintf("A JobSet controller resizes a running JobSet only with its %s feature gate on (featureGates: {%s: true} in its Configuration file); the TrainJob keeps running at its old size and is resized once the gate is on and the TrainJob changes", ElasticFeatureGate, ElasticFeatureGate)
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
				fmt.Sprintf("%s %s not resized (%s): %v. %s", res.kind, res.name, strings.Join(res.changes, ", "), res.refused, res.advice))
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
