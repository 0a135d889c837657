package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/trainforge/trainforge/framework"
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

// PluginSpec enables one plugin: its name, its args from the configuration
// file and its failure policy.
type PluginSpec struct {
	Name string
	Args json.RawMessage
	// FailurePolicy is Fail when empty, the zero value.
	FailurePolicy FailurePolicy
	// Plugin, when set, is used instead of the registry's factory, and Args
	// are not passed to it: its creator has configured it. An external
	// plugin is configured by its host on every start of its process.
	Plugin framework.Plugin
}

// Supervised is implemented by the host of a plugin that runs out of
// process (package external): the process may be down, and each start may
// be another binary, another version of the plugin. Such a plugin describes
// itself as any other does, by its Describe answer and the points its type
// implements, which the plugin protocol carries; its host only relays the
// latest answer (Described), since its own Go type forwards every point.
type Supervised interface {
	framework.Plugin
	// Ready returns nil when the plugin can take calls, else why not.
	Ready() error
	// Generation counts the plugin's descriptions: it changes whenever
	// Described would answer something new, and is 0 until the plugin has
	// described itself once.
	Generation() uint64
	// Described returns the plugin's latest description, what it
	// implements according to it, and its Generation.
	Described() (framework.Description, framework.Implementation, uint64)
}

// member is one enabled plugin of a set, as the set was compiled.
type member struct {
	name          string
	plugin        framework.Plugin
	failurePolicy FailurePolicy
	desc          framework.Description
	impl          framework.Implementation
	// supervised is the plugin when it runs out of process; generation is
	// its Generation when the set was compiled, 0 while it has never
	// described itself (then desc holds only its name and impl nothing).
	supervised Supervised
	generation uint64
}

func (m *member) ignores() bool { return m.failurePolicy == FailurePolicyIgnore }

// known reports whether the member has described itself: an in-process
// plugin always has, a supervised one once it started.
func (m *member) known() bool { return m.supervised == nil || m.generation > 0 }

// entry is a member in the list of one extension point, with that point's
// implementation.
type entry[T any] struct {
	*member
	impl T
}

// PluginSet is the enabled plugins of one configuration, compiled once into
// a list per extension point. It never changes: a reconcile takes the set
// in use at its start (Framework.Current) and runs every phase with it.
type PluginSet struct {
	id      uint64
	members []*member
	// uses counts the work under way with this set and the sets
	// recompiled from it: their plugins are the same.
	uses *uses

	validators  []entry[framework.Validator]
	mlEnforcers []entry[framework.MLPolicyEnforcer]
	pgEnforcers []entry[framework.PodGroupPolicyEnforcer]
	builders    []entry[framework.Builder]
	watchers    []entry[framework.Watcher]
	reporters   []entry[framework.StatusReporter]
}

// pluginSets numbers the compiled plugin sets.
var pluginSets atomic.Uint64

// compile builds the lists of members, in order. A supervised member that
// has not described itself is in none: it implements nothing known yet.
func compile(members []*member, u *uses) *PluginSet {
	s := &PluginSet{id: pluginSets.Add(1), members: members, uses: u}
	for _, m := range members {
		if i := m.impl.Validator; i != nil {
			s.validators = append(s.validators, entry[framework.Validator]{m, i})
		}
		if i := m.impl.MLPolicyEnforcer; i != nil {
			s.mlEnforcers = append(s.mlEnforcers, entry[framework.MLPolicyEnforcer]{m, i})
		}
		if i := m.impl.PodGroupPolicyEnforcer; i != nil {
			s.pgEnforcers = append(s.pgEnforcers, entry[framework.PodGroupPolicyEnforcer]{m, i})
		}
		if i := m.impl.Builder; i != nil {
			s.builders = append(s.builders, entry[framework.Builder]{m, i})
		}
		if i := m.impl.Watcher; i != nil {
			s.watchers = append(s.watchers, entry[framework.Watcher]{m, i})
		}
		if i := m.impl.StatusReporter; i != nil {
			s.reporters = append(s.reporters, entry[framework.StatusReporter]{m, i})
		}
	}
	return s
}

// newMember creates and configures one enabled plugin. An unknown name, a
// plugin that describes itself under another name, or args the plugin
// rejects are errors naming the plugin.
func newMember(ctx context.Context, registry framework.Registry, spec PluginSpec, h framework.Handle) (*member, error) {
	m := &member{name: spec.Name, plugin: spec.Plugin, failurePolicy: spec.FailurePolicy}
	switch m.failurePolicy {
	case "", FailurePolicyFail, FailurePolicyIgnore:
	default:
		return nil, fmt.Errorf("plugin %q: failure policy %q is neither %q nor %q", spec.Name, spec.FailurePolicy, FailurePolicyFail, FailurePolicyIgnore)
	}
	if m.plugin == nil {
		factory, ok := registry[spec.Name]
		if !ok {
			return nil, fmt.Errorf("plugin %q is not registered (registered: %v)", spec.Name, registry.Names())
		}
		m.plugin = factory(h)
	}
	if s, ok := m.plugin.(Supervised); ok {
		m.supervised = s
		m.describeSupervised()
		if m.known() && m.desc.Name != spec.Name {
			return nil, fmt.Errorf("plugin %q describes itself as %q", spec.Name, m.desc.Name)
		}
		return m, nil
	}
	m.desc = m.plugin.Describe()
	if m.desc.Name != spec.Name {
		return nil, fmt.Errorf("plugin %q describes itself as %q", spec.Name, m.desc.Name)
	}
	if err := framework.CheckImplementation(m.plugin); err != nil {
		return nil, fmt.Errorf("plugin %q: %w", spec.Name, err)
	}
	m.impl = framework.ImplementationOf(m.plugin)
	if spec.Plugin != nil {
		return m, nil
	}
	if c := m.impl.Configurable; c != nil {
		if err := c.Configure(ctx, spec.Args); err != nil {
			return nil, &framework.PluginError{Plugin: spec.Name, Point: framework.PointConfigure, Err: err}
		}
	} else if len(spec.Args) > 0 && string(spec.Args) != "null" {
		return nil, &framework.PluginError{Plugin: spec.Name, Point: framework.PointConfigure, Err: errors.New("the plugin takes no args; remove args from its entry in the configuration file")}
	}
	return m, nil
}

