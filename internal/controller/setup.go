package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/cacheomit"
	"github.com/trainforge/trainforge/internal/metricsreg"
	"github.com/trainforge/trainforge/internal/runtimeref"
)

// defaultWorkers is how many TrainJobs are reconciled at once when the
// reconciler's Workers is unset (the configuration file's
// controller.workers).
const defaultWorkers = 16

// runtimeRefIndex indexes TrainJobs by "<kind>/<name>" of their runtime.
const runtimeRefIndex = "spec.runtimeRef"

func runtimeRefKey(kind, name string) string { return kind + "/" + name }

func indexByRuntime(o client.Object) []string {
	job := o.(*trainer.TrainJob)
	return []string{runtimeRefKey(runtimeref.Kind(job), job.Spec.RuntimeRef.Name)}
}

func (r *TrainJobReconciler) workers() int {
	if r.Workers > 0 {
		return r.Workers
	}
	return defaultWorkers
}

// SetupWithManager registers the reconciler and its watches: TrainJobs,
// every kind a plugin builds (through the owner reference), every kind a
// plugin declares through Watch, and both runtime kinds (a TrainJob waiting
// for its runtime starts as soon as the runtime is created; one that has
// its snapshot ignores the runtime).
func (r *TrainJobReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &trainer.TrainJob{}, runtimeRefIndex, indexByRuntime); err != nil {
		return fmt.Errorf("indexing TrainJobs by runtime: %w", err)
	}

	b := ctrl.NewControllerManagedBy(mgr).
		Named("trainjob").
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: r.workers()}).
		WithLogConstructor(reconcileLogger(mgr.GetLogger())).
		For(&trainer.TrainJob{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&trainer.TrainingRuntime{}, handler.EnqueueRequestsFromMapFunc(r.waitingFor(trainer.TrainingRuntimeKind))).
		Watches(&trainer.ClusterTrainingRuntime{}, handler.EnqueueRequestsFromMapFunc(r.waitingFor(trainer.ClusterTrainingRuntimeKind)))

	w := &pluginWatches{mgr: mgr, framework: r.Framework, watched: map[framework.WatchKey]bool{}, omissions: r.CacheOmissions, resync: make(chan event.GenericEvent), indexed: &r.indexed, expectations: &r.expectations}
	r.watches = w
	b = b.WatchesRawSource(source.Channel(w.resync, &handler.EnqueueRequestForObject{}))
	// The kinds of the plugins described at start-up must be served now: a
	// missing CRD is a configuration error. Plugins that start later get
	// their watches once they have described themselves.
	set, done := r.Framework.Use()
	sources, err := w.unwatched(ctx, set)
	done()
	if err != nil {
		return err
	}
	w.seen = set.ID()
	if w.ctl, err = b.Build(r); err != nil {
		return err
	}
	// Before the controller starts, it waits for these sources itself.
	if _, err := w.watch(sources); err != nil {
		return err
	}
	if err := r.observeTrainJobs(ctx, mgr); err != nil {
		return err
	}
	if err := metricsreg.Replace(metrics.Registry, &trainJobCollector{reader: mgr.GetCache(), perTrainJob: r.PerTrainJobMetrics}); err != nil {
		return fmt.Errorf("registering the TrainJob state metrics: %w", err)
	}
	return mgr.Add(w)
}

// observeTrainJobs lets the expected status writes go once the cache has
// them (expectations).
func (r *TrainJobReconciler) observeTrainJobs(ctx context.Context, mgr ctrl.Manager) error {
	inf, err := mgr.GetCache().GetInformer(ctx, &trainer.TrainJob{}, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("watching TrainJobs: %w", err)
	}
	observe := func(obj any) {
		if job, ok := obj.(*trainer.TrainJob); ok {
			r.expectations.observed(job)
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if job, ok := obj.(*trainer.TrainJob); ok {
				r.expectations.forget(client.ObjectKeyFromObject(job))
				r.lifecycle.forget(job.UID)
			}
		},
	})
	return err
}

