package bench

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// direct is a PluginServiceClient that calls a PluginServiceServer in the
// same process, with no gRPC, TLS, socket or second process in between.
// Requests and responses still go through protobuf encoding, as on the
// wire. It lets the codec-only path measure what the external path costs
// besides the transport: the JSON documents, the JSON Patch and protobuf.
type direct struct{ srv pluginv1.PluginServiceServer }

var _ pluginv1.PluginServiceClient = direct{}

// roundTrip encodes m and decodes it into a new message, as a transport
// does.
func roundTrip[M proto.Message](m M) (M, error) {
	out := m.ProtoReflect().New().Interface().(M)
	data, err := proto.Marshal(m)
	if err != nil {
		return out, err
	}
	return out, proto.Unmarshal(data, out)
}

// call sends req to the server's method and returns its response, both
// round-tripped through protobuf.
func call[Req, Resp proto.Message](ctx context.Context, req Req, method func(context.Context, Req) (Resp, error)) (Resp, error) {
	var zero Resp
	in, err := roundTrip(req)
	if err != nil {
		return zero, err
	}
	resp, err := method(ctx, in)
	if err != nil {
		return zero, err
	}
	return roundTrip(resp)
}

func (d direct) Describe(ctx context.Context, in *pluginv1.DescribeRequest, _ ...grpc.CallOption) (*pluginv1.DescribeResponse, error) {
	return call(ctx, in, d.srv.Describe)
}

func (d direct) Configure(ctx context.Context, in *pluginv1.ConfigureRequest, _ ...grpc.CallOption) (*pluginv1.ConfigureResponse, error) {
	return call(ctx, in, d.srv.Configure)
}

func (d direct) Validate(ctx context.Context, in *pluginv1.ValidateRequest, _ ...grpc.CallOption) (*pluginv1.ValidateResponse, error) {
	return call(ctx, in, d.srv.Validate)
}

func (d direct) EnforceMLPolicy(ctx context.Context, in *pluginv1.EnforceMLPolicyRequest, _ ...grpc.CallOption) (*pluginv1.EnforceMLPolicyResponse, error) {
	return call(ctx, in, d.srv.EnforceMLPolicy)
}

func (d direct) EnforcePodGroupPolicy(ctx context.Context, in *pluginv1.EnforcePodGroupPolicyRequest, _ ...grpc.CallOption) (*pluginv1.EnforcePodGroupPolicyResponse, error) {
	return call(ctx, in, d.srv.EnforcePodGroupPolicy)
}

func (d direct) Build(ctx context.Context, in *pluginv1.BuildRequest, _ ...grpc.CallOption) (*pluginv1.BuildResponse, error) {
	return call(ctx, in, d.srv.Build)
}

func (d direct) Watch(ctx context.Context, in *pluginv1.WatchRequest, _ ...grpc.CallOption) (*pluginv1.WatchResponse, error) {
	return call(ctx, in, d.srv.Watch)
}

func (d direct) Status(ctx context.Context, in *pluginv1.StatusRequest, _ ...grpc.CallOption) (*pluginv1.StatusResponse, error) {
	return call(ctx, in, d.srv.Status)
}
