//go:build !wasip1

package remote

import (
	"context"

	"github.com/trainforge/trainforge/framework"
)

// Plugin is a plugin behind the plugin protocol as the framework takes it,
// described once: its Client, and what it answered to Describe when dialed.
// It is for a plugin whose server never changes, such as one served in the
// same process by tests and benchmarks; a plugin process, which may restart
// as another binary, is package external's Plugin, described at each
// start.
//
// It is a runtime.Supervised (client_test.go says so: this package, which
// the SDK imports to serve plugins, links no runtime).
type Plugin struct {
	client *Client
	desc   framework.Description
	impl   framework.Implementation
}

// Dial asks the plugin behind c what it is and returns it as a Plugin.
func Dial(ctx context.Context, c *Client) (*Plugin, error) {
	desc, points, err := c.Describe(ctx)
	if err != nil {
		return nil, err
	}
	impl := c.Implementation(points)
	// As for a plugin process: whoever serves or dials the plugin configures
	// it (Client().ConfigureWith); the framework configures only the
	// plugins it makes.
	impl.Configurable = nil
	return &Plugin{client: c, desc: desc, impl: impl}, nil
}

// Client returns the protocol's client of the plugin.
func (p *Plugin) Client() *Client { return p.client }

// Describe returns the plugin's description.
func (p *Plugin) Describe() framework.Description { return p.desc }

// Ready returns nil: the plugin was reachable when dialed, and nothing
// supervises it since.
func (p *Plugin) Ready() error { return nil }

// Generation is 1: the plugin described itself once.
func (p *Plugin) Generation() uint64 { return 1 }

// Described returns the description and the client's methods for the
// points the plugin described.
func (p *Plugin) Described() (framework.Description, framework.Implementation, uint64) {
	return p.desc, p.impl, 1
}
