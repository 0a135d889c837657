package sdktest

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// Connect serves p through the real gRPC path, in-process: a gRPC server
// with the SDK's PluginService of p on one side, and on the other the
// client the Trainforge host uses, which it returns. Every call through the
// client goes through JSON and protobuf encoding, the SDK's patch of Info
// and the host's checks of that patch, as in production; only go-plugin's
// process handshake is left out (trainforge-plugin-conformance checks a
// plugin binary with it). The connection is closed when the test ends.
//
//	c := sdktest.Connect(t, myplugin.New())
//	err := c.EnforceMLPolicy(ctx, info, job) // info changes as the host's would
func Connect(t testing.TB, p framework.Plugin) *remote.Client {
	t.Helper()
	c := remote.NewClient(connectRPC(t, p), remote.Limits{})
	if _, _, err := c.Describe(context.Background()); err != nil {
		t.Fatalf("sdktest.Connect: the host refuses the plugin's description: %v", err)
	}
	return c
}

// connectRPC serves p's PluginService on a Unix socket with a gRPC server
// in this process and returns a client of it. Every call is encoded and
// decoded as with a plugin process; what is left out is go-plugin's
// process handshake, and its debug log with it, which would fill the
// test's output. With -sdktest.trace each call is logged through t.
func connectRPC(t testing.TB, p framework.Plugin) pluginv1.PluginServiceClient {
	t.Helper()
	if p == nil {
		t.Fatal("sdktest: the plugin is nil")
	}
	// A short directory: a Unix socket path is limited to about 100 bytes,
	// which t.TempDir can exceed.
	dir, err := os.MkdirTemp("", "sdktest-")
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "plugin.sock"))
	if err != nil {
		t.Fatalf("sdktest: listening for the plugin: %v", err)
	}
	server := grpc.NewServer()
	pluginv1.RegisterPluginServiceServer(server, remote.NewServer(p))
	go func() { _ = server.Serve(ln) }()

	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if *trace {
		opts = append(opts, grpc.WithUnaryInterceptor(traceCalls(t)))
	}
	conn, err := grpc.NewClient("unix://"+ln.Addr().String(), opts...)
	if err != nil {
		server.Stop()
		t.Fatalf("sdktest: connecting to the plugin: %v", err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		server.Stop()
	})
	return pluginv1.NewPluginServiceClient(conn)
}

// trace is the -sdktest.trace flag.
var trace = flag.Bool("sdktest.trace", false, "log every gRPC call that sdktest makes to the plugin, with its duration and error")

// traceCalls logs each call's method, duration and outcome through t.
func traceCalls(t testing.TB) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		t.Logf("sdktest: %s took %s, error: %v", method, time.Since(start).Round(time.Microsecond), err)
		return err
	}
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
	c, err := LoadCase(name, runtimeFile, jobFile)
	if err != nil {
		t.Fatalf("sdktest.CaseFromFiles: %v", err)
	}
	return c
}

// ConnectRPC serves p as Connect does and returns the raw PluginService
// client, for Run and for tests that send requests of their own.
func ConnectRPC(t testing.TB, p framework.Plugin) pluginv1.PluginServiceClient {
	t.Helper()
	return connectRPC(t, p)
}
