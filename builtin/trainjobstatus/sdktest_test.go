package trainjobstatus_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trainforge/trainforge/builtin/trainjobstatus"
	"github.com/trainforge/trainforge/framework/frameworktest"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// TestSDKProperties checks TrainJobStatus's generic plugin properties over
// gRPC, as an external plugin, on the seed's Torch and PlainML examples.
func TestSDKProperties(t *testing.T) {
	var cases []sdktest.Case
	for _, file := range []string{frameworktest.SeedTorch, frameworktest.SeedPlainML} {
		spec, job := frameworktest.Seed(t, file)
		job.Namespace = "team-a"
		cases = append(cases, sdktest.Case{
			Name: strings.TrimSuffix(file, ".yaml"), Runtime: spec, Job: job,
			Args: json.RawMessage(`{"url":"https://trainforge-webhook-service.trainforge-system.svc:10443","caConfigMapName":"trainforge-status-ca","tokenExpirationSeconds":3600}`),
		})
	}
	sdktest.Check(t, trainjobstatus.New(nil), cases...)
}
