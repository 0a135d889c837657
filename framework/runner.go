package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

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

// FailurePolicy says what a failed call of a plugin does.
type FailurePolicy string

const (
	// FailurePolicyFail fails the reconcile (or the admission request); the
	// TrainJob is retried with backoff.
	FailurePolicyFail FailurePolicy = "Fail"
	// FailurePolicyIgnore skips the plugin for that call: its changes to
	// Info are discarded and its objects are not built.
	FailurePolicyIgnore FailurePolicy = "Ignore"
)

// PluginSpec enables one plugin: its name and its args from the
// configuration file.
type PluginSpec struct {
	Name string
	Args json.RawMessage
	// FailurePolicy is Fail when empty.
	FailurePolicy FailurePolicy
	// Plugin, when set, is used instead of the registry's factory, and Args
	// are not passed to it: its creator has configured it. An external
	// plugin is configured by its host on every start of its process.
	Plugin Plugin
}

// Supervised is implemented by plugins that run out of process: their
// process may be down, and they may not have described themselves yet.
type Supervised interface {
	Plugin
	// Ready returns nil when the plugin can take calls, else why not.
	Ready() error
	// Known reports whether the plugin has described itself at least once.
	// Until then its Describe holds only its name, and the runner cannot
	// tell which jobs it takes part in.
	Known() bool
}

// IgnoredFunc is told about every failure that a plugin's Ignore policy
// turned into a skip. job is the TrainJob being reconciled.
type IgnoredFunc func(ctx context.Context, job *trainer.TrainJob, err *PluginError)

// SetIgnoredFunc sets the function told about ignored failures (the
// controller records an Event). Call it before the framework is used.
func (f *Framework) SetIgnoredFunc(fn IgnoredFunc) { f.onIgnored = fn }

// Framework runs the enabled plugins, in the configured order. The set of
// plugins can be replaced while it runs (Replace): each call uses the set
// of its start, and Snapshot pins one set for several calls.
type Framework struct {
	set       atomic.Pointer[pluginSet]
	pinned    *pluginSet // set for a Snapshot
	onIgnored IgnoredFunc
}

// pluginSet is one immutable list of enabled plugins.
type pluginSet struct {
	id      uint64 // unique in the process
	plugins []*enabledPlugin
}

// pluginSets numbers the plugin sets that New makes.
var pluginSets atomic.Uint64

type enabledPlugin struct {
	name          string
	plugin        Plugin
	failurePolicy FailurePolicy
	// desc is fixed for in-process plugins; supervised plugins are asked
	// again on each use, since a restarted process describes itself anew.
	desc       Description
	supervised Supervised
}

// description returns what the plugin says about itself now, and whether
// that is known (false for a supervised plugin that never started).
func (p *enabledPlugin) description() (Description, bool) {
	if p.supervised == nil {
		return p.desc, true
	}
	if !p.supervised.Known() {
		return Description{Name: p.name}, false
	}
	d := p.supervised.Describe()
	// Never call a point the wrapper's type lacks: the type assertions of
	// the phases would panic.
	d.Points = implementedOf(p.plugin, d.Points)
	return d, true
}

func (p *enabledPlugin) ignores() bool { return p.failurePolicy == FailurePolicyIgnore }

// New creates and configures the plugins named in specs, in that order.
// An unknown name, a plugin whose Describe name differs from its entry, or
// args that a plugin rejects fail with an error naming the plugin.
func New(ctx context.Context, registry Registry, specs []PluginSpec) (*Framework, error) {
	set := &pluginSet{id: pluginSets.Add(1)}
	for _, spec := range specs {
		ep, err := newEnabledPlugin(ctx, registry, spec)
		if err != nil {
			return nil, err
		}
		set.plugins = append(set.plugins, ep)
	}
	f := &Framework{}
	f.set.Store(set)
	return f, nil
}

