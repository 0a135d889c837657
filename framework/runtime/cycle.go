package runtime

// The runs of the extension points. A Cycle is one TrainJob's pass through
// a plugin set: the plugins that take part in it are chosen once, from the
// runtime's policy keys, and each phase calls them in order, under their
// failure policies, checks what they answer and returns its result; the
// cycle keeps the failures it ignored (Cycle.Ignored).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/fieldpath"
)

// Cycle is one TrainJob's pass through a plugin set: per-reconcile state
// computed once (the runtime's policy keys, the plugins that take part in
// each phase) and handed from phase to phase, as kube-scheduler's
// CycleState carries PreFilter's work to Filter.
type Cycle struct {
	set  *PluginSet
	job  *trainer.TrainJob
	keys framework.PolicyKeys

	mlEnforcers []entry[framework.MLPolicyEnforcer]
	pgEnforcers []entry[framework.PodGroupPolicyEnforcer]
	builders    []entry[framework.Builder]
	reporters   []entry[framework.StatusReporter]

	// ignored are the failures that Ignore policies skipped in the
	// phases run so far.
	ignored Ignored
}

// NewCycle starts the pass of job, whose runtime sets keys, through the
// set. It fails when a key is owned by no plugin (an
// *UnownedPolicyKeyError, or a *NotStartedError while a plugin that may own
// it has not started).
func (s *PluginSet) NewCycle(job *trainer.TrainJob, keys framework.PolicyKeys) (*Cycle, error) {
	if err := s.checkKeys(keys); err != nil {
		return nil, err
	}
	c := &Cycle{set: s, job: job}
	c.choose(keys)
	return c, nil
}

// NewCycleWithoutRuntime starts the pass of a job whose runtime is not
// known (it was deleted, and the job has no snapshot): every described
// status reporter is asked, and each sees only the owned objects of the
// kinds it builds, so one that took no part has nothing to report. Only
// Status may be called on it, with no Info.
func (s *PluginSet) NewCycleWithoutRuntime(job *trainer.TrainJob) *Cycle {
	return &Cycle{set: s, job: job, reporters: s.reporters}
}

// choose picks the plugins that take part in a job with keys.
func (c *Cycle) choose(keys framework.PolicyKeys) {
	c.keys = keys
	c.mlEnforcers = takingPart(c.set.mlEnforcers, keys)
	c.pgEnforcers = takingPart(c.set.pgEnforcers, keys)
	c.builders = takingPart(c.set.builders, keys)
	c.reporters = takingPart(c.set.reporters, keys)
}

func takingPart[T any](list []entry[T], keys framework.PolicyKeys) []entry[T] {
	var out []entry[T]
	for _, e := range list {
		if e.desc.TakesPart(keys) {
			out = append(out, e)
		}
	}
	return out
}

// Keys are the policy keys the cycle's plugins were chosen by.
func (c *Cycle) Keys() framework.PolicyKeys { return c.keys }

// Ignored are the failures that the plugins' Ignore policies skipped in
// the phases run so far, in the order they happened: the caller reports
// them (the controller as Warning Events) once, whichever phase failed.
func (c *Cycle) Ignored() Ignored { return c.ignored }

// Shapers names, in configuration order, the plugins that enforce one of
// the job's policies or build its objects: what a user wants to know of
// "which plugins ran for my job".
func (c *Cycle) Shapers() []string {
	var out []string
	for _, m := range c.set.members {
		if slices.ContainsFunc(c.mlEnforcers, func(e entry[framework.MLPolicyEnforcer]) bool { return e.member == m }) ||
			slices.ContainsFunc(c.pgEnforcers, func(e entry[framework.PodGroupPolicyEnforcer]) bool { return e.member == m }) ||
			slices.ContainsFunc(c.builders, func(e entry[framework.Builder]) bool { return e.member == m }) {
			out = append(out, m.name)
		}
	}
	return out
}

// run calls one plugin's extension point, counts it and applies the
// plugin's failure policy: under Ignore a failure is added to ignored and
// run reports it skipped instead of returning it. A plugin that gave no
// answer of its own (an *UnavailableError) has none to skip: in the points of a
// reconcile it is returned under Ignore too, so that the TrainJob is
// retried. Admission (Validate) and the watches (Watch) are not a
// reconcile: a denied create would depend on other TrainJobs' load as
// much, and the reconcile that follows waits for the plugin.
func run(m *member, point framework.ExtensionPoint, ignored *Ignored, fn func() error) (skipped bool, err error) {
	start := time.Now()
	err = fn()
	observeCall(m.name, point, time.Since(start), err)
	if err == nil {
		return false, nil
	}
	perr, ok := err.(*framework.PluginError)
	if !ok {
		perr = &framework.PluginError{Plugin: m.name, Point: point, Err: err}
	}
	if !m.ignores() || (framework.IsUnavailable(err) && point != framework.PointValidate && point != framework.PointWatch) {
		return false, perr
	}
	*ignored = ignored.add(perr)
	return true, nil
}

