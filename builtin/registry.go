// Package builtin registers the plugins that ship with Trainforge.
package builtin

import (
	"github.com/trainforge/trainforge/builtin/coscheduling"
	"github.com/trainforge/trainforge/builtin/jobset"
	"github.com/trainforge/trainforge/builtin/plainml"
	"github.com/trainforge/trainforge/builtin/torch"
	"github.com/trainforge/trainforge/builtin/trainjobstatus"
	"github.com/trainforge/trainforge/framework"
)

// Registry returns a registry of the built-in plugins.
func Registry() framework.Registry {
	return framework.Registry{
		plainml.Name:        needsNoHost(plainml.New),
		torch.Name:          needsNoHost(torch.New),
		jobset.Name:         needsNoHost(jobset.New),
		coscheduling.Name:   needsNoHost(coscheduling.New),
		trainjobstatus.Name: trainjobstatus.New,
	}
}

// needsNoHost is the Factory of a plugin that reads none of the host's
// facts.
func needsNoHost(newPlugin func() framework.Plugin) framework.Factory {
	return func(framework.Handle) framework.Plugin { return newPlugin() }
}
