package xgboost_test

import (
	"testing"

	"github.com/trainforge/trainforge/plugins/xgboost"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// cases are the TrainJobs of testdata on the xgboost-distributed runtime.
func cases(t *testing.T) []sdktest.Case {
	var out []sdktest.Case
	for _, name := range []string{"one-node", "four-nodes", "two-gpus-per-node", "user-env"} {
		out = append(out, xgbCase(t, name))
	}
	return out
}

// TestSDKProperties checks XGBoost's generic plugin properties over gRPC,
// as the host runs it.
func TestSDKProperties(t *testing.T) {
	sdktest.Check(t, xgboost.New(), cases(t)...)
}

// TestSDKGolden pins what XGBoost, served over gRPC, makes of each case:
// testdata/<case>.golden.yaml. After an intended change, rewrite them with
//
//	go test ./plugins/xgboost -run Golden -update
func TestSDKGolden(t *testing.T) {
	sdktest.Golden(t, xgboost.New(), "testdata", cases(t)...)
}
