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
// Callers take Current at the start of their work and keep it: the set
// never changes under them.
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
	f.current.Store(compile(members))
	return f, nil
}

// Current returns the plugin set in use, compiled again first when a
// supervised plugin has described itself anew since.
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

// Replace makes f use the plugins of next from now on; work under way
// finishes with the set it took.
func (f *Framework) Replace(next *Framework) {
	set := next.Current()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.current.Store(set)
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
