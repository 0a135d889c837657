// Package controller holds the TrainJob reconciler: it resolves a
// TrainJob's runtime, runs the plugin phases, applies what the plugins build
// and reports their status back onto the TrainJob.
package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/cacheomit"
	"github.com/trainforge/trainforge/internal/runtimeref"
)

// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainingruntimes;clustertrainingruntimes,verbs=get;list;watch
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=scheduling.x-k8s.io,resources=podgroups,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=node.k8s.io,resources=runtimeclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;update
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=selfsubjectaccessreviews,verbs=create

// TrainJobReconciler reconciles TrainJobs.
type TrainJobReconciler struct {
	Client    client.Client
	Framework *frameworkruntime.Framework
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// CacheOmissions receives the fields that the plugins' watches omit
	// from each kind, for the manager cache's transform (cacheomit); nil
	// keeps every field.
	CacheOmissions *cacheomit.Table

	watches *pluginWatches // set by SetupWithManager
	// Workers is how many TrainJobs are reconciled at once; a plugin call
	// that hangs holds one for at most its callTimeout while the others go
	// on. 0 means 16.
	Workers int

	// indexed holds the built kinds whose cache is indexed by owner
	// (ownerIndex); the others are listed by label.
	indexed sync.Map

	// expectations holds the status writes and creations the cache has
	// not brought back yet.
	expectations expectations
	// memo lets a reconcile whose inputs did not change skip the plugins.
	memo buildMemo

	// PerTrainJobMetrics serves trainforge_trainjob_state, a series per
	// TrainJob (the configuration's metrics.perTrainJob).
	PerTrainJobMetrics bool
	// lifecycle remembers which lifecycle durations were observed.
	lifecycle lifecycleSeen
}

// Reconcile brings one TrainJob's objects and status up to date.
func (r *TrainJobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &trainer.TrainJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			r.expectations.forget(req.NamespacedName)
			r.forgetBuild(req.NamespacedName)
			// Its objects go with it: nothing reads their last state.
			return ctrl.Result{}, r.releaseDeleted(ctx, req.NamespacedName, releaseAll)
		}
		return ctrl.Result{}, err
	}
	job = r.expectations.startPass(job)
	defer r.expectations.endPass(req.NamespacedName)
	if !job.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.releaseDeleted(ctx, req.NamespacedName, releaseAll)
	}
	if !job.IsManagedByUs() {
		return ctrl.Result{}, nil
	}
	if isFinished(job) {
		if err := r.followFinished(ctx, job); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.releaseDeleted(ctx, req.NamespacedName, releaseAll); err != nil {
			return ctrl.Result{}, err
		}
		return r.expireAfterFinished(ctx, job)
	}
	log := log.FromContext(ctx)
	original := job.DeepCopy()

	// All phases of this reconcile run with the same plugins, even if the
	// configuration is reloaded meanwhile.
	plugins, done := r.Framework.Use()
	defer done()
	p := &pass{job: req.NamespacedName, plugins: plugins}
	result, reconcileErr := r.reconcile(ctx, p, job)
	r.recordIgnored(job, p.ignored())
	if _, err := r.writeStatus(ctx, original, job); err != nil {
		// A conflict too is returned: status-only updates do not
		// trigger a reconcile, so only the retry brings us back.
		return ctrl.Result{}, errors.Join(reconcileErr, fmt.Errorf("updating status: %w", err))
	}
	if retry, ok := retryUnavailable(ctx, reconcileErr); ok {
		return retry, nil
	}
	if reconcileErr != nil {
		log.Error(reconcileErr, "reconcile failed")
		return result, reconcileErr
	}
	if p.reads != nil {
		// The status is written from the objects as the status plugins
		// read them: the deleted ones among them may go.
		if err := r.releaseDeleted(ctx, req.NamespacedName, p.reads.recorded); err != nil {
			return ctrl.Result{}, err
		}
	}
	if isFinished(job) {
		// Finished by this reconcile: no event brings the TrainJob back
		// when its time to live has passed.
		return r.expireAfterFinished(ctx, job)
	}
	if r.expectations.requeue(req.NamespacedName, len(p.ignored()) > 0) {
		// In place of a creation event that does not reconcile
		// (expectations).
		result.RequeueAfter = time.Millisecond
	}
	return result, nil
}

// pass is one reconcile of one TrainJob: the plugin set it runs with, its
// cycle through the plugins, and what its status plugins read.
type pass struct {
	job     types.NamespacedName
	plugins *frameworkruntime.PluginSet
	// cycle is the TrainJob's pass through the plugins, once started; it
	// keeps the failures that Ignore policies skipped.
	cycle *frameworkruntime.Cycle
	// reads are the objects the status plugins read, once they have.
	reads *statusReads
	// resizes are the live fields of running objects written, or
	// refused, in this pass.
	resizes []*resize
}

