//go:build !wasip1

// The Trainforge plugin protocol, version 1.
//
// A Trainforge plugin is a program that serves PluginService over gRPC. The
// Trainforge controller (the host) starts it with hashicorp/go-plugin, calls
// Describe and Configure once per process start, then calls the extension
// points the plugin declared while it reconciles TrainJobs. A plugin written
// in Go uses the SDK (package github.com/trainforge/trainforge/sdk), which
// does everything below for it; this file is enough to write one in any
// language.
//
// # Starting and handshake (hashicorp/go-plugin, gRPC protocol)
//
// The host runs the plugin's command (for a script, its interpreter with
// the script as an argument; a wrapper script must exec the plugin) with
// these environment variables:
//
//   TRAINFORGE_PLUGIN=6f1e1a4c-trainforge-plugin  the handshake cookie; a
//                              program started without it is not being run
//                              as a plugin and should say so on stderr and
//                              exit with a non-zero status.
//   PLUGIN_PROTOCOL_VERSIONS   the plugin protocol versions the host speaks,
//                              comma separated (today "1"). A plugin answers
//                              with the highest one it also speaks; when it
//                              speaks none of them it says so on stderr and
//                              exits non-zero. (Unset, it answers its own
//                              highest.)
//   PLUGIN_UNIX_SOCKET_DIR     an existing directory, made for this process,
//                              where the plugin creates a new Unix socket of
//                              any name (the path must not exist yet, and
//                              stay under the OS limit of about 100 bytes).
//                              The host removes the directory when the
//                              process ends.
//   PLUGIN_UNIX_SOCKET_GROUP   when set, a group name or number: give the
//                              socket that group and mode 0660.
//   PLUGIN_MIN_PORT, PLUGIN_MAX_PORT
//                              the TCP port range, for systems without Unix
//                              sockets only.
//   PLUGIN_CLIENT_CERT         the host's certificate, PEM (AutoMTLS, always
//                              on): a self-signed CA certificate, fresh for
//                              each start. The plugin serves TLS (1.2 or
//                              later, with ALPN "h2" as every gRPC library
//                              does) with a certificate of its own, requires
//                              a client certificate and trusts this one
//                              alone as its root.
//
// The plugin's own certificate is self-signed, fresh for each start, and
// valid for the DNS name "localhost" (a subjectAltName; the host verifies
// that name, and ignores the common name), with the extended key usage
// serverAuth when it lists any. The host trusts exactly that certificate.
//
// Once it serves, the plugin prints exactly one line to stdout, and keeps
// stdout open: the host takes the first line for the handshake (anything
// printed before it breaks the handshake) and discards what follows, so
// all logging goes to stderr:
//
//   1|<protocol version>|unix|<socket path>|grpc|<certificate>
//
// 1 is go-plugin's core protocol; <certificate> is the plugin's
// certificate, DER, in base64 with the standard alphabet and no "="
// padding (Go's base64.RawStdEncoding: a padded value is refused). With TCP,
// "tcp" and "host:port" replace unix and the path. The host waits for the
// line, then for Describe and Configure to answer, for startTimeout (10s by
// default).
//
// Besides PluginService the plugin serves, on the same server:
//
//   - grpc.health.v1.Health/Check, answering SERVING for the service name
//     "plugin" (and ""). The host checks it when a call finds the
//     connection broken, and kills a plugin that does not answer.
//   - plugin.GRPCController/Shutdown (go-plugin's package "plugin"; request
//     and response are empty messages, zero bytes on the wire): the host
//     calls it to stop the plugin, which then exits; a plugin still running
//     2 seconds later is killed. A plugin without it is simply killed.
//
// The host also opens go-plugin's plugin.GRPCStdio/StreamStdio and
// plugin.GRPCBroker/StartStream streams right after connecting; a plugin
// may leave them unimplemented (UNIMPLEMENTED), which the host accepts.
//
// Logs go to stderr: the host forwards every stderr line to its own log
// under the plugin's name and pid. A line that is a JSON object with
// "@message" keeps its level from "@level" ("trace", "debug", "info",
// "warn" or "error"; the host logs trace and debug at its verbosity 1) and
// its other keys as key/value pairs; "@timestamp" is dropped, and at level
// "error" an "error" key is the error. Other lines are logged at info as
// they are. Lines past 16 KiB are cut.
//
// The plugin exits when the host goes away. On Linux the host asks for the
// parent-death signal SIGKILL; a plugin should still exit when its parent
// process changes (getppid) and on SIGTERM, and the processes it starts must
// die with it.
//
// The protocol version is this package's major version: a breaking change to
// this file makes a trainforge.plugin.v2 package and protocol version 2.
// Additions within v1 are discovered through Describe, or announced in the
// request that may use them.
//
// Additions:
//
//   1.1  EnforceMLPolicyRequest and EnforcePodGroupPolicyRequest carry
//        accepts_info: the host then takes the whole changed Info in the
//        response's info field instead of a JSON Patch. A plugin that
//        ignores the field answers with a patch, as in 1.0, and stays
//        correct; a host that does not set it gets patches.
//   1.2  The requests carry accepts_info_changes, and the responses
//        info_changes: the plugin's changes to Info as it saw Info (see
//        "Version skew" below), which the host applies to the Info it
//        sent. A 1.2 host sets accepts_info_changes and no longer sets
//        accepts_info: a 1.1 plugin answers accepts_info with a whole
//        changed Info even when it was built against an older Info, which
//        lacks the fields that plugin does not know; without it, such a
//        plugin answers with a patch, which keeps them (as far as a patch
//        that names list elements by position can: in elements changed in
//        place and after those appended). A 1.2 plugin answers a 1.2 host
//        with the whole changed Info only when its view of Info is the
//        host's (info, below), else with info_changes; a host that sets
//        neither field gets a patch. A plugin that ignores
//        accepts_info_changes answers with a patch, as in 1.0.
//   1.3  Host facts, runtime validation and create-once are fields of the
//        protocol rather than annotations and rewritten args:
//        ConfigureRequest.host carries the host's facts (the status
//        endpoint); ValidateRequest.kind says whether a TrainJob or a
//        runtime is validated; BuildResponse.create_once lists the objects
//        created once. For skew, a 1.3 host still marks the stand-in
//        TrainJob of a runtime with the annotation
//        trainforge.dev/runtime-check: "true", and still creates once an
//        object whose metadata.annotations has trainforge.dev/apply-policy:
//        "IfNotPresent" (it removes that annotation from the object); a 1.3
//        plugin still answers Build with that annotation on the objects it
//        lists in create_once, for hosts before 1.3, and takes a runtime
//        check from the annotation when kind is unset. These annotations
//        stay as long as protocol version 1 does; a plugin should read
//        kind and set create_once. Tests:
//        TestSkewRuntimeCheck, TestSkewCreateOnce, TestSkewHostFacts
//        (framework/remote).
//   1.4  A built object is one message: BuildRequest.accepts_built tells
//        the plugin that the host reads BuildResponse.built, where each
//        object comes with whether it is created once and its live fields
//        (the fields the host may change while the object runs, and what to
//        tell the user when it may not), in place of the parallel objects
//        and create_once and of the annotation trainforge.dev/live-fields.
//        A 1.4 plugin answers a host that does not set accepts_built as a
//        1.3 plugin does, with the live fields in that annotation; a 1.4
//        host reads objects, create_once and both annotations from a
//        plugin that answers without built, and removes the annotations.
//        Tests: TestSkewBuiltObjects (framework/remote).
//   1.5  StatusRequest.info carries the TrainJob's Info as Build received
//        it (after every Enforce point), when the host has it: a plugin's
//        Status reads what it built from (the JobSet plugin, the range of
//        an elastic step) instead of state it stored on its objects (the
//        annotation trainforge.dev/elastic, no longer written or read).
//        The host has no Info, and leaves the field empty, for a TrainJob
//        whose runtime it does not know (deleted, and no snapshot), and on
//        the status paths that build nothing (a finished TrainJob
//        following its Jobs, objects deleted after they finished): a
//        Status reports from the objects alone then, and says nothing of
//        what it cannot know. A plugin before 1.5 ignores the field; a
//        1.5 plugin on a host before 1.5 gets no info, as when the host
//        has none. Tests: TestSkewStatusInfo (framework/remote),
//        TestCycleStatusInfo (framework), TestStatusInfo
//        (builtin/jobset), TestStatusSeesInfo (internal/controller).
//
// # Version skew
//
// The host and a plugin are built apart, each against its own Info: a
// plugin built against an older one does not know the fields added since
// (at any depth, a newer Kubernetes field in a container, an env var or a
// volume included), and one built against a newer one knows fields the
// host does not. The promise, for a plugin that answers with a patch or
// info_changes computed from its own decoding of the request's Info (what
// the Go SDK and the Python example do):
//
//   - every field of the host's Info that the plugin does not know stays
//     as it was, at every depth, in list elements too (containers, env,
//     volumes, podSets): the element the plugin kept, changed or moved
//     keeps the fields the plugin does not know;
//   - a field the plugin knows and removed is removed, and a field it
//     added or changed is applied;
//   - a field the host does not know is refused (the call fails, with the
//     field's path, and Info stays as it was) when the plugin sets it to a
//     value that is not empty, and ignored when the plugin leaves it as it
//     decoded it, or empty (null, false, 0, "", {} or []) in an element it
//     adds;
//   - a plugin answers every host version: to a host that sets
//     accepts_info_changes (or accepts_info), the whole changed Info when
//     its view of Info is the host's, else info_changes (or a patch); to
//     other hosts, a patch.
//
// The tests that hold the promise: TestSkewOlderPluginKeepsNewerFields,
// TestSkewNewerPluginOnOlderHost, TestSkewOldHostNewPlugin and
// TestSkewOldPluginNewHost (framework/remote), and
// test_enforce_keeps_unknown_keys and test_enforce_removes_known_keys
// (examples/plugins/deepspeed/tests).
//
// # Data
//
// Kubernetes objects and the Info document travel as JSON (UTF-8 bytes), the
// way admission webhooks carry them:
//
//   - a TrainJob is a trainer.kubeflow.org/v1alpha1 TrainJob, with
//     metadata.name and metadata.namespace; spec.trainer.numProcPerNode may
//     be an integer or a string ("4", "auto", "cpu", "gpu");
//   - Info is the document of Trainforge's framework.Info, version "v1": the
//     runtime's policies (runtimePolicy.mlPolicy and
//     runtimePolicy.podGroupPolicy, vendor keys included, as the runtime
//     wrote them), one PodSet per replicatedJob (podSets: name,
//     ancestorStep, replicas, count, containers with image, command, args,
//     env, ports, volumeMounts and resources; volumes; endpoints, the pods'
//     DNS names in rank order; singlePodRequests; podLabels and
//     podAnnotations), the labels and annotations of the objects to build,
//     and template, the runtime's JobSet template after the TrainJob's
//     runtimePatches. A plugin rejects (INVALID_ARGUMENT) a version it does
//     not know, and keeps the fields it does not know.
//
// The host decodes every JSON document of an answer (info, patch and
// info_changes, and the Info the last two make; a built object; a status;
// a field error's bad_value) by the same rules: one JSON value; no key
// given twice in any object; field names matched case-sensitively; a
// field that the host's Info or TrainJobStatus lacks, or a member that a
// patch operation does not define, refused with its path (except the
// empty fields of info_changes, below); and at most
// pluginHost.limits.maxMessageBytes (a built object: maxObjectBytes) in
// size and maxDepth (100 by default) levels deep. A refused answer fails
// the call, with a message naming the document and the field.
//
// Fields with an empty value (an empty list or map, a zero, "") are left
// out of Info, so a patch that adds the first item of a list or map must add
// the list or map itself. The trainer step is the PodSet whose ancestorStep
// is "trainer" (the host has marked older runtimes' "node" or
// "trainer-node"); its main container is "node", else "trainer", else the
// only one. The host recomputes endpoints and singlePodRequests from the
// counts and containers only after every plugin's EnforceMLPolicy: during
// EnforceMLPolicy they reflect the runtime's counts, and the first
// endpoint, <trainjob>-<replicatedJob>-0-0.<subdomain>, is the same either
// way.
//
// # Errors
//
// A method fails by returning a gRPC status: INVALID_ARGUMENT when the input
// (args, Info, TrainJob) is wrong, any other code for a failure of the
// plugin itself. The host does not retry an INVALID_ARGUMENT of Enforce,
// Build or Status: the TrainJob cannot run with its runtime until it
// changes, and its Created condition says so (reason InvalidTrainJob);
// any other failure is retried with backoff. The message is shown to users in a TrainJob condition and
// an Event, prefixed with the plugin's name and the extension point, so it
// should say what is wrong and how to fix it. An extension point the plugin
// did not declare in Describe answers UNIMPLEMENTED; one it declared answers
// anything else, also to an empty request (the conformance checker probes
// each point with one, and expects INVALID_ARGUMENT for an empty Info).
//
// Every call has a deadline (callTimeout in the configuration file, 2s by
// default); the host gives up on a call past it. What happens next is the
// plugin's failure policy: Fail (the reconcile fails and is retried) or
// Ignore (the plugin is skipped for that call). The host may make several
// calls at once, for different TrainJobs.

