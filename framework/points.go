package framework

// The runs of the extension points: each calls the plugins that take part
// in a TrainJob, in order, under their failure policies, and checks what
// they answer.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// Validate runs the Validate point of the plugins that take part in the
// job. A policy key that no plugin owns is a field error on the runtime
// reference; a plugin that fails under Fail rejects the job with its error.
func (f *Framework) Validate(ctx context.Context, info *Info, oldJob, newJob *trainer.TrainJob) ([]string, field.ErrorList) {
	c := call{f: f, job: newJob, point: PointValidate}
	var warnings []string
	plugins, err := c.participants(ctx, info)
	var notStarted *NotStartedError
	if errors.As(err, &notStarted) {
		// The plugin may start later: admit the job, which waits for it.
		warnings = append(warnings, "spec.runtimeRef: the runtime's "+err.Error()+"; the TrainJob waits for it")
		err = nil
	}
	if err != nil {
		var perr *PluginError
		if errors.As(err, &perr) {
			return nil, field.ErrorList{field.InternalError(field.NewPath("spec", "runtimeRef"), err)}
		}
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "runtimeRef"), newJob.Spec.RuntimeRef.Name, "the runtime's "+err.Error())}
	}
	var errs field.ErrorList
	for _, p := range plugins {
		if !p.desc.Implements(PointValidate) {
			continue
		}
		var w []string
		var e field.ErrorList
		ignored, err := c.run(ctx, p, PointValidate, func() error {
			var err error
			w, e, err = validate(ctx, p.plugin.(Validator), info, oldJob, newJob)
			return err
		})
		switch {
		case err != nil:
			errs = append(errs, field.InternalError(field.NewPath("spec"), err))
		case ignored:
			warnings = append(warnings, fmt.Sprintf("plugin %s was skipped (failurePolicy Ignore): its Validate call failed", p.name))
		default:
			for _, msg := range w {
				warnings = append(warnings, p.name+": "+msg)
			}
			for _, fe := range e {
				if fe != nil && fe.Field == "" {
					// A rejection must say where: the TrainJob's spec,
					// and whose rule it is.
					fe.Field = "spec"
					fe.Detail = fmt.Sprintf("%s (plugin %s named no field)", fe.Detail, p.name)
				}
			}
			errs = append(errs, e...)
		}
	}
	return warnings, errs
}

// FallibleValidator is implemented by validators whose call itself can
// fail (external plugins): the runner calls ValidateCall instead of
// Validate and applies the plugin's failure policy to the error.
type FallibleValidator interface {
	ValidateCall(ctx context.Context, info *Info, oldJob, newJob *trainer.TrainJob) ([]string, field.ErrorList, error)
}

func validate(ctx context.Context, v Validator, info *Info, oldJob, newJob *trainer.TrainJob) ([]string, field.ErrorList, error) {
	if ce, ok := v.(FallibleValidator); ok {
		return ce.ValidateCall(ctx, info, oldJob, newJob)
	}
	w, e := v.Validate(ctx, info, oldJob, newJob)
	return w, e, nil
}

// Enforce runs EnforceMLPolicy, then EnforcePodGroupPolicy, on the plugins
// that take part in the job, changing info in place. The changes of a
// plugin whose failure is ignored are discarded.
func (f *Framework) Enforce(ctx context.Context, info *Info, job *trainer.TrainJob) error {
	ctx = WithEncodedTrainJob(ctx, job)
	c := call{f: f, job: job, point: PointEnforceMLPolicy}
	plugins, err := c.participants(ctx, info)
	if err != nil {
		return err
	}
	for _, p := range plugins {
		if !p.desc.Implements(PointEnforceMLPolicy) {
			continue
		}
		if err := c.enforce(ctx, p, PointEnforceMLPolicy, info, func(i *Info) error {
			return p.plugin.(MLPolicyEnforcer).EnforceMLPolicy(ctx, i, job)
		}); err != nil {
			return err
		}
	}
	// Counts and containers may have changed: derive endpoints and
	// per-pod requests again before gang plugins read them.
	if err := RefreshDerived(info, job.Name); err != nil {
		return err
	}
	for _, p := range plugins {
		if !p.desc.Implements(PointEnforcePodGroupPolicy) {
			continue
		}
		if err := c.enforce(ctx, p, PointEnforcePodGroupPolicy, info, func(i *Info) error {
			return p.plugin.(PodGroupPolicyEnforcer).EnforcePodGroupPolicy(ctx, i, job)
		}); err != nil {
			return err
		}
	}
	return nil
}