// pluginWatches adds the watches that plugins ask for: at start-up, and
// later for external plugins whose process started late.
type pluginWatches struct {
	ctl       ctrlcontroller.Controller
	mgr       ctrl.Manager
	framework *frameworkruntime.Framework
	watched   map[framework.WatchKey]bool
	// omissions are the fields the manager's cache drops from each kind
	// (framework.WatchSource.Omit); nil drops none.
	omissions *cacheomit.Table
	// seen is the plugin set whose sources are all watched: a new one
	// comes with a reload, or when an external plugin describes itself.
	seen uint64
	// resync queues TrainJobs for reconciling.
	resync chan event.GenericEvent
	// indexed holds the kinds whose cache is indexed by controlling
	// TrainJob (ownerIndex), shared with the reconciler.
	indexed *sync.Map
	// expectations holds the objects the reconciler just created, whose
	// creation is not reconciled again.
	expectations *expectations
}

// ownerIndex indexes the objects of a built kind by the name of the
// TrainJob that controls them, so that a status read finds a TrainJob's
// objects without scanning every object of the namespace.
const ownerIndex = "metadata.ownerReferences.controller.trainjob"

func indexByOwner(o client.Object) []string {
	ref := metav1.GetControllerOfNoCopy(o)
	if ref == nil || ref.Kind != trainer.TrainJobKind {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != trainer.GroupVersion.Group {
		return nil
	}
	return []string{ref.Name}
}

// lateWatchInterval is how often the controller looks for plugins that
// started since the last look.
const lateWatchInterval = 2 * time.Second

// Start adds the watches of plugins that describe themselves after
// start-up, until ctx ends.
func (w *pluginWatches) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("plugin-watches")
	t := time.NewTicker(lateWatchInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if w.framework.Current().ID() == w.seen {
				continue
			}
			set, done := w.framework.Use()
			sources, err := w.unwatched(ctx, set)
			done()
			var started []source.SyncingSource
			if err == nil {
				started, err = w.watch(sources)
			}
			if err == nil {
				// The controller runs: a source's handler joins its
				// informer in the background. Until it has, changes go
				// unseen, so wait before reconciling everything once.
				err = waitForSync(ctx, started)
			}
			if err != nil {
				log.Error(err, "adding the watches of a plugin; retrying")
				continue
			}
			w.seen = set.ID()
			if len(sources) > 0 {
				for _, s := range sources {
					log.Info("watching a kind for a plugin that started late", "plugin", s.Plugin, "kind", s.Kind.String())
				}
				// What changed before the watches existed went unseen:
				// reconcile every TrainJob once.
				if err := w.reconcileAll(ctx); err != nil {
					log.Error(err, "reconciling every TrainJob after adding watches")
				}
			}
		}
	}
}

// RequeueAll reconciles every TrainJob once, as after the plugins changed
// (a configuration reload). The watches of plugins that build or watch new
// kinds are added by the same loop as for plugins that start late.
func (r *TrainJobReconciler) RequeueAll(ctx context.Context) error {
	if r.watches == nil {
		return errors.New("the TrainJob controller is not set up")
	}
	return r.watches.reconcileAll(ctx)
}

