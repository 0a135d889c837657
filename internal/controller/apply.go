package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// DesiredHashAnnotation records the hash of the state the controller last
// applied to an object, so that an unchanged desired state is not applied
// again.
const DesiredHashAnnotation = "trainforge.dev/desired-state-hash"

// FieldManagerPrefix prefixes the field manager of each building plugin.
const FieldManagerPrefix = "trainforge-"

// apply server-side applies one built object with the building plugin as
// field manager, unless the object already carries the hash of the same
// desired state. answered says whether it applied and o.Object then holds
// the object as the API server does (only its metadata taken from the
// answer when it was created: createByApply).
func (r *TrainJobReconciler) apply(ctx context.Context, p *pass, o frameworkruntime.BuiltObject) (hash string, answered bool, err error) {
	obj := o.Object
	gvk := obj.GroupVersionKind()
	withStatusFinalizer(obj)
	hash, err = desiredHash(obj)
	if err != nil {
		return "", false, err
	}
	current := newBuiltObject(r.Client.Scheme(), gvk)
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(obj), current)
	if o.CreateOnce {
		return "", false, r.createOnce(ctx, o, err)
	}
	switch {
	case err == nil && !current.GetDeletionTimestamp().IsZero():
		// Deleted, and kept for its last state (StatusFinalizer): it is
		// built again once it is gone, if the TrainJob has not finished.
		log.FromContext(ctx).V(1).Info("not applying an object being deleted", "kind", gvk.Kind, "name", obj.GetName())
		objectApplies.WithLabelValues(o.Plugin, gvk.Kind, applyResultUnchanged).Inc()
		return current.GetAnnotations()[DesiredHashAnnotation], false, nil
	case err == nil && current.GetAnnotations()[DesiredHashAnnotation] == hash:
		// The hash is of the state last applied whole; live fields
		// written since (an elastic Job resized 2 → 3 in place) may
		// differ from it, and a return to it (3 → 2) is written here.
		if err := r.tendLeftAsItIs(ctx, p, o, current); err != nil {
			return "", false, err
		}
		objectApplies.WithLabelValues(o.Plugin, gvk.Kind, applyResultUnchanged).Inc()
		return hash, false, nil
	case err == nil && r.keepsRunning(current, obj):
		// A running workload's pod templates are immutable (JobSet's own
		// webhook refuses the change); a new runtime patch or plugin
		// output reaches it at its next suspension, as in Kubeflow
		// Trainer. (A runtime edit never does: the job has its snapshot.)
		// Only the fields its plugin marked live (an elastic Job's size)
		// are written now.
		if err := r.tendLeftAsItIs(ctx, p, o, current); err != nil {
			return "", false, err
		}
		log.FromContext(ctx).V(1).Info("not updating a running object", "kind", gvk.Kind, "name", obj.GetName())
		objectApplies.WithLabelValues(o.Plugin, gvk.Kind, applyResultKeptRunning).Inc()
		return current.GetAnnotations()[DesiredHashAnnotation], false, nil
	case err != nil && !apierrors.IsNotFound(err):
		return "", false, fmt.Errorf("plugin %s: reading %s %s: %w", o.Plugin, gvk.Kind, obj.GetName(), err)
	}
	annotations := obj.GetAnnotations()
	framework.MergeMap(&annotations, map[string]string{DesiredHashAnnotation: hash})
	obj.SetAnnotations(annotations)
	manager := FieldManagerPrefix + strings.ToLower(o.Plugin)
	answered = true
	if apierrors.IsNotFound(err) {
		answered, err = r.createByApply(ctx, p, obj, manager)
	} else {
		err = r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(manager), client.ForceOwnership)
	}
	if err != nil {
		return "", false, writeFailed(o, "applying", err)
	}
	objectApplies.WithLabelValues(o.Plugin, gvk.Kind, applyResultApplied).Inc()
	return hash, answered, nil
}

// tendLeftAsItIs is what an object that is not applied again still gets:
// StatusFinalizer when it lacks it (keepStatusFinalizer), and the live
// fields that differ from o's (writeLive).
func (r *TrainJobReconciler) tendLeftAsItIs(ctx context.Context, p *pass, o frameworkruntime.BuiltObject, current client.Object) error {
	if err := r.keepStatusFinalizer(ctx, o, current); err != nil {
		return err
	}
	return r.writeLive(ctx, p, o, current)
}

// writeLive writes the live fields of current that differ from o's, and
// records the resize in the pass.
func (r *TrainJobReconciler) writeLive(ctx context.Context, p *pass, o frameworkruntime.BuiltObject, current client.Object) error {
	res, err := r.applyLive(ctx, o, current)
	if err != nil {
		return err
	}
	if res != nil {
		p.resizes = append(p.resizes, res)
	}
	return nil
}

// createOnce creates an object that its plugin marked to be created once
// (framework.CreateOnce), unless getErr, the result of reading it, says it
// exists: it is never updated, so a generated key stays the same for the
// TrainJob's whole life. A create that finds it created meanwhile (the
// cache lagged) leaves it as it is too.
func (r *TrainJobReconciler) createOnce(ctx context.Context, o frameworkruntime.BuiltObject, getErr error) error {
	obj := o.Object
	gvk := obj.GroupVersionKind()
	switch {
	case getErr == nil:
		objectApplies.WithLabelValues(o.Plugin, gvk.Kind, applyResultExists).Inc()
		return nil
	case !apierrors.IsNotFound(getErr):
		return fmt.Errorf("plugin %s: reading %s %s: %w", o.Plugin, gvk.Kind, obj.GetName(), getErr)
	}
	manager := FieldManagerPrefix + strings.ToLower(o.Plugin)
	err := r.Client.Create(ctx, obj.DeepCopy(), client.FieldOwner(manager))
	switch {
	case apierrors.IsAlreadyExists(err):
		objectApplies.WithLabelValues(o.Plugin, gvk.Kind, applyResultExists).Inc()
		return nil
	case err != nil:
		return writeFailed(o, "creating", err)
	}
	objectApplies.WithLabelValues(o.Plugin, gvk.Kind, applyResultCreated).Inc()
	return nil
}

// keepsRunning reports whether a suspendable object (one with
// spec.suspend) runs now and would keep running: then it is left as it is.
// Suspending or resuming it is always applied, together with any other
// change, in one apply (Kueue resumes a job and patches its template in one
// update).
func keepsRunning(current, desired *unstructured.Unstructured) bool {
	suspended, found, err := unstructured.NestedBool(current.Object, "spec", "suspend")
	if err != nil || !found || suspended {
		return false
	}
	suspend, found, err := unstructured.NestedBool(desired.Object, "spec", "suspend")
	return err == nil && found && !suspend
}

// keepsRunning is keepsRunning for an object read typed from the cache.
func (r *TrainJobReconciler) keepsRunning(current client.Object, desired *unstructured.Unstructured) bool {
	cur, err := asUnstructured(current, desired.GroupVersionKind())
	if err != nil {
		return false
	}
	return keepsRunning(cur, desired)
}

func desiredHash(obj *unstructured.Unstructured) (string, error) {
	data, err := json.Marshal(obj.Object) // encoding/json sorts map keys.
	if err != nil {
		return "", fmt.Errorf("encoding %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}
