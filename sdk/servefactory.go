//go:build !wasip1

package sdk

import (
	"context"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
)

// ServeFactory is Serve for a plugin that reads the host's facts
// (framework.Handle) when it is created, as the controller creates an
// in-process plugin:
//
//	func main() {
//		sdk.ServeFactory(func(h framework.Handle) framework.Plugin { return newPlugin(h.StatusEndpoint()) })
//	}
//
// f makes the plugin anew at every Configure from the facts the host sends
// with it (a host before protocol 1.3 sends none: f gets an empty
// framework.Host), and the calls after it go to that plugin. A plugin made
// with an empty Host answers Describe, which must depend on neither.
func ServeFactory(f framework.Factory) {
	if f == nil {
		Serve(nil) // says that there is no plugin, and exits
		return
	}
	p := f(framework.Host{})
	serve(p, remote.FactoryPluginSet(f), func(ctx context.Context, path string) error {
		return serveSocket(ctx, p.Describe().Name, remote.NewFactoryServer(f), path)
	})
}