// enforce runs one Enforce call. A plugin under Ignore works on a copy,
// kept only when the call succeeds, so that a failure leaves no trace.
func (c call) enforce(ctx context.Context, p participant, point ExtensionPoint, info *Info, fn func(*Info) error) error {
	target := info
	if p.ignores() {
		var err error
		if target, err = info.Copy(); err != nil {
			return err
		}
	}
	ignored, err := c.run(ctx, p, point, func() error { return fn(target) })
	if err != nil || ignored {
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
}

// Build runs every builder that takes part in the job, in order, and checks
// what each returns: an object must be of a kind the plugin declared, in
// the TrainJob's namespace, and named. The runner then sets the owner
// reference and the managed-by labels itself. A failed check is the
// plugin's failure, under its failure policy.
func (f *Framework) Build(ctx context.Context, info *Info, job *trainer.TrainJob) ([]BuiltObject, error) {
	ctx = WithEncodedTrainJob(ctx, job)
	c := call{f: f, job: job, point: PointBuild}
	plugins, err := c.participants(ctx, info)
	if err != nil {
		return nil, err
	}
	owner := metav1.OwnerReference{
		APIVersion:         trainer.GroupVersion.String(),
		Kind:               trainer.TrainJobKind,
		Name:               job.Name,
		UID:                job.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
	var out []BuiltObject
	for _, p := range plugins {
		if !p.desc.Implements(PointBuild) {
			continue
		}
		var objs []*unstructured.Unstructured
		ignored, err := c.run(ctx, p, PointBuild, func() error {
			var err error
			if objs, err = p.plugin.(Builder).Build(ctx, info, job); err != nil {
				return err
			}
			for _, obj := range objs {
				if err := checkBuilt(p.desc, obj, job.Namespace); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if ignored {
			continue
		}
		for _, obj := range objs {
			obj.SetOwnerReferences([]metav1.OwnerReference{owner})
			labels := obj.GetLabels()
			MergeMap(&labels, map[string]string{TrainJobNameLabel: job.Name, ManagedByLabel: ManagedByValue})
			obj.SetLabels(labels)
			out = append(out, BuiltObject{Plugin: p.name, Object: obj})
		}
	}
	return out, nil
}

func checkBuilt(desc Description, obj *unstructured.Unstructured, namespace string) error {
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

// PluginWatchSource is a kind to watch and the plugin that asked for it.
type PluginWatchSource struct {
	WatchSource
	Plugin string
}

// WatchSources returns the kinds the controller must watch: every kind a
// plugin builds (mapped through its owner) and every kind a plugin declares
// through Watch, without duplicates, in plugin order. Supervised plugins
// that never started are left out; call it again once they have. A failed
// Watch of a plugin under Ignore leaves out only that plugin's extra
// watches.
func (f *Framework) WatchSources(ctx context.Context) ([]PluginWatchSource, error) {
	var out []PluginWatchSource
	add := func(plugin string, w WatchSource) {
		if !slices.ContainsFunc(out, func(o PluginWatchSource) bool { return o.WatchSource == w }) {
			out = append(out, PluginWatchSource{WatchSource: w, Plugin: plugin})
		}
	}
	for _, p := range f.enabled() {
		d, known := p.description()
		if !known {
			continue
		}
		for _, gvk := range d.Builds {
			add(p.name, WatchSource{Kind: gvk, Mapping: MapByOwner})
		}
		if !d.Implements(PointWatch) {
			continue
		}
		sources, err := p.plugin.(Watcher).Watch(ctx)
		if err != nil {
			if p.ignores() {
				// Its other calls go on; only its extra watches are missing.
				pluginIgnored.WithLabelValues(p.name, string(PointWatch)).Inc()
				continue
			}
			return nil, pluginError(p.name, PointWatch, err)
		}
		for i, s := range sources {
			if s.Kind.Version == "" || s.Kind.Kind == "" {
				return nil, pluginError(p.name, PointWatch, fmt.Errorf("watch %d (group %q, version %q, kind %q): a watched kind needs a version and a kind, such as version v1 and kind Pod", i, s.Kind.Group, s.Kind.Version, s.Kind.Kind))
			}
			if s.Mapping != MapByOwner && (s.Mapping != MapByLabel || s.Label == "") {
				return nil, pluginError(p.name, PointWatch, fmt.Errorf("watch of %s: mapping must be %q, or %q with a label", kindString(s.Kind), MapByOwner, MapByLabel))
			}
			add(p.name, s)
		}
	}
	return out, nil
}

// OwnedLister returns the objects of a kind that a TrainJob owns.
type OwnedLister func(ctx context.Context, gvk schema.GroupVersionKind) ([]*unstructured.Unstructured, error)

// Status asks every status reporter that takes part in the job for the
// TrainJob's status, passing it the owned objects of the kinds it builds.
// Later plugins' conditions replace earlier ones of the same type; it
// returns nil when no plugin reports anything.
//
// info may be nil when the runtime is gone: every reporter is then asked,
// and each sees only owned objects of the kinds it builds, so a plugin
// that took no part has nothing to report.
func (f *Framework) Status(ctx context.Context, info *Info, job *trainer.TrainJob, list OwnedLister) (*trainer.TrainJobStatus, error) {
	ctx = WithEncodedTrainJob(ctx, job)
	c := call{f: f, job: job, point: PointStatus}
	var plugins []participant
	if info != nil {
		var err error
		if plugins, err = c.participants(ctx, info); err != nil {
			return nil, err
		}
	} else {
		for _, p := range f.enabled() {
			if d, known := p.description(); known {
				plugins = append(plugins, participant{enabledPlugin: p, desc: d})
			}
		}
	}
	var out *trainer.TrainJobStatus
	for _, p := range plugins {
		if !p.desc.Implements(PointStatus) {
			continue
		}
		var owned []*unstructured.Unstructured
		for _, gvk := range p.desc.Builds {
			objs, err := list(ctx, gvk)
			if err != nil {
				return nil, pluginError(p.name, PointStatus, err)
			}
			owned = append(owned, objs...)
		}
		var st *trainer.TrainJobStatus
		ignored, err := c.run(ctx, p, PointStatus, func() error {
			var err error
			st, err = p.plugin.(StatusReporter).Status(ctx, job, owned)
			return err
		})
		if err != nil {
			return nil, err
		}
		if ignored || st == nil {
			continue
		}
		if out == nil {
			out = &trainer.TrainJobStatus{}
		}
		for _, c := range st.Conditions {
			out.Conditions = slices.DeleteFunc(out.Conditions, func(o metav1.Condition) bool { return o.Type == c.Type })
			out.Conditions = append(out.Conditions, c)
		}
		if st.JobsStatus != nil {
			out.JobsStatus = st.JobsStatus
		}
		if st.Restarts != nil {
			out.Restarts = st.Restarts
		}
	}
	return out, nil
}
