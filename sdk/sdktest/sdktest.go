package sdktest

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/hashicorp/go-plugin"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// Connect serves p through the real gRPC path, in-process: go-plugin's gRPC
// server with the PluginService of p on one side, and on the other the
// client the Trainforge host uses, which it returns. Every call through the
// client goes through JSON and protobuf encoding, the SDK's patch of Info
// and the host's checks of that patch, as in production. The connection is
// closed when the test ends.
//
//	c := sdktest.Connect(t, myplugin.New())
//	err := c.EnforceMLPolicy(ctx, info, job) // info changes as the host's would
func Connect(t testing.TB, p framework.Plugin) *remote.Client {
	t.Helper()
	c, err := remote.Dial(context.Background(), connectRPC(t, p))
	if err != nil {
		t.Fatalf("sdktest.Connect: %v", err)
	}
	return c
}

// connectRPC serves p with go-plugin's in-process test connection and
// returns the raw PluginService client.
func connectRPC(t testing.TB, p framework.Plugin) pluginv1.PluginServiceClient {
	t.Helper()
	if p == nil {
		t.Fatal("sdktest: the plugin is nil")
	}
	client, server := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{
		remote.PluginName: &remote.GRPCPlugin{Impl: p},
	})
	t.Cleanup(func() {
		// Server first, as go-plugin's own tests do: the client's Close
		// asks the server to stop itself, which races with Stop.
		server.Stop()
		_ = client.Close()
	})
	raw, err := client.Dispense(remote.PluginName)
	if err != nil {
		t.Fatalf("sdktest: dispensing the plugin: %v", err)
	}
	rpc, ok := raw.(pluginv1.PluginServiceClient)
	if !ok {
		t.Fatalf("sdktest: dispensed a %T, not a PluginServiceClient", raw)
	}
	return rpc
}

// Case is one input of a plugin: a runtime, a TrainJob that uses it, and
// the plugin's args. Check and Golden build the TrainJob's Info from the
// runtime with framework.NewInfo, as the controller does.
type Case struct {
	// Name names the case in messages and, for Golden, the golden file
	// (<Name>.golden.yaml): use letters, digits, '-', '_' and '.'.
	Name string
	// Runtime is the spec of the TrainingRuntime or ClusterTrainingRuntime
	// the TrainJob uses.
	Runtime *trainer.TrainingRuntimeSpec
	// Job is the TrainJob.
	Job *trainer.TrainJob
	// Args are the plugin's args, as the configuration file would give
	// them (JSON), or nil for none.
	Args json.RawMessage
}

// CaseFromFiles reads a case from YAML files: runtimeFile holds a
// TrainingRuntime or a ClusterTrainingRuntime, jobFile a TrainJob. They may
// be the same file, holding both documents separated by "---". Decoding is
// strict: an unknown field fails the test. Set Args on the result for a
// plugin that takes args.
//
//	c := sdktest.CaseFromFiles(t, "two-nodes", "testdata/runtime.yaml", "testdata/two-nodes.yaml")
//	c.Args = json.RawMessage(`{"port": 1234}`)
func CaseFromFiles(t testing.TB, name, runtimeFile, jobFile string) Case {
	t.Helper()
	read := func(file string) string {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("sdktest.CaseFromFiles: %v", err)
		}
		return string(data)
	}
	return Case{
		Name:    name,
		Runtime: frameworktest.Runtime(t, read(runtimeFile)),
		Job:     frameworktest.TrainJob(t, read(jobFile)),
	}
}
