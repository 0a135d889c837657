package coscheduling_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trainforge/trainforge/builtin/coscheduling"
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

// TestSDKProperties checks Coscheduling's generic plugin properties over
// gRPC, as an external plugin, on the seed's gang-scheduling example, with
// and without args.
func TestSDKProperties(t *testing.T) {
	withArgs := seedCase(t, frameworktest.SeedCoscheduling)
	withArgs.Name += "-with-args"
	withArgs.Args = json.RawMessage(`{"scheduleTimeoutSeconds": 120, "schedulerName": "scheduler-plugins-scheduler"}`)
	sdktest.Check(t, coscheduling.New(), seedCase(t, frameworktest.SeedCoscheduling), withArgs)
}
