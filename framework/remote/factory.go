package remote

import (
	"context"
	"sync/atomic"

	"github.com/trainforge/trainforge/framework"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// FactoryServer serves the plugin that a Factory makes from the host's
// facts, so that a plugin out of process is created from the same Handle
// as one in process: a plugin made with an empty Host answers Describe
// (which depends on neither the host nor Configure); each Configure makes
// the plugin anew from the request's facts (ConfigureRequest.host) and
// configures it, and the calls after it go to that plugin.
type FactoryServer struct {
	pluginv1.UnimplementedPluginServiceServer
	factory framework.Factory
	current atomic.Pointer[Server]
}

var _ pluginv1.PluginServiceServer = (*FactoryServer)(nil)

// NewFactoryServer returns the PluginService of the plugins f makes.
func NewFactoryServer(f framework.Factory) *FactoryServer {
	s := &FactoryServer{factory: f}
	s.current.Store(NewServer(f(framework.Host{})))
	return s
}

// Describe answers with the description of the plugin in use.
func (s *FactoryServer) Describe(ctx context.Context, req *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	return s.current.Load().Describe(ctx, req)
}

// Configure makes the plugin from the request's host facts and configures
// it with the request's args; it serves the calls after it once it has
// accepted them. Rejected args leave the plugin in use as it was.
func (s *FactoryServer) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	next := NewServer(s.factory(HostFromProto(req.GetHost())))
	resp, err := next.Configure(ctx, req)
	if err != nil {
		return nil, err
	}
	s.current.Store(next)
	return resp, nil
}

// Validate calls the plugin in use.
func (s *FactoryServer) Validate(ctx context.Context, req *pluginv1.ValidateRequest) (*pluginv1.ValidateResponse, error) {
	return s.current.Load().Validate(ctx, req)
}

// EnforceMLPolicy calls the plugin in use.
func (s *FactoryServer) EnforceMLPolicy(ctx context.Context, req *pluginv1.EnforceMLPolicyRequest) (*pluginv1.EnforceMLPolicyResponse, error) {
	return s.current.Load().EnforceMLPolicy(ctx, req)
}

// EnforcePodGroupPolicy calls the plugin in use.
func (s *FactoryServer) EnforcePodGroupPolicy(ctx context.Context, req *pluginv1.EnforcePodGroupPolicyRequest) (*pluginv1.EnforcePodGroupPolicyResponse, error) {
	return s.current.Load().EnforcePodGroupPolicy(ctx, req)
}

// Build calls the plugin in use.
func (s *FactoryServer) Build(ctx context.Context, req *pluginv1.BuildRequest) (*pluginv1.BuildResponse, error) {
	return s.current.Load().Build(ctx, req)
}

// Watch calls the plugin in use.
func (s *FactoryServer) Watch(ctx context.Context, req *pluginv1.WatchRequest) (*pluginv1.WatchResponse, error) {
	return s.current.Load().Watch(ctx, req)
}

// Status calls the plugin in use.
func (s *FactoryServer) Status(ctx context.Context, req *pluginv1.StatusRequest) (*pluginv1.StatusResponse, error) {
	return s.current.Load().Status(ctx, req)
}

// HostToProto is the ConfigureRequest.host of a Handle; nil for none.
func HostToProto(h framework.Handle) *pluginv1.Host {
	if h == nil {
		return nil
	}
	out := &pluginv1.Host{}
	if s := h.StatusEndpoint(); s != (framework.StatusEndpoint{}) {
		out.StatusEndpoint = &pluginv1.StatusEndpoint{Url: s.URL, CaConfigMapName: s.CAConfigMapName, TokenExpirationSeconds: s.TokenExpirationSeconds}
	}
	return out
}

// HostFromProto is the Handle of a ConfigureRequest.host: an empty Host
// when a host before protocol 1.3 sent none.
func HostFromProto(h *pluginv1.Host) framework.Host {
	s := h.GetStatusEndpoint()
	return framework.Host{Status: framework.StatusEndpoint{
		URL:                    s.GetUrl(),
		CAConfigMapName:        s.GetCaConfigMapName(),
		TokenExpirationSeconds: s.GetTokenExpirationSeconds(),
	}}
}