// Code generated by protoc-gen-go-grpc. DO NOT EDIT.
// versions:
// - protoc-gen-go-grpc v1.6.2
// - protoc             (unknown)
// source: trainforge/plugin/v1/plugin.proto

package pluginv1

import (
	context "context"
	grpc "google.golang.org/grpc"
	codes "google.golang.org/grpc/codes"
	status "google.golang.org/grpc/status"
)

// This is a compile-time assertion to ensure that this generated file
// is compatible with the grpc package it is being compiled against.
// Requires gRPC-Go v1.64.0 or later.
const _ = grpc.SupportPackageIsVersion9

const (
	PluginService_Describe_FullMethodName              = "/trainforge.plugin.v1.PluginService/Describe"
	PluginService_Configure_FullMethodName             = "/trainforge.plugin.v1.PluginService/Configure"
	PluginService_Validate_FullMethodName              = "/trainforge.plugin.v1.PluginService/Validate"
	PluginService_EnforceMLPolicy_FullMethodName       = "/trainforge.plugin.v1.PluginService/EnforceMLPolicy"
	PluginService_EnforcePodGroupPolicy_FullMethodName = "/trainforge.plugin.v1.PluginService/EnforcePodGroupPolicy"
	PluginService_Build_FullMethodName                 = "/trainforge.plugin.v1.PluginService/Build"
	PluginService_Watch_FullMethodName                 = "/trainforge.plugin.v1.PluginService/Watch"
	PluginService_Status_FullMethodName                = "/trainforge.plugin.v1.PluginService/Status"
)