// Validate runs the Validate point of the plugins that take part in the
// job of info. A policy key that no plugin owns is a field error on the
// runtime reference; a plugin that fails under Fail rejects the job with
// its error, one under Ignore adds a warning.
func (s *PluginSet) Validate(ctx context.Context, req framework.ValidateRequest) ([]string, field.ErrorList) {
	if req.Kind == "" {
		req.Kind = framework.ValidateTrainJob
	}
	info, newJob := req.Info, req.NewJob
	runtimeRef := field.NewPath("spec", "runtimeRef")
	keys, err := info.PolicyKeys()
	if err != nil {
		return nil, field.ErrorList{field.Invalid(runtimeRef, newJob.Spec.RuntimeRef.Name, "the runtime's "+err.Error())}
	}
	var warnings []string
	var ignored Ignored
	err = s.checkKeys(keys)
	var notStarted *NotStartedError
	if errors.As(err, &notStarted) {
		// The plugin may start later: admit the job, which waits for it.
		warnings = append(warnings, "spec.runtimeRef: the runtime's "+err.Error()+"; the TrainJob waits for it")
		err = nil
	}
	if err != nil {
		return nil, field.ErrorList{field.Invalid(runtimeRef, newJob.Spec.RuntimeRef.Name, "the runtime's "+err.Error())}
	}
	var errs field.ErrorList
	for _, v := range takingPart(s.validators, keys) {
		var w []string
		var e field.ErrorList
		skipped, err := run(v.member, framework.PointValidate, &ignored, func() error {
			var err error
			w, e, err = v.impl.Validate(ctx, req)
			return err
		})
		switch {
		case err != nil:
			errs = append(errs, field.InternalError(field.NewPath("spec"), err))
		case skipped:
			warnings = append(warnings, fmt.Sprintf("plugin %s was skipped (failurePolicy Ignore): its Validate call failed", v.name))
		default:
			for _, msg := range w {
				warnings = append(warnings, v.name+": "+msg)
			}
			for _, fe := range e {
				if fe != nil && fe.Field == "" {
					// A rejection must say where: the TrainJob's spec,
					// and whose rule it is.
					fe.Field = "spec"
					fe.Detail = fmt.Sprintf("%s (plugin %s named no field)", fe.Detail, v.name)
				}
			}
			errs = append(errs, e...)
		}
	}
	return warnings, errs
}

// Enforce runs EnforceMLPolicy, then EnforcePodGroupPolicy, on the plugins
// that take part in the job, changing info in place. The changes of a
// plugin whose failure is ignored are discarded.
//
// An enforcer may change the runtime's policies in info: the builders and
// status reporters are then chosen again by the keys it left.
func (c *Cycle) Enforce(ctx context.Context, info *framework.Info) error {
	before := info.RuntimePolicy
	for _, e := range c.mlEnforcers {
		if err := enforce(e.member, framework.PointEnforceMLPolicy, info, &c.ignored, func(i *framework.Info) error {
			return e.impl.EnforceMLPolicy(ctx, i, c.job)
		}); err != nil {
			return err
		}
	}
	// Counts and containers may have changed: derive endpoints and
	// per-pod requests again before gang plugins read them.
	if err := framework.RefreshDerived(info, c.job.Name); err != nil {
		return err
	}
	for _, e := range c.pgEnforcers {
		if err := enforce(e.member, framework.PointEnforcePodGroupPolicy, info, &c.ignored, func(i *framework.Info) error {
			return e.impl.EnforcePodGroupPolicy(ctx, i, c.job)
		}); err != nil {
			return err
		}
	}
	if bytes.Equal(before.MLPolicy, info.RuntimePolicy.MLPolicy) && bytes.Equal(before.PodGroupPolicy, info.RuntimePolicy.PodGroupPolicy) {
		return nil
	}
	keys, err := info.PolicyKeys()
	if err != nil {
		return err
	}
	if !keys.Equal(c.keys) {
		if err := c.set.checkKeys(keys); err != nil {
			return err
		}
		c.choose(keys)
	}
	return nil
}

// enforce runs one Enforce call. A plugin under Ignore works on a copy,
// kept only when the call succeeds, so that a failure leaves no trace.
func enforce(m *member, point framework.ExtensionPoint, info *framework.Info, ignored *Ignored, fn func(*framework.Info) error) error {
	target := info
	if m.ignores() {
		var err error
		if target, err = info.Copy(); err != nil {
			return err
		}
	}
	skipped, err := run(m, point, ignored, func() error { return fn(target) })
	if err != nil || skipped {
		return err
	}
	if target != info {
		*info = *target
	}
	return nil
}

