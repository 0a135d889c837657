// Package plainml is the PlainML plugin: the ML policy of a runtime that
// names no ML framework.
//
// PlainML owns the runtimes whose mlPolicy sets no framework key (no torch,
// mpi, jax, ... key; numNodes alone is fine), including runtimes with no
// mlPolicy at all. For such a runtime it does two things to the trainer
// step (the replicatedJob labelled
// trainer.kubeflow.org/trainjob-ancestor-step=trainer, or for older
// runtimes the one named "node" or "trainer-node"):
//
//   - The number of trainer pods is the TrainJob's spec.trainer.numNodes,
//     else the runtime's mlPolicy.numNodes, else 1.
//   - The TrainJob's spec.trainer.env is merged into the trainer container
//     (the container named "node", else "trainer", else the only one): a
//     variable of the same name as one of the runtime's replaces it in
//     place, the others are appended in the order given.
//
// The TrainJob's image, command, args and resourcesPerNode reach the
// trainer container before PlainML runs; PlainML sets no other variable.
// A runtime without a trainer step, or whose trainer step has no
// recognisable main container, is an error that says what is missing.
package plainml

import (
	"context"
	"errors"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// Name is the plugin's name in the configuration file.
const Name = "PlainML"

// Version is the plugin's version.
const Version = "v0.1.0"

// New returns the PlainML plugin.
func New() framework.Plugin { return &plugin{} }

type plugin struct{}

var _ framework.MLPolicyEnforcer = (*plugin)(nil)

// Describe says that PlainML owns the runtimes with no mlPolicy key.
func (*plugin) Describe() framework.Description {
	return framework.Description{
		Name:         Name,
		Version:      Version,
		MLPolicyKeys: []string{framework.NoPolicyKey},
	}
}

// EnforceMLPolicy sets the trainer step's pod count and merges the
// TrainJob's trainer env into the trainer container.
func (*plugin) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	if info == nil {
		return errors.New("no Info to enforce the ML policy on")
	}
	_, _, _, err := info.SetupTrainer(job)
	return err
}
