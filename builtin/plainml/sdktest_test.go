package plainml_test

import (
	"strings"
	"testing"

	"github.com/trainforge/trainforge/builtin/plainml"
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

// TestSDKProperties checks PlainML's generic plugin properties over gRPC,
// as an external plugin, on the seed's PlainML example.
func TestSDKProperties(t *testing.T) {
	sdktest.Check(t, plainml.New(), seedCase(t, frameworktest.SeedPlainML))
}
