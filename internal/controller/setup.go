package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/internal/runtimeref"
)

// runtimeRefIndex indexes TrainJobs by "<kind>/<name>" of their runtime.
const runtimeRefIndex = "spec.runtimeRef"

func runtimeRefKey(kind, name string) string { return kind + "/" + name }

// SetupWithManager registers the reconciler and its watches: TrainJobs,
// every kind a plugin builds (through the owner reference), every kind a
// plugin declares through Watch, and both runtime kinds (a TrainJob waiting
// for its runtime starts as soon as the runtime is created).
func (r *TrainJobReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &trainer.TrainJob{}, runtimeRefIndex, func(o client.Object) []string {
		job := o.(*trainer.TrainJob)
		return []string{runtimeRefKey(runtimeref.Kind(job), job.Spec.RuntimeRef.Name)}
	}); err != nil {
		return fmt.Errorf("indexing TrainJobs by runtime: %w", err)
	}

	b := ctrl.NewControllerManagedBy(mgr).
		Named("trainjob").
		For(&trainer.TrainJob{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&trainer.TrainingRuntime{}, handler.EnqueueRequestsFromMapFunc(r.waitingFor(trainer.TrainingRuntimeKind))).
		Watches(&trainer.ClusterTrainingRuntime{}, handler.EnqueueRequestsFromMapFunc(r.waitingFor(trainer.ClusterTrainingRuntimeKind)))

	if err := r.checkServed(mgr.GetRESTMapper()); err != nil {
		return err
	}
	sources, err := r.Framework.WatchSources(ctx)
	if err != nil {
		return err
	}
	for _, s := range sources {
		if _, err := mgr.GetRESTMapper().RESTMapping(s.Kind.GroupKind(), s.Kind.Version); err != nil {
			return fmt.Errorf("a plugin watches %s, which the cluster does not serve: %w", s.Kind, err)
		}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(s.Kind)
		switch s.Mapping {
		case framework.MapByOwner:
			b = b.Owns(obj)
		case framework.MapByLabel:
			label := s.Label
			b = b.Watches(obj, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
				name := o.GetLabels()[label]
				if name == "" {
					return nil
				}
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
			}))
		}
	}
	return b.Complete(r)
}

// checkServed fails start-up with a clear message when a plugin builds a
// kind that the cluster does not serve (its CRD is not installed), instead
// of a watch that never syncs.
func (r *TrainJobReconciler) checkServed(mapper meta.RESTMapper) error {
	for _, d := range r.Framework.Descriptions() {
		for _, gvk := range d.Builds {
			if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				return fmt.Errorf("plugin %s builds %s, which the cluster does not serve (%v): install its CRD, or remove %s from the plugins of the configuration file",
					d.Name, gvk, err, d.Name)
			}
		}
	}
	return nil
}

// waitingFor maps a runtime to the TrainJobs that reference it and have not
// yet created their objects.
func (r *TrainJobReconciler) waitingFor(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		opts := []client.ListOption{client.MatchingFields{runtimeRefIndex: runtimeRefKey(kind, o.GetName())}}
		if kind == trainer.TrainingRuntimeKind {
			opts = append(opts, client.InNamespace(o.GetNamespace()))
		}
		jobs := &trainer.TrainJobList{}
		if err := r.Client.List(ctx, jobs, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing TrainJobs of a runtime", "kind", kind, "runtime", o.GetName())
			return nil
		}
		var out []reconcile.Request
		for _, j := range jobs.Items {
			if c := meta.FindStatusCondition(j.Status.Conditions, trainer.TrainJobCreated); c == nil || c.Status != metav1.ConditionTrue {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&j)})
			}
		}
		return out
	}
}
