package torch_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/trainforge/trainforge/builtin/torch"
	"github.com/trainforge/trainforge/framework/frameworktest"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// seedCase is a seed example of frameworktest as an sdktest case, its
// TrainJob in namespace team-a.
func seedCase(t *testing.T, file string) sdktest.Case {
	spec, job := frameworktest.Seed(t, file)
	job.Namespace = "team-a"
	return sdktest.Case{Name: strings.TrimSuffix(file, ".yaml"), Runtime: spec, Job: job}
}

// fileCase is a case of testdata: a runtime file and a TrainJob file, the
// TrainJob in namespace team-a.
func fileCase(t *testing.T, name, runtimeFile, jobFile string) sdktest.Case {
	c := sdktest.CaseFromFiles(t, name, filepath.Join("testdata", runtimeFile), filepath.Join("testdata", jobFile))
	c.Job.Namespace = "team-a"
	return c
}

// torchCases are the seed examples whose runtime sets the torch key, the
// torchtune runtimes shaped like Kubeflow's with a TrainJob on one
// device, on several devices of one node and on several nodes, and a
// runtime with envInjection.
func torchCases(t *testing.T) []sdktest.Case {
	return []sdktest.Case{
		seedCase(t, frameworktest.SeedTorch),
		seedCase(t, frameworktest.SeedCoscheduling),
		fileCase(t, "torchtune-single-device", "torchtune-llama3.2-1b.yaml", "torchtune-single-device.yaml"),
		fileCase(t, "torchtune-multi-device", "torchtune-llama3.2-1b.yaml", "torchtune-multi-device.yaml"),
		fileCase(t, "torchtune-multi-node", "torchtune-llama3.3-70b.yaml", "torchtune-multi-node.yaml"),
		fileCase(t, "torch-envinjection", "torch-envinjection.yaml", "torch-envinjection.yaml"),
	}
}

// TestSDKProperties checks Torch's generic plugin properties over gRPC, as
// an external plugin, on the seed examples with a Torch runtime.
func TestSDKProperties(t *testing.T) {
	sdktest.Check(t, torch.New(), torchCases(t)...)
}

// TestSDKGolden pins what Torch, served over gRPC, makes of the seed
// examples: testdata/<seed>.golden.yaml. After an intended change, rewrite
// them with
//
//	go test ./builtin/torch -run TestSDKGolden -update
func TestSDKGolden(t *testing.T) {
	sdktest.Golden(t, torch.New(), "testdata", torchCases(t)...)
}
