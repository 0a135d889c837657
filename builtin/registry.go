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
		plainml.Name:        plainml.New,
		torch.Name:          torch.New,
		jobset.Name:         jobset.New,
		coscheduling.Name:   coscheduling.New,
		trainjobstatus.Name: trainjobstatus.New,
	}
}
