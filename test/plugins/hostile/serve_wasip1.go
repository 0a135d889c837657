//go:build wasip1

package main

import (
	"github.com/trainforge/trainforge/framework/remote"
	"github.com/trainforge/trainforge/sdk/wasmguest"
)

// serve registers h's wire server as the module's service, as sdk.Serve
// registers a plugin's: the SDK's own server would not send its bad
// answers.
func serve(h *hostile) {
	wasmguest.Register(&wire{PluginServiceServer: remote.NewServer(h), h: h})
}