func newEnabledPlugin(ctx context.Context, registry Registry, spec PluginSpec) (*enabledPlugin, error) {
	ep := &enabledPlugin{name: spec.Name, plugin: spec.Plugin, failurePolicy: spec.FailurePolicy}
	switch ep.failurePolicy {
	case "":
		ep.failurePolicy = FailurePolicyFail
	case FailurePolicyFail, FailurePolicyIgnore:
	default:
		return nil, fmt.Errorf("plugin %q: failure policy %q is neither %q nor %q", spec.Name, spec.FailurePolicy, FailurePolicyFail, FailurePolicyIgnore)
	}
	if ep.plugin == nil {
		factory, ok := registry[spec.Name]
		if !ok {
			return nil, fmt.Errorf("plugin %q is not registered (registered: %v)", spec.Name, registry.Names())
		}
		ep.plugin = factory()
	}
	if s, ok := ep.plugin.(Supervised); ok {
		ep.supervised = s
		if s.Known() {
			if name := s.Describe().Name; name != spec.Name {
				return nil, fmt.Errorf("plugin %q describes itself as %q", spec.Name, name)
			}
		}
		return ep, nil
	}
	ep.desc = ep.plugin.Describe()
	if ep.desc.Name != spec.Name {
		return nil, fmt.Errorf("plugin %q describes itself as %q", spec.Name, ep.desc.Name)
	}
	// In process, what a plugin implements is what its type implements,
	// unless its description lists its points: a remote.Client implements
	// every interface but lists what the plugin behind it implements.
	if ep.desc.Points == nil {
		ep.desc.Points = ImplementedPoints(ep.plugin)
	} else {
		ep.desc.Points = implementedOf(ep.plugin, ep.desc.Points)
	}
	if spec.Plugin != nil {
		return ep, nil
	}
	if c, ok := ep.plugin.(Configurable); ok {
		if err := c.Configure(ctx, spec.Args); err != nil {
			return nil, pluginError(spec.Name, PointConfigure, err)
		}
	} else if len(spec.Args) > 0 && string(spec.Args) != "null" {
		return nil, pluginError(spec.Name, PointConfigure, errors.New("the plugin takes no args; remove args from its entry in the configuration file"))
	}
	return ep, nil
}

// ImplementedPoints lists the extension points a plugin's type implements,
// in the order of a reconcile.
func ImplementedPoints(p Plugin) []ExtensionPoint {
	var out []ExtensionPoint
	add := func(ok bool, point ExtensionPoint) {
		if ok {
			out = append(out, point)
		}
	}
	_, ok := p.(Configurable)
	add(ok, PointConfigure)
	_, ok = p.(Validator)
	add(ok, PointValidate)
	_, ok = p.(MLPolicyEnforcer)
	add(ok, PointEnforceMLPolicy)
	_, ok = p.(PodGroupPolicyEnforcer)
	add(ok, PointEnforcePodGroupPolicy)
	_, ok = p.(Builder)
	add(ok, PointBuild)
	_, ok = p.(Watcher)
	add(ok, PointWatch)
	_, ok = p.(StatusReporter)
	add(ok, PointStatus)
	return out
}

// implementedOf returns the points of listed that p's type implements,
// in the listed order. Configure stays as listed: the runner never calls it
// through a description (New configures by type; a host configures its
// external plugin).
func implementedOf(p Plugin, listed []ExtensionPoint) []ExtensionPoint {
	impl := ImplementedPoints(p)
	var out []ExtensionPoint
	for _, point := range listed {
		if (point == PointConfigure || slices.Contains(impl, point)) && !slices.Contains(out, point) {
			out = append(out, point)
		}
	}
	return out
}

// Ready returns nil when every plugin with failure policy Fail can take
// calls, else an error naming each one that cannot and why. The controller
// makes it part of its readiness.
func (f *Framework) Ready() error {
	var errs []error
	for _, p := range f.enabled() {
		if p.supervised == nil || p.ignores() {
			continue
		}
		if err := p.supervised.Ready(); err != nil {
			errs = append(errs, fmt.Errorf("plugin %s: %w", p.name, err))
		}
	}
	return errors.Join(errs...)
}

