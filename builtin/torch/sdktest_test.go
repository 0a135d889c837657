package torch_test

import (
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

// torchCases are the seed examples whose runtime sets the torch key.
func torchCases(t *testing.T) []sdktest.Case {
	return []sdktest.Case{seedCase(t, frameworktest.SeedTorch), seedCase(t, frameworktest.SeedCoscheduling)}
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
