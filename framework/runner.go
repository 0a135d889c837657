package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// Labels the runner sets on every built object.
const (
	// TrainJobNameLabel names the TrainJob an object was built for.
	TrainJobNameLabel = "trainer.kubeflow.org/trainjob-name"
	// ManagedByLabel marks objects built by Trainforge.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is ManagedByLabel's value.
	ManagedByValue = "trainforge"
)

// PluginSpec enables one plugin: its name and its args from the
// configuration file.
type PluginSpec struct {
	Name string
	Args json.RawMessage
}

// Framework runs the enabled plugins, in the configured order.
type Framework struct {
	plugins []enabledPlugin
}

type enabledPlugin struct {
	plugin Plugin
	desc   Description
}

// New creates and configures the plugins named in specs, in that order.
// An unknown name, a plugin whose Describe name differs from its entry, or
// args that a plugin rejects fail with an error naming the plugin.
func New(ctx context.Context, registry Registry, specs []PluginSpec) (*Framework, error) {
	f := &Framework{}
	for _, spec := range specs {
		factory, ok := registry[spec.Name]
		if !ok {
			return nil, fmt.Errorf("plugin %q is not registered (registered: %v)", spec.Name, registry.Names())
		}
		p := factory()
		desc := p.Describe()
		if desc.Name != spec.Name {
			return nil, fmt.Errorf("plugin %q describes itself as %q", spec.Name, desc.Name)
		}
		if c, ok := p.(Configurable); ok {
			if err := c.Configure(ctx, spec.Args); err != nil {
				return nil, pluginError(spec.Name, PointConfigure, err)
			}
		} else if len(spec.Args) > 0 && string(spec.Args) != "null" {
			return nil, pluginError(spec.Name, PointConfigure, errors.New("the plugin takes no args"))
		}
		f.plugins = append(f.plugins, enabledPlugin{plugin: p, desc: desc})
	}
	return f, nil
}

// Descriptions returns the enabled plugins' descriptions, in order.
func (f *Framework) Descriptions() []Description {
	out := make([]Description, 0, len(f.plugins))
	for _, p := range f.plugins {
		out = append(out, p.desc)
	}
	return out
}

// jobKeys are the policy keys a runtime sets.
type jobKeys struct {
	ml, podGroup []string
}

func keysOf(info *Info) (jobKeys, error) {
	ml, err := info.MLPolicy()
	if err != nil {
		return jobKeys{}, err
	}
	pg, err := info.PodGroupPolicy()
	if err != nil {
		return jobKeys{}, err
	}
	return jobKeys{ml: ml.Keys(), podGroup: pg.Keys()}, nil
}

func ownsAny(owned, keys []string) bool {
	if slices.Contains(owned, AnyPolicyKey) {
		return true
	}
	if len(keys) == 0 {
		return slices.Contains(owned, NoPolicyKey)
	}
	for _, k := range keys {
		if slices.Contains(owned, k) {
			return true
		}
	}
	return false
}

// takesPart reports whether a plugin runs for a job: a plugin that owns no
// key runs for every job, one that owns keys for the jobs that set one.
func (p enabledPlugin) takesPart(k jobKeys) bool {
	if len(p.desc.MLPolicyKeys) == 0 && len(p.desc.PodGroupPolicyKeys) == 0 {
		return true
	}
	return (len(p.desc.MLPolicyKeys) > 0 && ownsAny(p.desc.MLPolicyKeys, k.ml)) ||
		(len(p.desc.PodGroupPolicyKeys) > 0 && ownsAny(p.desc.PodGroupPolicyKeys, k.podGroup))
}

// participants returns the plugins that take part in a job, in order, after
// checking that every policy key the runtime sets is owned by one of them.
func (f *Framework) participants(info *Info) ([]enabledPlugin, error) {
	k, err := keysOf(info)
	if err != nil {
		return nil, err
	}
	if err := f.checkOwned("mlPolicy", k.ml, true, func(d Description) []string { return d.MLPolicyKeys }); err != nil {
		return nil, err
	}
	if err := f.checkOwned("podGroupPolicy", k.podGroup, false, func(d Description) []string { return d.PodGroupPolicyKeys }); err != nil {
		return nil, err
	}
	var out []enabledPlugin
	for _, p := range f.plugins {
		if p.takesPart(k) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (f *Framework) checkOwned(policy string, keys []string, needOwnerOfNone bool, owned func(Description) []string) error {
	ownedBySome := func(key string) bool {
		return slices.ContainsFunc(f.plugins, func(p enabledPlugin) bool { return slices.Contains(owned(p.desc), key) })
	}
	if len(keys) == 0 {
		if needOwnerOfNone && !ownedBySome(NoPolicyKey) {
			return fmt.Errorf("%s sets no framework key and no enabled plugin runs such jobs; enable PlainML in the configuration file", policy)
		}
		return nil
	}
	for _, key := range keys {
		if !ownedBySome(key) {
			return &UnownedPolicyKeyError{Policy: policy, Key: key}
		}
	}
	return nil
}

// CheckPolicyKeys returns an error naming the first policy key of the
// runtime that no enabled plugin owns.
func (f *Framework) CheckPolicyKeys(info *Info) error {
	_, err := f.participants(info)
	return err
}

// Validate runs the Validate point of the plugins that take part in the
// job. A policy key that no plugin owns is a field error on the runtime
// reference.
func (f *Framework) Validate(ctx context.Context, info *Info, oldJob, newJob *trainer.TrainJob) ([]string, field.ErrorList) {
	plugins, err := f.participants(info)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "runtimeRef"), newJob.Spec.RuntimeRef.Name, "the runtime's "+err.Error())}
	}
	var warnings []string
	var errs field.ErrorList
	for _, p := range plugins {
		v, ok := p.plugin.(Validator)
		if !ok {
			continue
		}
		w, e := v.Validate(ctx, info, oldJob, newJob)
		for _, msg := range w {
			warnings = append(warnings, p.desc.Name+": "+msg)
		}
		errs = append(errs, e...)
	}
	return warnings, errs
}

