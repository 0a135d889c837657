//go:build wasip1

package pluginv1

// This file is written by hand, not generated: it stands in for
// plugin_grpc.pb.go in a WebAssembly guest (GOOS=wasip1), which serves
// PluginService through the exports of sdk/wasmguest rather than gRPC.
// plugin_grpc.pb.go is built for every other GOOS only (make proto adds its
// build constraint), so that a guest links neither google.golang.org/grpc
// nor what it brings (HTTP/2, TLS, net/http, text/template): about 22 MB of
// a 52 MB module. The two files declare the same PluginServiceServer and
// UnimplementedPluginServiceServer, so that a server written for one
// builds for the other; framework/remote's TestGuestServiceMatchesGRPC
// fails when they differ.

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// PluginServiceServer is the server API for PluginService (see
// plugin_grpc.pb.go).
type PluginServiceServer interface {
	Describe(context.Context, *DescribeRequest) (*DescribeResponse, error)
	Configure(context.Context, *ConfigureRequest) (*ConfigureResponse, error)
	Validate(context.Context, *ValidateRequest) (*ValidateResponse, error)
	EnforceMLPolicy(context.Context, *EnforceMLPolicyRequest) (*EnforceMLPolicyResponse, error)
	EnforcePodGroupPolicy(context.Context, *EnforcePodGroupPolicyRequest) (*EnforcePodGroupPolicyResponse, error)
	Build(context.Context, *BuildRequest) (*BuildResponse, error)
	Watch(context.Context, *WatchRequest) (*WatchResponse, error)
	Status(context.Context, *StatusRequest) (*StatusResponse, error)
	mustEmbedUnimplementedPluginServiceServer()
}

// UnimplementedPluginServiceServer answers UNIMPLEMENTED to every method,
// with the messages of plugin_grpc.pb.go.
type UnimplementedPluginServiceServer struct{}

func (UnimplementedPluginServiceServer) Describe(context.Context, *DescribeRequest) (*DescribeResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Describe not implemented")
}
func (UnimplementedPluginServiceServer) Configure(context.Context, *ConfigureRequest) (*ConfigureResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Configure not implemented")
}
func (UnimplementedPluginServiceServer) Validate(context.Context, *ValidateRequest) (*ValidateResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Validate not implemented")
}
func (UnimplementedPluginServiceServer) EnforceMLPolicy(context.Context, *EnforceMLPolicyRequest) (*EnforceMLPolicyResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method EnforceMLPolicy not implemented")
}
func (UnimplementedPluginServiceServer) EnforcePodGroupPolicy(context.Context, *EnforcePodGroupPolicyRequest) (*EnforcePodGroupPolicyResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method EnforcePodGroupPolicy not implemented")
}
func (UnimplementedPluginServiceServer) Build(context.Context, *BuildRequest) (*BuildResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Build not implemented")
}
func (UnimplementedPluginServiceServer) Watch(context.Context, *WatchRequest) (*WatchResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Watch not implemented")
}
func (UnimplementedPluginServiceServer) Status(context.Context, *StatusRequest) (*StatusResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Status not implemented")
}
func (UnimplementedPluginServiceServer) mustEmbedUnimplementedPluginServiceServer() {}
