package pluginhost

import (
	"reflect"
	"slices"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
)

// Described is what one start of a plugin answered: its description, the
// extension points it implements, and its Watch answer (nil when it
// implements no Watch).
type Described struct {
	Desc   framework.Description
	Points []framework.ExtensionPoint
	Watch  []framework.WatchSource
}

// Equal reports whether two starts answered the same: only a new answer
// makes the framework compile its plugin set again.
func (d Described) Equal(o Described) bool {
	return reflect.DeepEqual(d.Desc, o.Desc) && slices.Equal(d.Points, o.Points) && reflect.DeepEqual(d.Watch, o.Watch)
}

// Implementation returns a copy of the description and what the plugin
// implements according to it: every point but Configure and Watch is
// called through client (the plugin protocol's client over the host);
// Configure is the host's, at every start; Watch is w, which answers what
// the plugin said at its start.
func (d Described) Implementation(client *remote.Client, w framework.Watcher) (framework.Description, framework.Implementation) {
	desc := d.Desc
	desc.MLPolicyKeys = slices.Clone(desc.MLPolicyKeys)
	desc.PodGroupPolicyKeys = slices.Clone(desc.PodGroupPolicyKeys)
	desc.Builds = slices.Clone(desc.Builds)
	impl := client.Implementation(d.Points)
	impl.Configurable = nil
	if impl.Watcher != nil {
		impl.Watcher = w
	}
	return desc, impl
}
