//go:build wasip1

package sdk

import (
	"os"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	"github.com/trainforge/trainforge/sdk/wasmguest"
)

// This file is the guest's side of the WebAssembly plugin contract
// (package framework/wasm/abi): a main built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugin.wasm .
//
// exports the plugin protocol instead of serving it over gRPC. The
// plugin's code does not change: its main calls Serve or ServeFactory as
// for a binary. The requests are decoded, and the answers encoded, by the
// PluginService adapter external plugins use (remote.NewServer), so a
// plugin answers the same bytes both ways. The exports are in package
// sdk/wasmguest.

func init() {
	// The SDK's logger writes to the host's log function rather than to
	// stderr: the host rate-limits it and forwards it under the plugin's
	// name (stderr goes there too, for the runtime's own messages).
	stderr = wasmguest.Log
}

// Serve registers p as the module's plugin: the calls of the host go to it
// once main has returned. Built for any other GOOS, Serve serves p over
// gRPC (serve.go). A nil p or one whose Describe gives no name ends the
// module with status 1 and says why in the log.
func Serve(p framework.Plugin) {
	if code := checkPlugin(p, stderr); code != 0 {
		os.Exit(code)
	}
	wasmguest.Register(remote.NewServer(p))
}

// ServeFactory registers the plugins f makes from the host's facts as the
// module's plugin, as ServeFactory does for a binary: f makes the plugin
// anew at every Configure.
func ServeFactory(f framework.Factory) {
	if f == nil {
		Serve(nil)
		return
	}
	if code := checkPlugin(f(framework.Host{}), stderr); code != 0 {
		os.Exit(code)
	}
	wasmguest.Register(remote.NewFactoryServer(f))
}