// reconcileAll queues every TrainJob.
func (w *pluginWatches) reconcileAll(ctx context.Context) error {
	jobs := &trainer.TrainJobList{}
	if err := w.mgr.GetClient().List(ctx, jobs); err != nil {
		return err
	}
	for i := range jobs.Items {
		select {
		case w.resync <- event.GenericEvent{Object: &jobs.Items[i]}:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// NeedLeaderElection is true, as for the controller whose watches it adds
// and whose queue it feeds.
func (w *pluginWatches) NeedLeaderElection() bool { return true }

// unwatched returns the plugins' sources not watched yet, after checking
// that the cluster serves their kinds.
func (w *pluginWatches) unwatched(ctx context.Context, set *frameworkruntime.PluginSet) ([]frameworkruntime.PluginWatchSource, error) {
	sources, _, err := set.WatchSources(ctx)
	if err != nil {
		return nil, err
	}
	var out []frameworkruntime.PluginWatchSource
	for _, s := range sources {
		if w.watched[s.Key()] {
			continue
		}
		uses, needs := "watches", watchVerbs
		if s.Mapping == framework.MapByOwner {
			uses, needs = "builds", buildVerbs
		}
		mapping, err := w.mgr.GetRESTMapper().RESTMapping(s.Kind.GroupKind(), s.Kind.Version)
		if err != nil {
			return nil, fmt.Errorf("plugin %s %s %s, which the cluster does not serve (%v): install its CRD, or remove %s from the plugins of the configuration file",
				s.Plugin, uses, s.Kind, err, s.Plugin)
		}
		// A watch the controller may not make never syncs: say so now.
		denied, err := w.deniedVerbs(ctx, mapping.Resource, needs)
		if err != nil {
			return nil, fmt.Errorf("checking the controller's permissions on %s for plugin %s: %w", mapping.Resource, s.Plugin, err)
		}
		if len(denied) > 0 {
			return nil, fmt.Errorf("plugin %s %s %s, but the controller may not %s %s in all namespaces: grant its service account these verbs in an RBAC role (docs/configuration.md, Permissions)",
				s.Plugin, uses, s.Kind, strings.Join(denied, ", "), mapping.Resource.GroupResource())
		}
		out = append(out, s)
	}
	return out, nil
}

// The verbs the controller needs on a kind a plugin builds (server-side
// apply is a patch), and on a kind it only watches.
var (
	buildVerbs = []string{"get", "list", "watch", "create", "patch"}
	watchVerbs = []string{"get", "list", "watch"}
)

// deniedVerbs returns the verbs the controller may not use on a resource
// in all namespaces, asking the API server (SelfSubjectAccessReview).
func (w *pluginWatches) deniedVerbs(ctx context.Context, resource schema.GroupVersionResource, verbs []string) ([]string, error) {
	var denied []string
	for _, verb := range verbs {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: resource.Group, Version: resource.Version, Resource: resource.Resource},
		}}
		if err := w.mgr.GetClient().Create(ctx, review); err != nil {
			return nil, err
		}
		if !review.Status.Allowed {
			denied = append(denied, verb)
		}
	}
	return denied, nil
}

// lateSyncTimeout bounds the wait for a watch added while the controller
// runs to deliver its first events.
const lateSyncTimeout = time.Minute

func waitForSync(ctx context.Context, sources []source.SyncingSource) error {
	ctx, cancel := context.WithTimeout(ctx, lateSyncTimeout)
	defer cancel()
	for _, src := range sources {
		if err := src.WaitForSync(ctx); err != nil {
			return fmt.Errorf("waiting for the watch %s to sync: %w", src, err)
		}
	}
	return ctx.Err()
}