// BuiltObject is an object built by one plugin.
type BuiltObject struct {
	Plugin string
	Object *unstructured.Unstructured
	// CreateOnce: the host creates the object once and never updates it
	// (Object.CreateOnce).
	CreateOnce bool
	// Live are the fields the host may change while the object runs
	// (Object.Live); nil for none.
	Live *framework.LiveFields
}

// Build runs every builder that takes part in the job, in order, and checks
// what each returns: an object must be of a kind the plugin declared, in
// the TrainJob's namespace, and named. The framework then sets the owner
// reference and the managed-by labels itself. A failed check is the
// plugin's failure, under its failure policy.
func (c *Cycle) Build(ctx context.Context, info *framework.Info) ([]BuiltObject, error) {
	owner := metav1.OwnerReference{
		APIVersion:         trainer.GroupVersion.String(),
		Kind:               trainer.TrainJobKind,
		Name:               c.job.Name,
		UID:                c.job.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
	var out []BuiltObject
	for _, b := range c.builders {
		var objs []framework.Object
		skipped, err := run(b.member, framework.PointBuild, &c.ignored, func() error {
			var err error
			if objs, err = b.impl.Build(ctx, info, c.job); err != nil {
				return err
			}
			for _, obj := range objs {
				if err := checkBuilt(b.desc, obj.Unstructured, c.job.Namespace); err != nil {
					return err
				}
				if err := checkLive(obj); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if skipped {
			continue
		}
		for _, obj := range objs {
			obj.SetOwnerReferences([]metav1.OwnerReference{owner})
			labels := obj.GetLabels()
			framework.MergeMap(&labels, map[string]string{framework.TrainJobNameLabel: c.job.Name, framework.ManagedByLabel: framework.ManagedByValue})
			obj.SetLabels(labels)
			out = append(out, BuiltObject{Plugin: b.name, Object: obj.Unstructured, CreateOnce: obj.CreateOnce, Live: obj.Live})
		}
	}
	return out, nil
}

// checkLive checks that each live field of obj is a JSON pointer to a
// field that obj sets: the host writes the running object's from it.
func checkLive(obj framework.Object) error {
	if obj.Live == nil {
		return nil
	}
	if len(obj.Live.Paths) == 0 {
		return fmt.Errorf("%s %s: live fields without a path; list the fields the host may change while it runs, or leave Live nil", kindString(obj.GroupVersionKind()), obj.GetName())
	}
	for _, p := range obj.Live.Paths {
		_, ok, err := fieldpath.AtPointer(obj.Object, p)
		if err == nil && !ok {
			err = errors.New("the object does not set it")
		}
		if err != nil {
			return fmt.Errorf("%s %s: live field %s: %w", kindString(obj.GroupVersionKind()), obj.GetName(), p, err)
		}
	}
	return nil
}

func checkBuilt(desc framework.Description, obj *unstructured.Unstructured, namespace string) error {
	if obj == nil {
		return errors.New("built a nil object")
	}
	gvk := obj.GroupVersionKind()
	if !slices.Contains(desc.Builds, gvk) {
		declared := make([]string, 0, len(desc.Builds))
		for _, k := range desc.Builds {
			declared = append(declared, kindString(k))
		}
		if gvk.Version == "" {
			return fmt.Errorf("built an object without an apiVersion (kind %q); objects must be of a kind declared in Describe: %s", gvk.Kind, strings.Join(declared, ", "))
		}
		return fmt.Errorf("built a %s, a kind it did not declare in Describe (declared: %s)", kindString(gvk), strings.Join(declared, ", "))
	}
	if obj.GetName() == "" {
		return fmt.Errorf("built a %s without a name", kindString(gvk))
	}
	switch obj.GetNamespace() {
	case "":
		obj.SetNamespace(namespace)
	case namespace:
	default:
		return fmt.Errorf("built %s %q in namespace %q; objects must be in the TrainJob's namespace %q", kindString(gvk), obj.GetName(), obj.GetNamespace(), namespace)
	}
	return nil
}

func kindString(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + "/" + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + "/" + gvk.Kind
}

// OwnedLister returns the objects of a kind that a TrainJob owns.
type OwnedLister func(ctx context.Context, gvk schema.GroupVersionKind) ([]*unstructured.Unstructured, error)

// Status asks every status reporter that takes part in the job for its
// report of the TrainJob's status, passing it info, the Info the job's
// objects were built from (as Build received it), or nil when the caller
// has none, and the owned objects of the kinds it builds. It returns the
// reports in plugin order, for framework.ApplyTo, which merges them (a
// later plugin's condition replaces an earlier one's of the same type);
// none when no plugin reports anything.
func (c *Cycle) Status(ctx context.Context, info *framework.Info, list OwnedLister) ([]*framework.StatusReport, error) {
	var out []*framework.StatusReport
	for _, r := range c.reporters {
		var owned []*unstructured.Unstructured
		for _, gvk := range r.desc.Builds {
			objs, err := list(ctx, gvk)
			if err != nil {
				return nil, &framework.PluginError{Plugin: r.name, Point: framework.PointStatus, Err: err}
			}
			owned = append(owned, objs...)
		}
		var report *framework.StatusReport
		skipped, err := run(r.member, framework.PointStatus, &c.ignored, func() error {
			var err error
			report, err = r.impl.Status(ctx, info, c.job, owned)
			return err
		})
		if err != nil {
			return nil, err
		}
		if !skipped && report != nil {
			out = append(out, report)
		}
	}
	return out, nil
}

// PluginWatchSource is a kind to watch and the plugin that asked for it.
type PluginWatchSource struct {
	framework.WatchSource
	Plugin string
}

// WatchSources returns the kinds the controller must watch: every kind a
// plugin builds (mapped through its owner) and every kind a plugin declares
// through Watch, without duplicates, in plugin order. Supervised plugins
// that never started are left out: a set compiled after their start has
// them. A failed Watch of a plugin under Ignore leaves out only that
// plugin's extra watches.
func (s *PluginSet) WatchSources(ctx context.Context) ([]PluginWatchSource, Ignored, error) {
	var out []PluginWatchSource
	// declared marks the sources of out whose Omit a plugin's Watch set;
	// a kind watched only because a plugin builds it omits nothing, until
	// a Watch says what.
	var declared []bool
	add := func(plugin string, w framework.WatchSource, watched bool) {
		i := slices.IndexFunc(out, func(o PluginWatchSource) bool { return o.Key() == w.Key() })
		if i < 0 {
			out = append(out, PluginWatchSource{WatchSource: w, Plugin: plugin})
			declared = append(declared, watched)
			return
		}
		if !watched {
			return
		}
		// What one plugin reads, no other may take from the cache: a
		// field is omitted only when every Watch of the kind omits it.
		if !declared[i] {
			out[i].Omit, declared[i] = slices.Clone(w.Omit), true
			return
		}
		out[i].Omit = slices.DeleteFunc(out[i].Omit, func(p string) bool { return !slices.Contains(w.Omit, p) })
	}
	var ignored Ignored
	watchers := s.watchers
	for _, m := range s.members {
		for _, gvk := range m.desc.Builds {
			add(m.name, framework.WatchSource{Kind: gvk, Mapping: framework.MapByOwner}, false)
		}
		if len(watchers) == 0 || watchers[0].member != m {
			continue
		}
		w := watchers[0]
		watchers = watchers[1:]
		var sources []framework.WatchSource
		skipped, err := run(m, framework.PointWatch, &ignored, func() error {
			var err error
			sources, err = w.impl.Watch(ctx)
			return err
		})
		if err != nil {
			return nil, ignored, err
		}
		if skipped {
			// Its other calls go on; only its extra watches are missing.
			continue
		}
		// A malformed watch fails whatever the policy: the controller
		// cannot watch it, and skipping it would hide the plugin's bug.
		for i, src := range sources {
			if src.Kind.Version == "" || src.Kind.Kind == "" {
				return nil, ignored, &framework.PluginError{Plugin: m.name, Point: framework.PointWatch, Err: fmt.Errorf("watch %d (group %q, version %q, kind %q): a watched kind needs a version and a kind, such as version v1 and kind Pod", i, src.Kind.Group, src.Kind.Version, src.Kind.Kind)}
			}
			if src.Mapping != framework.MapByOwner && (src.Mapping != framework.MapByLabel || src.Label == "") {
				return nil, ignored, &framework.PluginError{Plugin: m.name, Point: framework.PointWatch, Err: fmt.Errorf("watch of %s: mapping must be %q, or %q with a label", kindString(src.Kind), framework.MapByOwner, framework.MapByLabel)}
			}
			for _, p := range src.Omit {
				if _, err := fieldpath.Parse(p); err != nil {
					return nil, ignored, &framework.PluginError{Plugin: m.name, Point: framework.PointWatch, Err: fmt.Errorf("watch of %s: omit: %w", kindString(src.Kind), err)}
				}
			}
			add(m.name, src, true)
		}
	}
	return out, ignored, nil
}