func (r *TrainJobReconciler) reconcile(ctx context.Context, p *pass, job *trainer.TrainJob) (ctrl.Result, error) {
	if err := runtimeref.CheckSnapshot(job); err != nil {
		setCondition(job, trainer.TrainJobCreated, metav1.ConditionFalse, trainer.TrainJobRuntimeSnapshotMismatchReason, err.Error())
		// Retried with backoff: a status edit triggers no reconcile, so
		// only a retry sees the repaired snapshot.
		return ctrl.Result{}, err
	}
	spec, err := r.runtimeSpec(ctx, job)
	switch {
	case apierrors.IsNotFound(err) && meta.IsStatusConditionTrue(job.Status.Conditions, trainer.TrainJobCreated):
		// Started before runtime snapshots existed, and its runtime was
		// deleted since, so it can take none: its objects run on, and
		// their status is still the TrainJob's.
		log.FromContext(ctx).Info("runtime not found and no snapshot; following the objects already created", "runtime", job.Spec.RuntimeRef.Name)
		p.cycle = p.plugins.NewCycleWithoutRuntime(job)
		return ctrl.Result{}, r.updateStatus(ctx, p, nil, job, nil)
	case apierrors.IsNotFound(err):
		// The runtime watch requeues this TrainJob once the runtime exists.
		setCondition(job, trainer.TrainJobCreated, metav1.ConditionFalse, trainer.TrainJobRuntimeNotFoundReason,
			fmt.Sprintf("%s %q not found; the TrainJob starts once it is created", runtimeref.Kind(job), job.Spec.RuntimeRef.Name))
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, r.buildFailed(job, err)
	}

	deadline, deadlineExceeded := r.deadline(job)
	// Plugins see the runtime through Info only.
	desired := runtimeref.WithoutSnapshot(job)
	if deadlineExceeded {
		// The job stops: its objects are suspended, which removes its pods.
		desired = desired.DeepCopy()
		desired.Spec.Suspend = ptr.To(true)
	}

	info, message, written, err := r.build(ctx, p, job, desired, spec)
	if err != nil {
		return ctrl.Result{}, r.buildFailed(job, err)
	}
	setCondition(job, trainer.TrainJobCreated, metav1.ConditionTrue, trainer.TrainJobJobsCreatedReason, message)

	if desired.IsSuspended() {
		setCondition(job, trainer.TrainJobSuspended, metav1.ConditionTrue, trainer.TrainJobSuspendedReason, "The TrainJob is suspended")
	} else if c := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobSuspended); c != nil && c.Status == metav1.ConditionTrue {
		setCondition(job, trainer.TrainJobSuspended, metav1.ConditionFalse, trainer.TrainJobResumedReason, "The TrainJob is resumed")
	}

	if err := r.updateStatus(ctx, p, info, job, written); err != nil {
		return ctrl.Result{}, err
	}
	r.recordResizes(job, p.resizes, metav1.NewTime(r.Clock.Now()))

	if deadlineExceeded && !isFinished(job) {
		setCondition(job, trainer.TrainJobFailed, metav1.ConditionTrue, trainer.TrainJobDeadlineExceededReason,
			fmt.Sprintf("The TrainJob was active longer than activeDeadlineSeconds (%ds)", *job.Spec.ActiveDeadlineSeconds))
	}
	if !deadline.IsZero() && !deadlineExceeded && !isFinished(job) {
		return ctrl.Result{RequeueAfter: deadline.Sub(r.Clock.Now())}, nil
	}
	return ctrl.Result{}, nil
}