// watch adds the watches of sources to the controller and returns them.
func (w *pluginWatches) watch(sources []frameworkruntime.PluginWatchSource) ([]source.SyncingSource, error) {
	var out []source.SyncingSource
	for _, s := range sources {
		var obj client.Object = &unstructured.Unstructured{}
		obj.GetObjectKind().SetGroupVersionKind(s.Kind)
		if s.Mapping == framework.MapByOwner {
			// Read typed where the scheme knows the kind (objects.go).
			obj = newBuiltObject(w.mgr.GetScheme(), s.Kind)
		}
		var h handler.EventHandler
		switch s.Mapping {
		case framework.MapByOwner:
			h = expectCreations{
				EventHandler: handler.EnqueueRequestForOwner(w.mgr.GetScheme(), w.mgr.GetRESTMapper(), &trainer.TrainJob{}, handler.OnlyControllerOwner()),
				gvk:          s.Kind,
				expectations: w.expectations,
			}
		case framework.MapByLabel:
			label := s.Label
			h = handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
				name := o.GetLabels()[label]
				if name == "" {
					return nil
				}
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
			})
		}
		if s.Mapping == framework.MapByOwner && w.omissions != nil {
			// Before the kind's informer starts, which it may with this
			// watch.
			if err := w.omissions.Set(s.Kind, s.Omit); err != nil {
				return nil, fmt.Errorf("watching %s for plugin %s: %w", s.Kind, s.Plugin, err)
			}
		}
		c, err := w.cacheFor(s)
		if err != nil {
			return nil, fmt.Errorf("watching %s for plugin %s: %w", s.Kind, s.Plugin, err)
		}
		if s.Mapping == framework.MapByOwner {
			// An informer takes indexers also once it runs (a plugin
			// that started late).
			if err := w.mgr.GetFieldIndexer().IndexField(context.Background(), obj.DeepCopyObject().(client.Object), ownerIndex, indexByOwner); err != nil {
				return nil, fmt.Errorf("indexing %s by TrainJob for plugin %s: %w", s.Kind, s.Plugin, err)
			}
			w.indexed.Store(s.Kind, true)
		}
		src := source.Kind[client.Object](c, obj, h)
		if err := w.ctl.Watch(src); err != nil {
			return nil, fmt.Errorf("watching %s for plugin %s: %w", s.Kind, s.Plugin, err)
		}
		w.watched[s.Key()] = true
		out = append(out, src)
	}
	return out, nil
}

// cacheFor returns the cache a watch reads from. Built kinds come from
// the manager's cache (which holds only what Trainforge built, for kinds
// as sensitive as Secrets). A watch mapped by label gets a cache of its
// own that holds only the objects carrying that label: the objects it
// maps are not Trainforge's, and it needs no others.
func (w *pluginWatches) cacheFor(s frameworkruntime.PluginWatchSource) (cache.Cache, error) {
	if s.Mapping != framework.MapByLabel {
		return w.mgr.GetCache(), nil
	}
	has, err := labels.NewRequirement(s.Label, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("label %q: %w", s.Label, err)
	}
	transform, err := cacheomit.Omitting(s.Omit)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(w.mgr.GetConfig(), cache.Options{
		Scheme:               w.mgr.GetScheme(),
		Mapper:               w.mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.NewSelector().Add(*has),
		DefaultTransform:     transform,
	})
	if err != nil {
		return nil, err
	}
	return c, w.mgr.Add(c)
}

// waitingFor maps a runtime to the TrainJobs that reference it and have no
// snapshot of it yet: a TrainJob with one never reads its runtime again.
func (r *TrainJobReconciler) waitingFor(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		// Read only: each TrainJob carries its runtime's spec, not worth a
		// deep copy per TrainJob of a popular runtime on every runtime edit.
		opts := []client.ListOption{client.MatchingFields{runtimeRefIndex: runtimeRefKey(kind, o.GetName())}, client.UnsafeDisableDeepCopy}
		if kind == trainer.TrainingRuntimeKind {
			opts = append(opts, client.InNamespace(o.GetNamespace()))
		}
		jobs := &trainer.TrainJobList{}
		if err := r.Client.List(ctx, jobs, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing TrainJobs of a runtime", "kind", kind, "runtime", o.GetName())
			return nil
		}
		var out []reconcile.Request
		for i := range jobs.Items {
			if j := &jobs.Items[i]; j.Status.RuntimeSnapshot == nil && !isFinished(j) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(j)})
			}
		}
		return out
	}
}

// reconcileLogger gives each reconcile the logger controller-runtime's
// builder would, with the same keys, but adds the request's in one
// WithValues instead of two: each copies the logger's encoder, and in a
// burst that copy was 2% of the controller's CPU.
func reconcileLogger(base logr.Logger) func(*reconcile.Request) logr.Logger {
	log := base.WithValues("controller", "trainjob", "controllerGroup", trainer.GroupVersion.Group, "controllerKind", trainer.TrainJobKind)
	return func(req *reconcile.Request) logr.Logger {
		if req == nil {
			return log
		}
		return log.WithValues(trainer.TrainJobKind, klog.KRef(req.Namespace, req.Name), "namespace", req.Namespace, "name", req.Name)
	}
}
