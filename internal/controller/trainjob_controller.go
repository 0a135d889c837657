// Package controller holds the TrainJob reconciler: it resolves a
// TrainJob's runtime, runs the plugin phases, applies what the plugins build
// and reports their status back onto the TrainJob.
package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	"github.com/trainforge/trainforge/internal/cacheomit"
	"github.com/trainforge/trainforge/internal/runtimeref"
)

// DesiredHashAnnotation records the hash of the state the controller last
// applied to an object, so that an unchanged desired state is not applied
// again.
const DesiredHashAnnotation = "trainforge.dev/desired-state-hash"

// FieldManagerPrefix prefixes the field manager of each building plugin.
const FieldManagerPrefix = "trainforge-"

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
	Framework *framework.Framework
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

	// recent holds TrainJobs whose status update the cache has not seen
	// yet.
	recent recentWrites
	// memo lets a reconcile whose inputs did not change skip the plugins.
	memo buildMemo
	// gone holds the last state of the TrainJobs' deleted objects.
	gone goneObjects
	// created holds the objects just created, whose creation event
	// need not reconcile their TrainJob again.
	created ownCreations

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
			r.recent.forget(req.NamespacedName)
			r.forgetBuild(req.NamespacedName)
			r.gone.take(req.NamespacedName)
			// Its objects go with it: nothing reads their last state.
			return ctrl.Result{}, r.releaseDeleted(ctx, req.NamespacedName, releaseAll)
		}
		return ctrl.Result{}, err
	}
	job = r.recent.fresher(job)
	if !job.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.releaseDeleted(ctx, req.NamespacedName, releaseAll)
	}
	if !job.IsManagedByUs() {
		return ctrl.Result{}, nil
	}
	gone := r.gone.take(req.NamespacedName)
	if isFinished(job) {
		if err := r.followFinished(ctx, job); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.releaseDeleted(ctx, req.NamespacedName, releaseAll); err != nil {
			return ctrl.Result{}, err
		}
		return r.expireAfterFinished(ctx, job)
	}
	if len(gone) > 0 {
		// An object of the job was deleted without StatusFinalizer (one
		// built before it, or left running since): if it had finished, the
		// job has, even if no reconcile saw it, and is not built again.
		finished, err := r.finishedWhenGone(ctx, job, gone)
		if err != nil {
			r.gone.restore(req.NamespacedName, gone)
			return ctrl.Result{}, err
		}
		if finished {
			if err := r.releaseDeleted(ctx, req.NamespacedName, releaseAll); err != nil {
				return ctrl.Result{}, err
			}
			return r.expireAfterFinished(ctx, job)
		}
	}
	log := log.FromContext(ctx)
	original := job.DeepCopy()

	// All phases of this reconcile run with the same plugins, even if the
	// configuration is reloaded meanwhile.
	p := &pass{plugins: r.Framework.Current()}
	result, reconcileErr := r.reconcile(ctx, p, job)
	r.recordIgnored(job, p.ignored)
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
	if p.reconcileAgain || (p.skipsCreations && len(p.ignored) > 0) {
		// In place of the creation event that does not reconcile: a
		// plugin whose failure was skipped is tried again next time, and
		// that event was the next time of a new TrainJob.
		result.RequeueAfter = time.Millisecond
	}
	return result, nil
}

