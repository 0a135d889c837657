package sdk_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/sdk"
)

// hello is the minimal plugin of the package documentation.
type hello struct{}

func (hello) Describe() framework.Description {
	return framework.Description{Name: "Hello", Version: "v0.1.0", MLPolicyKeys: []string{"hello"}}
}

func (hello) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	_, c, err := info.Trainer()
	if err != nil {
		return err
	}
	c.UpsertEnv(corev1.EnvVar{Name: "HELLO", Value: "world"})
	return nil
}

// The main function of a plugin binary: Serve and nothing else. (This
// example is compiled, not run: Serve waits for a host.)
func Example() {
	sdk.Serve(hello{})
}

func ExampleLogger() {
	log := sdk.Logger().WithName("mpi")
	log.Info("enforcing", "job", "llm", "nodes", 4)                 // "@level":"info"
	log.V(1).Info("hostfile", "lines", 4)                           // "@level":"debug"
	log.Error(fmt.Errorf("no slots"), "cannot build", "job", "llm") // "@level":"error", "error":"no slots"
}
