//go:build !wasip1

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// serve serves h's wire server over go-plugin, as sdk.Serve serves a
// plugin: the SDK's own server would not send its bad answers.
func serve(h *hostile) {
	// sdk.Serve's promise, kept here too: no process outlives its host.
	parent := os.Getppid()
	go func() {
		for range time.Tick(time.Second) {
			if os.Getppid() != parent {
				os.Exit(1)
			}
		}
	}()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: remote.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			remote.ProtocolVersion: {remote.PluginName: &grpcPlugin{srv: &wire{PluginServiceServer: remote.NewServer(h), h: h}}},
		},
		GRPCServer: plugin.DefaultGRPCServer,
		Logger:     hclog.New(&hclog.LoggerOptions{Name: h.name, Level: hclog.Warn, Output: os.Stderr, JSONFormat: true}),
	})
}

// grpcPlugin serves the wire server under go-plugin.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	srv pluginv1.PluginServiceServer
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterPluginServiceServer(s, p.srv)
	return nil
}

func (p *grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, fmt.Errorf("hostile is a plugin, not a host")
}
