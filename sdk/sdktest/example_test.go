package sdktest_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// hello is the plugin of the package documentation of sdk and sdktest.
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

func greet(t testing.TB) sdktest.Case {
	return sdktest.CaseFromFiles(t, "greet", "testdata/hello.yaml", "testdata/hello.yaml")
}

// The tests of the package documentation's example.

func TestProperties(t *testing.T) {
	sdktest.Check(t, hello{}, greet(t))
}

func TestGolden(t *testing.T) {
	sdktest.Golden(t, hello{}, "testdata", greet(t))
}

func TestSetsHello(t *testing.T) {
	c := greet(t)
	info, err := framework.NewInfo(c.Job, c.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	client := sdktest.Connect(t, hello{})
	if err := client.EnforceMLPolicy(context.Background(), info, c.Job); err != nil {
		t.Fatal(err)
	}
	_, ctr, err := info.Trainer()
	if err != nil {
		t.Fatal(err)
	}
	if len(ctr.Env) != 1 || ctr.Env[0].Name != "HELLO" || ctr.Env[0].Value != "world" {
		t.Errorf("trainer env = %v, want HELLO=world", ctr.Env)
	}
}
