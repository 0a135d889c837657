// Package runtimetest helps the tests of plugin hosts and of the built-in
// plugins run a TrainJob through a plugin set as a reconcile does. It is
// the runtime's side of package frameworktest, which plugin authors use
// and which therefore links no runtime.
package runtimetest

import (
	"context"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// Build runs a TrainJob through a plugin set as a reconcile does: a cycle
// for the runtime's policy keys, Enforce on info, then Build. It returns
// the built objects and the failures that Ignore policies skipped.
func Build(ctx context.Context, plugins *frameworkruntime.PluginSet, info *framework.Info, job *trainer.TrainJob) ([]frameworkruntime.BuiltObject, frameworkruntime.Ignored, error) {
	keys, err := info.PolicyKeys()
	if err != nil {
		return nil, nil, err
	}
	cycle, err := plugins.NewCycle(job, keys)
	if err != nil {
		return nil, nil, err
	}
	if err := cycle.Enforce(ctx, info); err != nil {
		return nil, cycle.Ignored(), err
	}
	objects, err := cycle.Build(ctx, info)
	return objects, cycle.Ignored(), err
}