// Descriptions returns the enabled plugins' descriptions, in order. A
// supervised plugin that never started has only its name.
func (f *Framework) Descriptions() []Description {
	out := make([]Description, 0, len(f.enabled()))
	for _, p := range f.enabled() {
		d, _ := p.description()
		out = append(out, d)
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

// TakesPart reports whether the runner calls a plugin with this
// description for the job of info: a plugin that owns no policy key takes
// part in every job, one that owns keys in the jobs whose runtime sets one
// of them ("*" owns every job, "" the jobs that set no key).
func (d Description) TakesPart(info *Info) (bool, error) {
	k, err := keysOf(info)
	if err != nil {
		return false, err
	}
	return takesPart(d, k), nil
}

// takesPart reports whether a plugin runs for a job: a plugin that owns no
// key runs for every job, one that owns keys for the jobs that set one.
func takesPart(d Description, k jobKeys) bool {
	if len(d.MLPolicyKeys) == 0 && len(d.PodGroupPolicyKeys) == 0 {
		return true
	}
	return (len(d.MLPolicyKeys) > 0 && ownsAny(d.MLPolicyKeys, k.ml)) ||
		(len(d.PodGroupPolicyKeys) > 0 && ownsAny(d.PodGroupPolicyKeys, k.podGroup))
}

// participant is a plugin taking part in one call of the framework, with
// its description at that moment.
type participant struct {
	*enabledPlugin
	desc Description
}

// call is one call of the framework for one TrainJob.
type call struct {
	f     *Framework
	job   *trainer.TrainJob
	point ExtensionPoint
}

// run calls one plugin's extension point, counts it and applies the
// plugin's failure policy: under Ignore a failure is reported to the
// IgnoredFunc and run returns ignored instead of an error.
func (c call) run(ctx context.Context, p participant, point ExtensionPoint, fn func() error) (ignored bool, err error) {
	start := time.Now()
	err = fn()
	observeCall(p.name, point, time.Since(start), err)
	if err == nil {
		return false, nil
	}
	perr, ok := pluginError(p.name, point, err).(*PluginError)
	if !ok {
		// err wraps a PluginError deeper down: name the plugin that
		// returned it.
		perr = &PluginError{Plugin: p.name, Point: point, Err: err}
	}
	if !p.ignores() {
		return false, perr
	}
	c.ignore(ctx, perr)
	return true, nil
}

func (c call) ignore(ctx context.Context, err *PluginError) {
	pluginIgnored.WithLabelValues(err.Plugin, string(err.Point)).Inc()
	if c.f.onIgnored != nil {
		c.f.onIgnored(ctx, c.job, err)
	}
}

// participants returns the plugins that take part in a job, in order, after
// checking that every policy key the runtime sets is owned by one of them.
//
// A supervised plugin that never started cannot say which keys it owns. A
// key that no known plugin owns may be its: under Fail the call fails
// naming it, under Ignore it is skipped and the job goes on.
func (c call) participants(ctx context.Context, info *Info) ([]participant, error) {
	k, err := keysOf(info)
	if err != nil {
		return nil, err
	}
	var known []participant
	var unknown []*enabledPlugin
	for _, p := range c.f.enabled() {
		if d, ok := p.description(); ok {
			known = append(known, participant{enabledPlugin: p, desc: d})
		} else {
			unknown = append(unknown, p)
		}
	}
	var notStartedErr error
	unowned := unownedKey(known, "mlPolicy", k.ml, true, func(d Description) []string { return d.MLPolicyKeys })
	if unowned == nil {
		unowned = unownedKey(known, "podGroupPolicy", k.podGroup, false, func(d Description) []string { return d.PodGroupPolicyKeys })
	}
	if unowned != nil {
		if len(unknown) == 0 {
			return nil, unowned
		}
		var notStarted []string
		for _, p := range unknown {
			why := p.supervised.Ready()
			if why == nil {
				why = errors.New("starting")
			}
			if p.ignores() {
				c.ignore(ctx, &PluginError{Plugin: p.name, Point: c.point,
					Err: fmt.Errorf("has not started, and may own what no running plugin owns (%w): %w", unowned, why)})
				continue
			}
			notStarted = append(notStarted, fmt.Sprintf("%s (%v)", p.name, why))
		}
		if len(notStarted) > 0 {
			notStartedErr = &NotStartedError{Unowned: unowned, Plugins: notStarted}
		}
	}
	var out []participant
	for _, p := range known {
		if takesPart(p.desc, k) {
			out = append(out, p)
		}
	}
	// With a NotStartedError the running participants come along, for
	// admission, which validates what it can and lets the job wait.
	return out, notStartedErr
}

// unownedKey returns an error for the first key that no plugin owns, or nil.
func unownedKey(plugins []participant, policy string, keys []string, needOwnerOfNone bool, owned func(Description) []string) error {
	ownedBySome := func(key string) bool {
		return slices.ContainsFunc(plugins, func(p participant) bool { return slices.Contains(owned(p.desc), key) })
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
// runtime that no enabled plugin owns: an *UnownedPolicyKeyError, or a
// *NotStartedError when plugins that have not started may own it.
func (f *Framework) CheckPolicyKeys(ctx context.Context, info *Info) error {
	_, err := call{f: f, point: PointValidate}.participants(ctx, info)
	return err
}

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
	}
	return out, nil
}
