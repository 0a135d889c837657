package runtime

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/trainforge/trainforge/framework"
)

// Framework holds the plugin set in use. A configuration reload replaces
// it (Replace); a supervised plugin that describes itself anew (its first
// start, or a restart into another version) has the set compiled again.
// Work that calls plugins takes a set with Use at its start, keeps it and
// ends the use when done: the set never changes under it, and a reload
// keeps the plugins it dropped open until then.
type Framework struct {
	mu      sync.Mutex // serialises compiling and replacing
	current atomic.Pointer[PluginSet]
}

// New creates and configures the plugins named in specs, in that order,
// and compiles them into the set in use. An unknown name, a plugin whose
// Describe name differs from its entry, or args that a plugin rejects fail
// with an error naming the plugin. Each factory is given the Handle of
// WithHandle.
func New(ctx context.Context, registry framework.Registry, specs []PluginSpec, opts ...Option) (*Framework, error) {
	o := options{handle: framework.Host{}}
	for _, opt := range opts {
		opt(&o)
	}
	members := make([]*member, 0, len(specs))
	for _, spec := range specs {
		m, err := newMember(ctx, registry, spec, o.handle)
		if err != nil {
			return nil, err
		}
		members = append(members, m)
	}
	f := &Framework{}
	f.current.Store(compile(members, newUses()))
	return f, nil
}

// Current returns the plugin set in use, compiled again first when a
// supervised plugin has described itself anew since. It is for what the
// set says (its descriptions, its readiness); work that calls its plugins
// takes it with Use.
func (f *Framework) Current() *PluginSet {
	s := f.current.Load()
	if !s.stale() {
		return s
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s = f.current.Load(); s.stale() {
		s = s.recompiled()
		f.current.Store(s)
	}
	return s
}

// Use returns the plugin set in use for a piece of work (a reconcile, an
// admission request), and the function that ends that use. Until every
// use of a set has ended, the channel Replace returned when it replaced
// the set stays open.
func (f *Framework) Use() (*PluginSet, func()) {
	for {
		s := f.Current()
		if s.uses.begin() {
			return s, sync.OnceFunc(s.uses.end)
		}
		// Replaced since Current: the next round takes the new set.
	}
}

// Replace makes f use the plugins of next from now on. Work under way
// finishes with the set it took: the returned channel is closed once no
// use of the replaced set (Use) is under way, and only then may the
// plugins that next does not keep be closed.
func (f *Framework) Replace(next *Framework) <-chan struct{} {
	set := next.Current()
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.current.Swap(set)
	return old.uses.retire()
}

// Option configures New.
type Option func(*options)

type options struct {
	handle framework.Handle
}

// WithHandle gives the plugins that New creates h as their Handle. Without
// it they get an empty Host: no status endpoint.
func WithHandle(h framework.Handle) Option {
	return func(o *options) { o.handle = h }
}