// PluginServiceClient is the client API for PluginService service.
//
// For semantics around ctx use and closing/ending streaming RPCs, please refer to https://pkg.go.dev/google.golang.org/grpc/?tab=doc#ClientConn.NewStream.
//
// PluginService is the set of extension points. A plugin implements Describe
// and the points it lists there; the others answer UNIMPLEMENTED.
type PluginServiceClient interface {
	// Describe says who the plugin is and what it does. It is called after
	// every start of the plugin process, before any other method, and must
	// not depend on Configure.
	Describe(ctx context.Context, in *DescribeRequest, opts ...grpc.CallOption) (*DescribeResponse, error)
	// Configure passes the plugin's args from the configuration file. It is
	// called after every start, after Describe, even when there are no args;
	// a plugin that takes no args may answer UNIMPLEMENTED, which is then
	// accepted when the entry has none (and refused when it has some).
	// Rejected args (INVALID_ARGUMENT) stop the controller's start-up. It is
	// not listed in DescribeResponse.points to be called.
	Configure(ctx context.Context, in *ConfigureRequest, opts ...grpc.CallOption) (*ConfigureResponse, error)
	// Validate checks a TrainJob on the admission path, before it is stored.
	// Problems with the TrainJob are field errors in the response, not a
	// failed call; a failed call rejects the TrainJob with the status message.
	Validate(ctx context.Context, in *ValidateRequest, opts ...grpc.CallOption) (*ValidateResponse, error)
	// EnforceMLPolicy applies the runtime's mlPolicy key that the plugin owns
	// to Info: pod counts, environment variables, ports, volumes.
	EnforceMLPolicy(ctx context.Context, in *EnforceMLPolicyRequest, opts ...grpc.CallOption) (*EnforceMLPolicyResponse, error)
	// EnforcePodGroupPolicy applies the runtime's podGroupPolicy key that the
	// plugin owns to Info, after every plugin's EnforceMLPolicy.
	EnforcePodGroupPolicy(ctx context.Context, in *EnforcePodGroupPolicyRequest, opts ...grpc.CallOption) (*EnforcePodGroupPolicyResponse, error)
	// Build returns the objects to create for a TrainJob.
	Build(ctx context.Context, in *BuildRequest, opts ...grpc.CallOption) (*BuildResponse, error)
	// Watch returns the kinds the controller must watch for the plugin,
	// besides the kinds it builds, and how an object of each kind leads to
	// its TrainJob. It is called after every start.
	Watch(ctx context.Context, in *WatchRequest, opts ...grpc.CallOption) (*WatchResponse, error)
	// Status turns the objects a TrainJob owns into the TrainJob's status.
	Status(ctx context.Context, in *StatusRequest, opts ...grpc.CallOption) (*StatusResponse, error)
}

