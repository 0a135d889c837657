package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

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