// build runs the plugins for desired and applies what they build, unless
// the memo says that the same inputs built objects that are still as they
// were left. It starts the pass's cycle, and returns the Info the objects
// were built from (as Build received it, or as the memo kept it), for the
// status plugins, the Created condition's message, and the objects it
// applied, as the API server answered.
func (r *TrainJobReconciler) build(ctx context.Context, p *pass, job, desired *trainer.TrainJob, spec *trainer.TrainingRuntimeSpec) (*framework.Info, string, []*unstructured.Unstructured, error) {
	key, memoable := memoKey(job, desired, p.plugins)
	if memoable {
		if e, ok := r.lookupMemo(ctx, job, key); ok {
			for _, o := range e.objects {
				objectApplies.WithLabelValues(o.plugin, o.gvk.Kind, applyResultUnchanged).Inc()
			}
			_, err := p.startCycle(desired, e.keys)
			return e.info, e.message, nil, err
		}
	}
	info, err := framework.NewInfo(desired, spec, framework.WithRuntimeClassOverhead(r.runtimeClassOverhead(ctx)))
	if err != nil {
		return nil, "", nil, err
	}
	keys, err := info.PolicyKeys()
	if err != nil {
		return nil, "", nil, &framework.InvalidJobError{Err: err}
	}
	cycle, err := p.startCycle(desired, keys)
	if err != nil {
		return nil, "", nil, err
	}
	if err := cycle.Enforce(ctx, info); err != nil {
		return nil, "", nil, err
	}
	objects, err := cycle.Build(ctx, info)
	if err != nil {
		return nil, "", nil, err
	}
	entry := memoEntry{key: key, message: createdMessage(objects, cycle.Shapers()), keys: cycle.Keys(), info: info}
	var written []*unstructured.Unstructured
	for _, o := range applyOrder(objects) {
		hash, answered, err := r.apply(ctx, p, o)
		if err != nil {
			return nil, "", nil, err
		}
		if answered {
			written = append(written, o.Object)
		}
		entry.objects = append(entry.objects, memoObject{
			plugin: o.Plugin, gvk: o.Object.GroupVersionKind(), key: client.ObjectKeyFromObject(o.Object),
			createOnce: o.CreateOnce, hash: hash,
		})
	}
	// A plugin whose failure was skipped is tried again next time, and
	// so is a refused resize.
	if memoable && len(p.ignored()) == 0 && !slices.ContainsFunc(p.resizes, func(r *resize) bool { return r.refused != nil }) {
		r.rememberBuild(job, entry)
	}
	return info, entry.message, written, nil
}

// startCycle starts the job's pass through the plugins that take part in
// it.
func (p *pass) startCycle(job *trainer.TrainJob, keys framework.PolicyKeys) (*frameworkruntime.Cycle, error) {
	cycle, err := p.plugins.NewCycle(job, keys)
	if err != nil {
		return nil, err
	}
	p.cycle = cycle
	return cycle, nil
}

// ignored are the plugin failures that Ignore policies skipped in the
// pass.
func (p *pass) ignored() frameworkruntime.Ignored {
	if p.cycle == nil {
		return nil
	}
	return p.cycle.Ignored()
}

// runtimeSpec returns the runtime spec the job runs with: its snapshot, or,
// the first time, the live runtime's, which it records as the snapshot in
// job.Status. Reconcile's status update writes it with the rest of the
// status, also when a later phase fails: the job is pinned to the runtime as
// its first reconcile saw it. That update carries the job's
// resourceVersion, so a reconcile that worked from a stale TrainJob without
// a snapshot cannot overwrite one.
func (r *TrainJobReconciler) runtimeSpec(ctx context.Context, job *trainer.TrainJob) (*trainer.TrainingRuntimeSpec, error) {
	if snap := job.Status.RuntimeSnapshot; snap != nil {
		return &snap.Spec, nil
	}
	snap, err := runtimeref.Resolve(ctx, r.getRuntime, job)
	if err != nil {
		return nil, err
	}
	// Too large a snapshot would make every status update fail, silently
	// for the user, while the objects run unpinned.
	if err := runtimeref.CheckSize(field.NewPath("spec"), &snap.Spec); err != nil {
		return nil, fmt.Errorf("%s %q: %w", snap.Kind, snap.Name, err)
	}
	job.Status.RuntimeSnapshot = snap
	return &snap.Spec, nil
}

// getRuntime reads a runtime for runtimeref.Resolve.
func (r *TrainJobReconciler) getRuntime(ctx context.Context, key types.NamespacedName, obj runtimeref.Object) error {
	return r.Client.Get(ctx, key, obj)
}

// runtimeClassOverhead looks RuntimeClasses up for NewInfo. A missing one
// is an error: its pods would be refused by admission anyway.
func (r *TrainJobReconciler) runtimeClassOverhead(ctx context.Context) framework.OverheadLookup {
	return func(name string) (corev1.ResourceList, error) {
		rc := &nodev1.RuntimeClass{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, rc); err != nil {
			return nil, err
		}
		if rc.Overhead == nil {
			return nil, nil
		}
		return rc.Overhead.PodFixed, nil
	}
}

// deadline returns when an active deadline passes, and whether it has.
// The clock starts at creation and restarts at each resume.
func (r *TrainJobReconciler) deadline(job *trainer.TrainJob) (time.Time, bool) {
	if job.Spec.ActiveDeadlineSeconds == nil || job.IsSuspended() {
		return time.Time{}, false
	}
	start := job.CreationTimestamp.Time
	if c := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobSuspended); c != nil && c.Status == metav1.ConditionFalse {
		start = c.LastTransitionTime.Time
	}
	d := start.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second)
	return d, !r.Clock.Now().Before(d)
}

func isFinished(job *trainer.TrainJob) bool {
	return meta.IsStatusConditionTrue(job.Status.Conditions, trainer.TrainJobComplete) ||
		meta.IsStatusConditionTrue(job.Status.Conditions, trainer.TrainJobFailed)
}

func setCondition(job *trainer.TrainJob, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&job.Status.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: job.Generation,
	})
}