type pluginServiceClient struct {
	cc grpc.ClientConnInterface
}

func NewPluginServiceClient(cc grpc.ClientConnInterface) PluginServiceClient {
	return &pluginServiceClient{cc}
}

func (c *pluginServiceClient) Describe(ctx context.Context, in *DescribeRequest, opts ...grpc.CallOption) (*DescribeResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(DescribeResponse)
	err := c.cc.Invoke(ctx, PluginService_Describe_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *pluginServiceClient) Configure(ctx context.Context, in *ConfigureRequest, opts ...grpc.CallOption) (*ConfigureResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ConfigureResponse)
	err := c.cc.Invoke(ctx, PluginService_Configure_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *pluginServiceClient) Validate(ctx context.Context, in *ValidateRequest, opts ...grpc.CallOption) (*ValidateResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ValidateResponse)
	err := c.cc.Invoke(ctx, PluginService_Validate_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *pluginServiceClient) EnforceMLPolicy(ctx context.Context, in *EnforceMLPolicyRequest, opts ...grpc.CallOption) (*EnforceMLPolicyResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(EnforceMLPolicyResponse)
	err := c.cc.Invoke(ctx, PluginService_EnforceMLPolicy_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *pluginServiceClient) EnforcePodGroupPolicy(ctx context.Context, in *EnforcePodGroupPolicyRequest, opts ...grpc.CallOption) (*EnforcePodGroupPolicyResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(EnforcePodGroupPolicyResponse)
	err := c.cc.Invoke(ctx, PluginService_EnforcePodGroupPolicy_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *pluginServiceClient) Build(ctx context.Context, in *BuildRequest, opts ...grpc.CallOption) (*BuildResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(BuildResponse)
	err := c.cc.Invoke(ctx, PluginService_Build_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *pluginServiceClient) Watch(ctx context.Context, in *WatchRequest, opts ...grpc.CallOption) (*WatchResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(WatchResponse)
	err := c.cc.Invoke(ctx, PluginService_Watch_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *pluginServiceClient) Status(ctx context.Context, in *StatusRequest, opts ...grpc.CallOption) (*StatusResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(StatusResponse)
	err := c.cc.Invoke(ctx, PluginService_Status_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PluginServiceServer is the server API for PluginService service.
// All implementations must embed UnimplementedPluginServiceServer
// for forward compatibility.
//
// PluginService is the set of extension points. A plugin implements Describe
// and the points it lists there; the others answer UNIMPLEMENTED.
type PluginServiceServer interface {
	// Describe says who the plugin is and what it does. It is called after
	// every start of the plugin process, before any other method, and must
	// not depend on Configure.
	Describe(context.Context, *DescribeRequest) (*DescribeResponse, error)
	// Configure passes the plugin's args from the configuration file. It is
	// called after every start, after Describe, even when there are no args;
	// a plugin that takes no args may answer UNIMPLEMENTED, which is then
	// accepted when the entry has none (and refused when it has some).
	// Rejected args (INVALID_ARGUMENT) stop the controller's start-up. It is
	// not listed in DescribeResponse.points to be called.
	Configure(context.Context, *ConfigureRequest) (*ConfigureResponse, error)
	// Validate checks a TrainJob on the admission path, before it is stored.
	// Problems with the TrainJob are field errors in the response, not a
	// failed call; a failed call rejects the TrainJob with the status message.
	Validate(context.Context, *ValidateRequest) (*ValidateResponse, error)
	// EnforceMLPolicy applies the runtime's mlPolicy key that the plugin owns
	// to Info: pod counts, environment variables, ports, volumes.
	EnforceMLPolicy(context.Context, *EnforceMLPolicyRequest) (*EnforceMLPolicyResponse, error)
	// EnforcePodGroupPolicy applies the runtime's podGroupPolicy key that the
	// plugin owns to Info, after every plugin's EnforceMLPolicy.
	EnforcePodGroupPolicy(context.Context, *EnforcePodGroupPolicyRequest) (*EnforcePodGroupPolicyResponse, error)
	// Build returns the objects to create for a TrainJob.
	Build(context.Context, *BuildRequest) (*BuildResponse, error)
	// Watch returns the kinds the controller must watch for the plugin,
	// besides the kinds it builds, and how an object of each kind leads to
	// its TrainJob. It is called after every start.
	Watch(context.Context, *WatchRequest) (*WatchResponse, error)
	// Status turns the objects a TrainJob owns into the TrainJob's status.
	Status(context.Context, *StatusRequest) (*StatusResponse, error)
	mustEmbedUnimplementedPluginServiceServer()
}

// UnimplementedPluginServiceServer must be embedded to have
// forward compatible implementations.
//
// NOTE: this should be embedded by value instead of pointer to avoid a nil
// pointer dereference when methods are called.
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
func (UnimplementedPluginServiceServer) testEmbeddedByValue()                       {}

// UnsafePluginServiceServer may be embedded to opt out of forward compatibility for this service.
// Use of this interface is not recommended, as added methods to PluginServiceServer will
// result in compilation errors.
type UnsafePluginServiceServer interface {
	mustEmbedUnimplementedPluginServiceServer()
}

func RegisterPluginServiceServer(s grpc.ServiceRegistrar, srv PluginServiceServer) {
	// If the following call panics, it indicates UnimplementedPluginServiceServer was
	// embedded by pointer and is nil.  This will cause panics if an
	// unimplemented method is ever invoked, so we test this at initialization
	// time to prevent it from happening at runtime later due to I/O.
	if t, ok := srv.(interface{ testEmbeddedByValue() }); ok {
		t.testEmbeddedByValue()
	}
	s.RegisterService(&PluginService_ServiceDesc, srv)
}

func _PluginService_Describe_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(DescribeRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).Describe(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_Describe_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).Describe(ctx, req.(*DescribeRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _PluginService_Configure_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ConfigureRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).Configure(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_Configure_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).Configure(ctx, req.(*ConfigureRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _PluginService_Validate_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ValidateRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).Validate(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_Validate_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).Validate(ctx, req.(*ValidateRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _PluginService_EnforceMLPolicy_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(EnforceMLPolicyRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).EnforceMLPolicy(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_EnforceMLPolicy_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).EnforceMLPolicy(ctx, req.(*EnforceMLPolicyRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _PluginService_EnforcePodGroupPolicy_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(EnforcePodGroupPolicyRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).EnforcePodGroupPolicy(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_EnforcePodGroupPolicy_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).EnforcePodGroupPolicy(ctx, req.(*EnforcePodGroupPolicyRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _PluginService_Build_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(BuildRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).Build(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_Build_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).Build(ctx, req.(*BuildRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _PluginService_Watch_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(WatchRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).Watch(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_Watch_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).Watch(ctx, req.(*WatchRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _PluginService_Status_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(StatusRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).Status(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_Status_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).Status(ctx, req.(*StatusRequest))
	}
	return interceptor(ctx, in, info, handler)
}

// PluginService_ServiceDesc is the grpc.ServiceDesc for PluginService service.
// It's only intended for direct use with grpc.RegisterService,
// and not to be introspected or modified (even as a copy)
var PluginService_ServiceDesc = grpc.ServiceDesc{
	ServiceName: "trainforge.plugin.v1.PluginService",
	HandlerType: (*PluginServiceServer)(nil),
	Methods: []grpc.MethodDesc{
		{
			MethodName: "Describe",
			Handler:    _PluginService_Describe_Handler,
		},
		{
			MethodName: "Configure",
			Handler:    _PluginService_Configure_Handler,
		},
		{
			MethodName: "Validate",
			Handler:    _PluginService_Validate_Handler,
		},
		{
			MethodName: "EnforceMLPolicy",
			Handler:    _PluginService_EnforceMLPolicy_Handler,
		},
		{
			MethodName: "EnforcePodGroupPolicy",
			Handler:    _PluginService_EnforcePodGroupPolicy_Handler,
		},
		{
			MethodName: "Build",
			Handler:    _PluginService_Build_Handler,
		},
		{
			MethodName: "Watch",
			Handler:    _PluginService_Watch_Handler,
		},
		{
			MethodName: "Status",
			Handler:    _PluginService_Status_Handler,
		},
	},
	Streams:  []grpc.StreamDesc{},
	Metadata: "trainforge/plugin/v1/plugin.proto",
}
