package bench

import (
	"context"
	"os/exec"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/builtin/jobset"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// BenchmarkEmptyCall times the Describe RPC, whose request is empty and
// whose answer is a few names: on the external path, the floor of any
// call, what the transport costs with next to nothing to encode (go-plugin's
// gRPC connection over its Unix socket with AutoMTLS, as the host sets it
// up, to a second process). The host never makes this call per reconcile
// (it keeps the description of each start); it is here to split the other
// benchmarks' figures. The in-process path is a method call returning a
// struct; codec-only adds the protobuf encoding of the answer.
func BenchmarkEmptyCall(b *testing.B) {
	for _, path := range paths {
		b.Run("path="+path, func(b *testing.B) {
			var describe func(context.Context) error
			var pid []int
			switch path {
			case inProcess:
				p := builtin.Registry()[jobset.Name](framework.Host{})
				describe = func(context.Context) error { p.Describe(); return nil }
			case codecOnly:
				rpc := direct{remote.NewServer(builtin.Registry()[jobset.Name](framework.Host{}))}
				describe = func(ctx context.Context) error {
					_, err := rpc.Describe(ctx, &pluginv1.DescribeRequest{})
					return err
				}
			case wasmPath:
				rpc := wasms[jobset.Name].RPC()
				describe = func(ctx context.Context) error {
					_, err := rpc.Describe(ctx, &pluginv1.DescribeRequest{})
					return err
				}
			default:
				rpc, p := dialBinary(b, jobset.Name)
				pid = []int{p}
				describe = func(ctx context.Context) error {
					_, err := rpc.Describe(ctx, &pluginv1.DescribeRequest{})
					return err
				}
			}
			ctx := context.Background()
			b.ReportAllocs()
			cpu := startCPU(b, pid...)
			for b.Loop() {
				if err := describe(ctx); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})
	}
}

// dialBinary starts trainforge-builtin-plugin serving name with go-plugin
// configured as framework/external configures it, and returns its
// PluginService client and its pid. The process ends with the benchmark.
func dialBinary(b *testing.B, name string) (pluginv1.PluginServiceClient, int) {
	b.Helper()
	if pluginBinary == "" {
		b.Fatal("no plugin binary: TestMain builds it only when -bench is set")
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  remote.Handshake,
		VersionedPlugins: remote.PluginSet(nil),
		Cmd:              exec.Command(pluginBinary, name),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           hclog.NewNullLogger(),
	})
	b.Cleanup(client.Kill)
	cp, err := client.Client()
	if err != nil {
		b.Fatal(err)
	}
	// The raw service over go-plugin's connection, without the host's
	// Client around it (what Dispense hands out).
	gc, ok := cp.(*plugin.GRPCClient)
	if !ok {
		b.Fatalf("go-plugin gave a %T, not a gRPC client", cp)
	}
	return pluginv1.NewPluginServiceClient(gc.Conn), client.ReattachConfig().Pid
}