// Enforce runs EnforceMLPolicy, then EnforcePodGroupPolicy, on the plugins
// that take part in the job, changing info in place.
func (f *Framework) Enforce(ctx context.Context, info *Info, job *trainer.TrainJob) error {
	plugins, err := f.participants(info)
	if err != nil {
		return err
	}
	for _, p := range plugins {
		if e, ok := p.plugin.(MLPolicyEnforcer); ok {
			if err := e.EnforceMLPolicy(ctx, info, job); err != nil {
				return pluginError(p.desc.Name, PointEnforceMLPolicy, err)
			}
		}
	}
	// Counts and containers may have changed: derive endpoints and
	// per-pod requests again before gang plugins read them.
	if err := RefreshDerived(info, job.Name); err != nil {
		return err
	}
	for _, p := range plugins {
		if e, ok := p.plugin.(PodGroupPolicyEnforcer); ok {
			if err := e.EnforcePodGroupPolicy(ctx, info, job); err != nil {
				return pluginError(p.desc.Name, PointEnforcePodGroupPolicy, err)
			}
		}
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
// reference and the managed-by labels itself.
func (f *Framework) Build(ctx context.Context, info *Info, job *trainer.TrainJob) ([]BuiltObject, error) {
	plugins, err := f.participants(info)
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
		b, ok := p.plugin.(Builder)
		if !ok {
			continue
		}
		objs, err := b.Build(ctx, info, job)
		if err != nil {
			return nil, pluginError(p.desc.Name, PointBuild, err)
		}
		for _, obj := range objs {
			if err := checkBuilt(p.desc, obj, job.Namespace); err != nil {
				return nil, pluginError(p.desc.Name, PointBuild, err)
			}
			obj.SetOwnerReferences([]metav1.OwnerReference{owner})
			labels := obj.GetLabels()
			MergeMap(&labels, map[string]string{TrainJobNameLabel: job.Name, ManagedByLabel: ManagedByValue})
			obj.SetLabels(labels)
			out = append(out, BuiltObject{Plugin: p.desc.Name, Object: obj})
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
		return fmt.Errorf("built a %s, a kind it did not declare in Describe (declared: %v)", kindString(gvk), desc.Builds)
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

// WatchSources returns the kinds the controller must watch: every kind a
// plugin builds (mapped through its owner) and every kind a plugin declares
// through Watch, without duplicates, in plugin order.
func (f *Framework) WatchSources(ctx context.Context) ([]WatchSource, error) {
	var out []WatchSource
	add := func(w WatchSource) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	for _, p := range f.plugins {
		for _, gvk := range p.desc.Builds {
			add(WatchSource{Kind: gvk, Mapping: MapByOwner})
		}
		w, ok := p.plugin.(Watcher)
		if !ok {
			continue
		}
		sources, err := w.Watch(ctx)
		if err != nil {
			return nil, pluginError(p.desc.Name, PointWatch, err)
		}
		for _, s := range sources {
			if s.Mapping != MapByOwner && (s.Mapping != MapByLabel || s.Label == "") {
				return nil, pluginError(p.desc.Name, PointWatch, fmt.Errorf("watch of %s: mapping must be %q, or %q with a label", kindString(s.Kind), MapByOwner, MapByLabel))
			}
			add(s)
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
	plugins := f.plugins
	if info != nil {
		var err error
		if plugins, err = f.participants(info); err != nil {
			return nil, err
		}
	}
	var out *trainer.TrainJobStatus
	for _, p := range plugins {
		r, ok := p.plugin.(StatusReporter)
		if !ok {
			continue
		}
		var owned []*unstructured.Unstructured
		for _, gvk := range p.desc.Builds {
			objs, err := list(ctx, gvk)
			if err != nil {
				return nil, pluginError(p.desc.Name, PointStatus, err)
			}
			owned = append(owned, objs...)
		}
		st, err := r.Status(ctx, job, owned)
		if err != nil {
			return nil, pluginError(p.desc.Name, PointStatus, err)
		}
		if st == nil {
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
	}
	return out, nil
}
