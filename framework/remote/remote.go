//go:build !wasip1

// Package remote carries the framework's plugin interfaces over gRPC, the
// way hashicorp/go-plugin's examples do: the handshake both sides share, a
// server adapter that serves a framework.Plugin as the PluginService of
// proto/trainforge/plugin/v1, and a client adapter that turns that service
// back into the framework's interfaces.
//
// Plugin authors use package sdk, which serves through this package; the
// controller's external-plugin host (package external) dials through it.
package remote

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/trainforge/trainforge/framework"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// ProtocolVersion is the plugin protocol version: the major version of the
// proto package trainforge.plugin.v1. go-plugin negotiates it.
const ProtocolVersion = 1

// PluginName is the name of the one plugin a Trainforge plugin binary
// serves in go-plugin's plugin set.
const PluginName = "trainforge"

// Handshake is the go-plugin handshake of Trainforge plugins. The cookie
// only tells a plugin binary that a Trainforge host started it; it is not a
// security measure (AutoMTLS and the sha256 check are).
var Handshake = plugin.HandshakeConfig{
	MagicCookieKey:   "TRAINFORGE_PLUGIN",
	MagicCookieValue: "6f1e1a4c-trainforge-plugin",
}

// PluginSet returns the versioned plugin sets of a Trainforge plugin binary
// serving impl, or of a host when impl is nil.
func PluginSet(impl framework.Plugin) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &GRPCPlugin{Impl: impl}},
	}
}

// FactoryPluginSet returns the versioned plugin sets of a Trainforge plugin
// binary serving the plugins f makes from the host's facts
// (NewFactoryServer).
func FactoryPluginSet(f framework.Factory) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &GRPCPlugin{Factory: f}},
	}
}

// GRPCPlugin is the go-plugin plugin of the Trainforge protocol.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is the plugin served, on the plugin side; or Factory makes it,
	// from the host's facts at each Configure.
	Impl    framework.Plugin
	Factory framework.Factory
}

// GRPCServer registers the PluginService of Impl, or of Factory's
// plugins.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Factory != nil {
		pluginv1.RegisterPluginServiceServer(s, NewFactoryServer(p.Factory))
		return nil
	}
	pluginv1.RegisterPluginServiceServer(s, NewServer(p.Impl))
	return nil
}

// GRPCClient returns a *Client over the connection, with no Limits: what
// go-plugin's Dispense hands out. The host of external plugins makes its
// own, with the configured limits.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return NewClient(pluginv1.NewPluginServiceClient(c), Limits{}), nil
}