// describeSupervised reads a supervised plugin's latest description.
func (m *member) describeSupervised() {
	desc, impl, gen := m.supervised.Described()
	m.generation = gen
	if gen == 0 {
		m.desc, m.impl = framework.Description{Name: m.name}, framework.Implementation{}
		return
	}
	m.desc, m.impl = desc, impl
}

// stale reports whether a supervised plugin has described itself anew
// since the set was compiled.
func (s *PluginSet) stale() bool {
	for _, m := range s.members {
		if m.supervised != nil && m.supervised.Generation() != m.generation {
			return true
		}
	}
	return false
}

// recompiled is the set with the latest descriptions of its supervised
// plugins: the same plugins, configured as they were.
func (s *PluginSet) recompiled() *PluginSet {
	members := make([]*member, len(s.members))
	for i, m := range s.members {
		c := *m
		if c.supervised != nil {
			c.describeSupervised()
		}
		members[i] = &c
	}
	return compile(members, s.uses)
}

// ID identifies the set: every compiled set has its own, so that what was
// computed with one set (a reconcile's memo) is not taken for the work of
// another.
func (s *PluginSet) ID() uint64 { return s.id }

// Descriptions returns the enabled plugins' descriptions, in order. A
// supervised plugin that never started has only its name.
func (s *PluginSet) Descriptions() []framework.Description {
	out := make([]framework.Description, 0, len(s.members))
	for _, m := range s.members {
		out = append(out, m.desc)
	}
	return out
}

// Ready returns nil when every plugin with failure policy Fail can take
// calls, else an error naming each one that cannot and why. The controller
// makes it part of its readiness.
func (s *PluginSet) Ready() error {
	var errs []error
	for _, m := range s.members {
		if m.supervised == nil || m.ignores() {
			continue
		}
		if err := m.supervised.Ready(); err != nil {
			errs = append(errs, fmt.Errorf("plugin %s: %w", m.name, err))
		}
	}
	return errors.Join(errs...)
}

// checkKeys checks that every policy key the runtime sets is owned by an
// enabled plugin that has described itself. A key that no such plugin owns
// may belong to a supervised plugin that never started: the check fails
// naming it (a *NotStartedError), under every failure policy. A plugin
// that is down took no call, so there is no answer of its to skip under
// Ignore (as for any *UnavailableError): the TrainJob waits for it and is
// retried, and admission lets it in with a warning.
func (s *PluginSet) checkKeys(keys framework.PolicyKeys) error {
	unowned := s.unownedKey("mlPolicy", keys.ML, true, func(d framework.Description) []string { return d.MLPolicyKeys })
	if unowned == nil {
		unowned = s.unownedKey("podGroupPolicy", keys.PodGroup, false, func(d framework.Description) []string { return d.PodGroupPolicyKeys })
	}
	if unowned == nil {
		return nil
	}
	var notStarted []string
	for _, m := range s.members {
		if m.known() {
			continue
		}
		why := m.supervised.Ready()
		if why == nil {
			why = errors.New("starting")
		}
		notStarted = append(notStarted, fmt.Sprintf("%s (%v)", m.name, why))
	}
	if len(notStarted) > 0 {
		return &NotStartedError{Unowned: unowned, Plugins: notStarted}
	}
	return unowned
}

// unownedKey returns an error for the first key that no described plugin
// owns, or nil.
func (s *PluginSet) unownedKey(policy string, keys []string, needOwnerOfNone bool, owned func(framework.Description) []string) error {
	ownedBySome := func(key string) bool {
		return slices.ContainsFunc(s.members, func(m *member) bool { return m.known() && slices.Contains(owned(m.desc), key) })
	}
	if len(keys) == 0 {
		if needOwnerOfNone && !ownedBySome(framework.NoPolicyKey) {
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
func (s *PluginSet) CheckPolicyKeys(info *framework.Info) error {
	keys, err := info.PolicyKeys()
	if err != nil {
		return err
	}
	return s.checkKeys(keys)
}

// Ignored are the failures that plugins' Ignore policies turned into
// skips during one phase. The caller reports them (an Event on the
// TrainJob, a warning to an admission client); the framework has counted
// them in trainforge_plugin_ignored_total.
type Ignored []*framework.PluginError

func (ig Ignored) add(err *framework.PluginError) Ignored {
	pluginIgnored.WithLabelValues(err.Plugin, string(err.Point)).Inc()
	return append(ig, err)
}
