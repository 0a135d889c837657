package framework

// enabled returns the plugins of the set in use: the pinned one of a
// Snapshot, else the latest.
func (f *Framework) enabled() []*enabledPlugin {
	if f.pinned != nil {
		return f.pinned.plugins
	}
	return f.set.Load().plugins
}

// Snapshot returns a Framework that keeps the set of plugins in use now,
// whatever Replace does later: a reconcile takes one so that all its
// phases run with the same plugins.
func (f *Framework) Snapshot() *Framework {
	set := f.pinned
	if set == nil {
		set = f.set.Load()
	}
	s := &Framework{pinned: set, onIgnored: f.onIgnored}
	s.set.Store(set)
	return s
}

// Replace makes f run the plugins of next from now on, atomically: a call
// under way finishes with the plugins it started with. next is the result
// of New; f keeps its own IgnoredFunc.
func (f *Framework) Replace(next *Framework) {
	f.set.Store(next.set.Load())
}

// Plugins returns the enabled plugins, in order, as the framework was
// given them (the Plugin of each PluginSpec, or the one its factory made).
func (f *Framework) Plugins() []Plugin {
	set := f.enabled()
	out := make([]Plugin, 0, len(set))
	for _, p := range set {
		out = append(out, p.plugin)
	}
	return out
}

// SetID identifies the set of plugins in use (pinned by a Snapshot): it
// changes with every Replace, so that what was computed with one set is not
// taken for the work of another.
func (f *Framework) SetID() uint64 {
	if f.pinned != nil {
		return f.pinned.id
	}
	return f.set.Load().id
}
