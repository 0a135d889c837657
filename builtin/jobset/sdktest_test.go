package jobset_test

import (
	"strings"
	"testing"

	"github.com/trainforge/trainforge/builtin/jobset"
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

// TestSDKProperties checks JobSet's generic plugin properties over gRPC,
// as an external plugin. JobSet owns no policy key, so every seed example
// is a case.
func TestSDKProperties(t *testing.T) {
	var cases []sdktest.Case
	for _, file := range frameworktest.SeedFiles() {
		cases = append(cases, seedCase(t, file))
	}
	sdktest.Check(t, jobset.New(), cases...)
}
