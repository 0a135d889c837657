// Package builtin registers the plugins that ship with Trainforge.
package builtin

import (
	"k8s.io/apimachinery/pkg/runtime"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

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

// AddToScheme registers the Go types of the kinds the built-in plugins
// build, JobSet and the scheduler plugins' PodGroup, so that the
// controller reads them typed (operator.Options.PluginKinds): decoding and
// copying a typed object costs a fraction of an unstructured one.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{jobsetv1alpha2.AddToScheme, schedulingv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}