// pass is one reconcile of one TrainJob: the plugin set it runs with, and
// the plugin failures that Ignore policies skipped in it, and what its
// status plugins read.
type pass struct {
	plugins *framework.PluginSet
	ignored framework.Ignored
	// reads are the objects the status plugins read, once they have.
	reads *statusReads
	// resizes are the live fields of running objects written, or
	// refused, in this pass.
	resizes []*resize
	// reconcileAgain is set when an event held back for this pass turned
	// out to be news (ownCreations.answered).
	reconcileAgain bool
	// skipsCreations is set when an object this pass created will not
	// reconcile the TrainJob again by its creation (ownCreations).
	skipsCreations bool
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
		return ctrl.Result{}, r.updateStatus(ctx, p, p.plugins.NewCycleWithoutRuntime(job), nil, job, nil)
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

	cycle, info, message, written, err := r.build(ctx, p, job, desired, spec)
	if err != nil {
		return ctrl.Result{}, r.buildFailed(job, err)
	}
	setCondition(job, trainer.TrainJobCreated, metav1.ConditionTrue, trainer.TrainJobJobsCreatedReason, message)

	if desired.IsSuspended() {
		setCondition(job, trainer.TrainJobSuspended, metav1.ConditionTrue, trainer.TrainJobSuspendedReason, "The TrainJob is suspended")
	} else if c := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobSuspended); c != nil && c.Status == metav1.ConditionTrue {
		setCondition(job, trainer.TrainJobSuspended, metav1.ConditionFalse, trainer.TrainJobResumedReason, "The TrainJob is resumed")
	}

	if err := r.updateStatus(ctx, p, cycle, info, job, written); err != nil {
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
// were left. It returns the cycle and the Info the objects were built from
// (as Build received it, or as the memo kept it), for the status plugins,
// the Created condition's message, and the objects it applied, as the API
// server answered.
func (r *TrainJobReconciler) build(ctx context.Context, p *pass, job, desired *trainer.TrainJob, spec *trainer.TrainingRuntimeSpec) (*framework.Cycle, *framework.Info, string, []*unstructured.Unstructured, error) {
	key, memoable := memoKey(job, desired, p.plugins)
	if memoable {
		if e, ok := r.lookupMemo(ctx, job, key); ok {
			for _, o := range e.objects {
				objectApplies.WithLabelValues(o.plugin, o.gvk.Kind, applyResultUnchanged).Inc()
			}
			cycle, err := p.cycle(desired, e.keys)
			return cycle, e.info, e.message, nil, err
		}
	}
	info, err := framework.NewInfo(desired, spec, framework.WithRuntimeClassOverhead(r.runtimeClassOverhead(ctx)))
	if err != nil {
		return nil, nil, "", nil, err
	}
	keys, err := info.PolicyKeys()
	if err != nil {
		return nil, nil, "", nil, &framework.InvalidJobError{Err: err}
	}
	cycle, err := p.cycle(desired, keys)
	if err != nil {
		return nil, nil, "", nil, err
	}
	ignored, err := cycle.Enforce(ctx, info)
	p.ignored = append(p.ignored, ignored...)
	if err != nil {
		return nil, nil, "", nil, err
	}
	objects, ignored, err := cycle.Build(ctx, info)
	p.ignored = append(p.ignored, ignored...)
	if err != nil {
		return nil, nil, "", nil, err
	}
	entry := memoEntry{key: key, message: createdMessage(objects, cycle.Shapers()), keys: cycle.Keys(), info: info}
	var written []*unstructured.Unstructured
	for _, o := range applyOrder(objects) {
		hash, answered, err := r.apply(ctx, p, o)
		if err != nil {
			return nil, nil, "", nil, err
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
	if memoable && len(p.ignored) == 0 && !slices.ContainsFunc(p.resizes, func(r *resize) bool { return r.refused != nil }) {
		r.rememberBuild(job, entry)
	}
	return cycle, info, entry.message, written, nil
}

// cycle starts the job's pass through the plugins that take part in it.
func (p *pass) cycle(job *trainer.TrainJob, keys framework.PolicyKeys) (*framework.Cycle, error) {
	cycle, ignored, err := p.plugins.NewCycle(job, keys)
	p.ignored = append(p.ignored, ignored...)
	return cycle, err
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
	snap, err := runtimeref.Resolve(ctx, r.Client, job)
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

// updateStatus sets the conditions and jobsStatus that the status plugins
// of the cycle report from the TrainJob's objects and info, the Info they
// were built from (nil when the runtime is not known). written are the
// objects this reconcile just applied, which the cache may not hold yet:
// without them the first status write would not see the JobSet, and a
// second one would follow as soon as the cache did.
func (r *TrainJobReconciler) updateStatus(ctx context.Context, p *pass, cycle *framework.Cycle, info *framework.Info, job *trainer.TrainJob, written []*unstructured.Unstructured) error {
	reads := &statusReads{}
	st, ignored, err := cycle.Status(ctx, info, r.ownedLister(job, written, reads))
	p.ignored = append(p.ignored, ignored...)
	if err != nil {
		return err
	}
	if len(ignored) == 0 {
		// A status plugin whose failure was skipped read nothing: what
		// it would have read is kept for the next try.
		p.reads = reads
	}
	if st != nil {
		mergeStatus(job, st)
	}
	return nil
}

// followFinished keeps the jobsStatus of a finished TrainJob counting its
// Jobs, and changes nothing else: a JobSet deletes the Jobs still active
// when it finishes (an MPI job's workers, once its launcher succeeded)
// after the status write that finished the TrainJob.
func (r *TrainJobReconciler) followFinished(ctx context.Context, job *trainer.TrainJob) error {
	// Only the Jobs' counts are read: the Info a build would take is
	// not needed.
	cycle := r.Framework.Current().NewCycleWithoutRuntime(runtimeref.WithoutSnapshot(job))
	st, ignored, err := cycle.Status(ctx, nil, r.ownedLister(job, nil, nil))
	r.recordIgnored(job, ignored)
	if err != nil || st == nil || st.JobsStatus == nil {
		return err
	}
	before := job.DeepCopy()
	job.Status.JobsStatus = st.JobsStatus
	if _, err := r.writeStatus(ctx, before, job); err != nil {
		return fmt.Errorf("updating the jobsStatus of a finished TrainJob: %w", err)
	}
	return nil
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

// apply server-side applies one built object with the building plugin as
// field manager, unless the object already carries the hash of the same
// desired state. answered says whether it applied and o.Object then holds
// the object as the API server does (only its metadata taken from the
// answer when it was created: createByApply).
func (r *TrainJobReconciler) apply(ctx context.Context, p *pass, o framework.BuiltObject) (hash string, answered bool, err error) {
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
		if err := r.writeLive(ctx, p, o, current); err != nil {
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
		if err := r.writeLive(ctx, p, o, current); err != nil {
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

// writeLive writes the live fields of current that differ from o's, and
// records the resize in the pass.
func (r *TrainJobReconciler) writeLive(ctx context.Context, p *pass, o framework.BuiltObject, current client.Object) error {
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
func (r *TrainJobReconciler) createOnce(ctx context.Context, o framework.BuiltObject, getErr error) error {
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

// ownedLister lists, from the cache, the objects of a kind that the
// TrainJob controls, and adds those of written that the cache does not
// hold yet. What it returns is recorded in reads, when not nil.
func (r *TrainJobReconciler) ownedLister(job *trainer.TrainJob, written []*unstructured.Unstructured, reads *statusReads) framework.OwnedLister {
	return func(ctx context.Context, gvk schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
		objs, err := r.listControlledBy(ctx, client.ObjectKeyFromObject(job), gvk)
		if err != nil {
			return nil, err
		}
		var out []*unstructured.Unstructured
		for _, o := range objs {
			if !metav1.IsControlledBy(o, job) {
				continue
			}
			u, err := asUnstructured(o, gvk)
			if err != nil {
				return nil, err
			}
			out = append(out, u)
		}
		for _, w := range written {
			if w.GroupVersionKind() != gvk || !metav1.IsControlledBy(w, job) || slices.ContainsFunc(out, func(u *unstructured.Unstructured) bool {
				return u.GetName() == w.GetName()
			}) {
				continue
			}
			out = append(out, w)
		}
		reads.listed(gvk, out)
		return out, nil
	}
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

// recordTransitions emits one Event per condition that changed.
func (r *TrainJobReconciler) recordTransitions(before, after *trainer.TrainJob) {
	for _, c := range after.Status.Conditions {
		old := meta.FindStatusCondition(before.Status.Conditions, c.Type)
		if old != nil && old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			continue
		}
		// Running=False tells nothing another Event does not: every job
		// starts with its pods pending, and suspended, completed and
		// failed have Events of their own. One Event fewer per state of
		// every job spares the API server, and the recorder's rate limit.
		if c.Type == trainer.TrainJobRunning && c.Status != metav1.ConditionTrue {
			continue
		}
		// Nor does a TrainJob's first Created=True: every job that starts
		// has it, and the condition (its message names the objects, its
		// lastTransitionTime says when) and trainforge_trainjobs say it. It
		// was a third of the controller's writes in a burst, the only one
		// the design floor does not make. Created turning True again after
		// False (a failure fixed) keeps its Event, after the failure's
		// Warning.
		if c.Type == trainer.TrainJobCreated && c.Status == metav1.ConditionTrue && old == nil {
			continue
		}
		eventType := corev1.EventTypeNormal
		if (c.Type == trainer.TrainJobCreated && c.Status == metav1.ConditionFalse) || (c.Type == trainer.TrainJobFailed && c.Status == metav1.ConditionTrue) ||
			(c.Type == trainer.TrainJobResized && c.Status == metav1.ConditionFalse) {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(after, nil, eventType, c.Reason, c.Type, "%s", c.Message)
	}
	r.recordRestart(before.Status.Restarts, after)
}

// recordRestart emits a Restarted Event when the TrainJob's restart count
// grew, with the reason of the last restart.
func (r *TrainJobReconciler) recordRestart(before *trainer.RestartStatus, after *trainer.TrainJob) {
	now := after.Status.Restarts
	if now == nil || before != nil && before.Count >= now.Count {
		return
	}
	message := fmt.Sprintf("Restart %d (%d of them counted towards maxRestarts): %s", now.Count, now.CountedTowardsMax, now.LastReason)
	if now.LastMessage != "" {
		message += "; " + now.LastMessage
	}
	r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, trainer.RestartedEventReason, "Restart", "%s", message)
}

// PluginIgnoredReason is the reason of the Event recorded when a failure of
// a plugin with failure policy Ignore is skipped.
const PluginIgnoredReason = "PluginIgnored"

// recordIgnored records a Warning Event on the TrainJob for each plugin
// failure that the plugin's Ignore policy skipped.
func (r *TrainJobReconciler) recordIgnored(job *trainer.TrainJob, ignored framework.Ignored) {
	for _, err := range ignored {
		r.Recorder.Eventf(job, nil, corev1.EventTypeWarning, PluginIgnoredReason, string(err.Point), "%v; skipped (failurePolicy Ignore)", err)
	}
}
