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

// Code generated by protoc-gen-go. DO NOT EDIT.
// versions:
// 	protoc-gen-go v1.36.12
// 	protoc        (unknown)
// source: trainforge/plugin/v1/plugin.proto

package pluginv1

import (
	protoreflect "google.golang.org/protobuf/reflect/protoreflect"
	protoimpl "google.golang.org/protobuf/runtime/protoimpl"
	reflect "reflect"
	sync "sync"
	unsafe "unsafe"
)

const (
	// Verify that this generated code is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(20 - protoimpl.MinVersion)
	// Verify that runtime/protoimpl is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(protoimpl.MaxVersion - 20)
)

// ExtensionPoint names one method of PluginService other than Describe.
type ExtensionPoint int32

const (
	ExtensionPoint_EXTENSION_POINT_UNSPECIFIED              ExtensionPoint = 0
	ExtensionPoint_EXTENSION_POINT_CONFIGURE                ExtensionPoint = 1
	ExtensionPoint_EXTENSION_POINT_VALIDATE                 ExtensionPoint = 2
	ExtensionPoint_EXTENSION_POINT_ENFORCE_ML_POLICY        ExtensionPoint = 3
	ExtensionPoint_EXTENSION_POINT_ENFORCE_POD_GROUP_POLICY ExtensionPoint = 4
	ExtensionPoint_EXTENSION_POINT_BUILD                    ExtensionPoint = 5
	ExtensionPoint_EXTENSION_POINT_WATCH                    ExtensionPoint = 6
	ExtensionPoint_EXTENSION_POINT_STATUS                   ExtensionPoint = 7
)

// Enum value maps for ExtensionPoint.
var (
	ExtensionPoint_name = map[int32]string{
		0: "EXTENSION_POINT_UNSPECIFIED",
		1: "EXTENSION_POINT_CONFIGURE",
		2: "EXTENSION_POINT_VALIDATE",
		3: "EXTENSION_POINT_ENFORCE_ML_POLICY",
		4: "EXTENSION_POINT_ENFORCE_POD_GROUP_POLICY",
		5: "EXTENSION_POINT_BUILD",
		6: "EXTENSION_POINT_WATCH",
		7: "EXTENSION_POINT_STATUS",
	}
	ExtensionPoint_value = map[string]int32{
		"EXTENSION_POINT_UNSPECIFIED":              0,
		"EXTENSION_POINT_CONFIGURE":                1,
		"EXTENSION_POINT_VALIDATE":                 2,
		"EXTENSION_POINT_ENFORCE_ML_POLICY":        3,
		"EXTENSION_POINT_ENFORCE_POD_GROUP_POLICY": 4,
		"EXTENSION_POINT_BUILD":                    5,
		"EXTENSION_POINT_WATCH":                    6,
		"EXTENSION_POINT_STATUS":                   7,
	}
)

func (x ExtensionPoint) Enum() *ExtensionPoint {
	p := new(ExtensionPoint)
	*p = x
	return p
}

func (x ExtensionPoint) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (ExtensionPoint) Descriptor() protoreflect.EnumDescriptor {
	return file_trainforge_plugin_v1_plugin_proto_enumTypes[0].Descriptor()
}

func (ExtensionPoint) Type() protoreflect.EnumType {
	return &file_trainforge_plugin_v1_plugin_proto_enumTypes[0]
}

func (x ExtensionPoint) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use ExtensionPoint.Descriptor instead.
func (ExtensionPoint) EnumDescriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{0}
}

// ValidationKind says what a ValidateRequest validates.
type ValidationKind int32

const (
	// A host before protocol 1.3: a TrainJob, or a runtime when
	// new_train_job has the annotation trainforge.dev/runtime-check: "true".
	ValidationKind_VALIDATION_KIND_UNSPECIFIED ValidationKind = 0
	// A TrainJob being created or updated.
	ValidationKind_VALIDATION_KIND_TRAIN_JOB ValidationKind = 1
	// A TrainingRuntime or ClusterTrainingRuntime being created or updated;
	// new_train_job stands for it.
	ValidationKind_VALIDATION_KIND_RUNTIME ValidationKind = 2
)

// Enum value maps for ValidationKind.
var (
	ValidationKind_name = map[int32]string{
		0: "VALIDATION_KIND_UNSPECIFIED",
		1: "VALIDATION_KIND_TRAIN_JOB",
		2: "VALIDATION_KIND_RUNTIME",
	}
	ValidationKind_value = map[string]int32{
		"VALIDATION_KIND_UNSPECIFIED": 0,
		"VALIDATION_KIND_TRAIN_JOB":   1,
		"VALIDATION_KIND_RUNTIME":     2,
	}
)

func (x ValidationKind) Enum() *ValidationKind {
	p := new(ValidationKind)
	*p = x
	return p
}

func (x ValidationKind) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (ValidationKind) Descriptor() protoreflect.EnumDescriptor {
	return file_trainforge_plugin_v1_plugin_proto_enumTypes[1].Descriptor()
}

func (ValidationKind) Type() protoreflect.EnumType {
	return &file_trainforge_plugin_v1_plugin_proto_enumTypes[1]
}

func (x ValidationKind) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use ValidationKind.Descriptor instead.
func (ValidationKind) EnumDescriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{1}
}

// FieldErrorType is the kind of a field error, as Kubernetes names them.
type FieldErrorType int32

const (
	FieldErrorType_FIELD_ERROR_TYPE_UNSPECIFIED   FieldErrorType = 0
	FieldErrorType_FIELD_ERROR_TYPE_INVALID       FieldErrorType = 1
	FieldErrorType_FIELD_ERROR_TYPE_REQUIRED      FieldErrorType = 2
	FieldErrorType_FIELD_ERROR_TYPE_FORBIDDEN     FieldErrorType = 3
	FieldErrorType_FIELD_ERROR_TYPE_NOT_SUPPORTED FieldErrorType = 4
	FieldErrorType_FIELD_ERROR_TYPE_DUPLICATE     FieldErrorType = 5
	FieldErrorType_FIELD_ERROR_TYPE_NOT_FOUND     FieldErrorType = 6
	FieldErrorType_FIELD_ERROR_TYPE_TOO_LONG      FieldErrorType = 7
	FieldErrorType_FIELD_ERROR_TYPE_TOO_MANY      FieldErrorType = 8
	FieldErrorType_FIELD_ERROR_TYPE_INTERNAL      FieldErrorType = 9
)

// Enum value maps for FieldErrorType.
var (
	FieldErrorType_name = map[int32]string{
		0: "FIELD_ERROR_TYPE_UNSPECIFIED",
		1: "FIELD_ERROR_TYPE_INVALID",
		2: "FIELD_ERROR_TYPE_REQUIRED",
		3: "FIELD_ERROR_TYPE_FORBIDDEN",
		4: "FIELD_ERROR_TYPE_NOT_SUPPORTED",
		5: "FIELD_ERROR_TYPE_DUPLICATE",
		6: "FIELD_ERROR_TYPE_NOT_FOUND",
		7: "FIELD_ERROR_TYPE_TOO_LONG",
		8: "FIELD_ERROR_TYPE_TOO_MANY",
		9: "FIELD_ERROR_TYPE_INTERNAL",
	}
	FieldErrorType_value = map[string]int32{
		"FIELD_ERROR_TYPE_UNSPECIFIED":   0,
		"FIELD_ERROR_TYPE_INVALID":       1,
		"FIELD_ERROR_TYPE_REQUIRED":      2,
		"FIELD_ERROR_TYPE_FORBIDDEN":     3,
		"FIELD_ERROR_TYPE_NOT_SUPPORTED": 4,
		"FIELD_ERROR_TYPE_DUPLICATE":     5,
		"FIELD_ERROR_TYPE_NOT_FOUND":     6,
		"FIELD_ERROR_TYPE_TOO_LONG":      7,
		"FIELD_ERROR_TYPE_TOO_MANY":      8,
		"FIELD_ERROR_TYPE_INTERNAL":      9,
	}
)

func (x FieldErrorType) Enum() *FieldErrorType {
	p := new(FieldErrorType)
	*p = x
	return p
}

func (x FieldErrorType) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (FieldErrorType) Descriptor() protoreflect.EnumDescriptor {
	return file_trainforge_plugin_v1_plugin_proto_enumTypes[2].Descriptor()
}

func (FieldErrorType) Type() protoreflect.EnumType {
	return &file_trainforge_plugin_v1_plugin_proto_enumTypes[2]
}

func (x FieldErrorType) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use FieldErrorType.Descriptor instead.
func (FieldErrorType) EnumDescriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{2}
}

// Mapping says how an object of a watched kind leads to its TrainJob.
type Mapping int32

const (
	Mapping_MAPPING_UNSPECIFIED Mapping = 0
	// The TrainJob that is the object's controller owner.
	Mapping_MAPPING_OWNER_REFERENCE Mapping = 1
	// The TrainJob named by the value of WatchSource.label, in the object's
	// namespace.
	Mapping_MAPPING_LABEL Mapping = 2
)

// Enum value maps for Mapping.
var (
	Mapping_name = map[int32]string{
		0: "MAPPING_UNSPECIFIED",
		1: "MAPPING_OWNER_REFERENCE",
		2: "MAPPING_LABEL",
	}
	Mapping_value = map[string]int32{
		"MAPPING_UNSPECIFIED":     0,
		"MAPPING_OWNER_REFERENCE": 1,
		"MAPPING_LABEL":           2,
	}
)

func (x Mapping) Enum() *Mapping {
	p := new(Mapping)
	*p = x
	return p
}

func (x Mapping) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (Mapping) Descriptor() protoreflect.EnumDescriptor {
	return file_trainforge_plugin_v1_plugin_proto_enumTypes[3].Descriptor()
}

func (Mapping) Type() protoreflect.EnumType {
	return &file_trainforge_plugin_v1_plugin_proto_enumTypes[3]
}

func (x Mapping) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use Mapping.Descriptor instead.
func (Mapping) EnumDescriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{3}
}

// GroupVersionKind names a Kubernetes kind; group is empty for the core
// group ("", "v1", "ConfigMap").
type GroupVersionKind struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	Group         string                 `protobuf:"bytes,1,opt,name=group,proto3" json:"group,omitempty"`
	Version       string                 `protobuf:"bytes,2,opt,name=version,proto3" json:"version,omitempty"`
	Kind          string                 `protobuf:"bytes,3,opt,name=kind,proto3" json:"kind,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GroupVersionKind) Reset() {
	*x = GroupVersionKind{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[0]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GroupVersionKind) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GroupVersionKind) ProtoMessage() {}

func (x *GroupVersionKind) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[0]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GroupVersionKind.ProtoReflect.Descriptor instead.
func (*GroupVersionKind) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{0}
}

func (x *GroupVersionKind) GetGroup() string {
	if x != nil {
		return x.Group
	}
	return ""
}

func (x *GroupVersionKind) GetVersion() string {
	if x != nil {
		return x.Version
	}
	return ""
}

func (x *GroupVersionKind) GetKind() string {
	if x != nil {
		return x.Kind
	}
	return ""
}

// DescribeRequest is empty.
type DescribeRequest struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DescribeRequest) Reset() {
	*x = DescribeRequest{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[1]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DescribeRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DescribeRequest) ProtoMessage() {}

func (x *DescribeRequest) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[1]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DescribeRequest.ProtoReflect.Descriptor instead.
func (*DescribeRequest) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{1}
}

// DescribeResponse is what a plugin says about itself. The host decides from
// it which jobs the plugin takes part in and which methods it calls.
type DescribeResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The plugin's name. It must equal the name of the plugin's entry in the
	// configuration file, or the controller refuses to start.
	Name string `protobuf:"bytes,1,opt,name=name,proto3" json:"name,omitempty"`
	// The plugin's own version, for logs.
	Version string `protobuf:"bytes,2,opt,name=version,proto3" json:"version,omitempty"`
	// The extension points the plugin implements. The host calls no other.
	Points []ExtensionPoint `protobuf:"varint,3,rep,packed,name=points,proto3,enum=trainforge.plugin.v1.ExtensionPoint" json:"points,omitempty"`
	// The mlPolicy keys the plugin owns (for example "mpi"). A plugin that
	// owns no key, in neither list, takes part in every TrainJob; one that
	// owns keys takes part in the TrainJobs whose runtime sets one of them.
	// "*" owns every job; "" owns the jobs whose mlPolicy sets no framework
	// key.
	MlPolicyKeys []string `protobuf:"bytes,4,rep,name=ml_policy_keys,json=mlPolicyKeys,proto3" json:"ml_policy_keys,omitempty"`
	// The podGroupPolicy keys the plugin owns, with the same rules.
	PodGroupPolicyKeys []string `protobuf:"bytes,5,rep,name=pod_group_policy_keys,json=podGroupPolicyKeys,proto3" json:"pod_group_policy_keys,omitempty"`
	// The kinds of the objects Build returns. Build may return no other kind,
	// and the controller watches these kinds through their owner reference.
	Builds        []*GroupVersionKind `protobuf:"bytes,6,rep,name=builds,proto3" json:"builds,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DescribeResponse) Reset() {
	*x = DescribeResponse{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[2]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DescribeResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DescribeResponse) ProtoMessage() {}

func (x *DescribeResponse) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[2]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DescribeResponse.ProtoReflect.Descriptor instead.
func (*DescribeResponse) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{2}
}

func (x *DescribeResponse) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *DescribeResponse) GetVersion() string {
	if x != nil {
		return x.Version
	}
	return ""
}

func (x *DescribeResponse) GetPoints() []ExtensionPoint {
	if x != nil {
		return x.Points
	}
	return nil
}

func (x *DescribeResponse) GetMlPolicyKeys() []string {
	if x != nil {
		return x.MlPolicyKeys
	}
	return nil
}

func (x *DescribeResponse) GetPodGroupPolicyKeys() []string {
	if x != nil {
		return x.PodGroupPolicyKeys
	}
	return nil
}

func (x *DescribeResponse) GetBuilds() []*GroupVersionKind {
	if x != nil {
		return x.Builds
	}
	return nil
}

// ConfigureRequest carries the plugin's args and the host's facts.
type ConfigureRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The entry's args from the configuration file as a JSON value, or empty
	// when the entry has none. Treat "null" as none too.
	Args []byte `protobuf:"bytes,1,opt,name=args,proto3" json:"args,omitempty"`
	// The host's facts (protocol 1.3), the same with every Configure of one
	// host; unset from hosts before 1.3. The Go SDK creates a plugin served
	// with sdk.ServeFactory from them (framework.Handle), as the controller
	// creates an in-process plugin.
	Host          *Host `protobuf:"bytes,2,opt,name=host,proto3" json:"host,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ConfigureRequest) Reset() {
	*x = ConfigureRequest{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[3]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ConfigureRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ConfigureRequest) ProtoMessage() {}

func (x *ConfigureRequest) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[3]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ConfigureRequest.ProtoReflect.Descriptor instead.
func (*ConfigureRequest) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{3}
}

func (x *ConfigureRequest) GetArgs() []byte {
	if x != nil {
		return x.Args
	}
	return nil
}

func (x *ConfigureRequest) GetHost() *Host {
	if x != nil {
		return x.Host
	}
	return nil
}

// Host is what the host tells every plugin about itself, so that no
// plugin's args repeat it.
type Host struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Where training code reports its progress; unset when the host has no
	// status endpoint.
	StatusEndpoint *StatusEndpoint `protobuf:"bytes,1,opt,name=status_endpoint,json=statusEndpoint,proto3" json:"status_endpoint,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *Host) Reset() {
	*x = Host{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[4]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Host) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Host) ProtoMessage() {}

func (x *Host) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[4]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Host.ProtoReflect.Descriptor instead.
func (*Host) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{4}
}

func (x *Host) GetStatusEndpoint() *StatusEndpoint {
	if x != nil {
		return x.StatusEndpoint
	}
	return nil
}

// StatusEndpoint is the host's status endpoint, where training code
// reports its progress with Kubeflow Trainer's protocol.
type StatusEndpoint struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The base URL as pods reach it, https://<host>[:<port>]; a TrainJob's
	// own is this plus
	// /apis/trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status.
	Url string `protobuf:"bytes,1,opt,name=url,proto3" json:"url,omitempty"`
	// The ConfigMap, in each TrainJob's namespace, whose key ca.crt holds
	// the CA of the endpoint's certificate.
	CaConfigMapName string `protobuf:"bytes,2,opt,name=ca_config_map_name,json=caConfigMapName,proto3" json:"ca_config_map_name,omitempty"`
	// The lifetime of the service-account token a pod presents to it.
	TokenExpirationSeconds int64 `protobuf:"varint,3,opt,name=token_expiration_seconds,json=tokenExpirationSeconds,proto3" json:"token_expiration_seconds,omitempty"`
	unknownFields          protoimpl.UnknownFields
	sizeCache              protoimpl.SizeCache
}

func (x *StatusEndpoint) Reset() {
	*x = StatusEndpoint{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[5]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *StatusEndpoint) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*StatusEndpoint) ProtoMessage() {}

func (x *StatusEndpoint) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[5]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use StatusEndpoint.ProtoReflect.Descriptor instead.
func (*StatusEndpoint) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{5}
}

func (x *StatusEndpoint) GetUrl() string {
	if x != nil {
		return x.Url
	}
	return ""
}

func (x *StatusEndpoint) GetCaConfigMapName() string {
	if x != nil {
		return x.CaConfigMapName
	}
	return ""
}

func (x *StatusEndpoint) GetTokenExpirationSeconds() int64 {
	if x != nil {
		return x.TokenExpirationSeconds
	}
	return 0
}

// ConfigureResponse is empty: a rejection is an INVALID_ARGUMENT status.
type ConfigureResponse struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ConfigureResponse) Reset() {
	*x = ConfigureResponse{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[6]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ConfigureResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ConfigureResponse) ProtoMessage() {}

func (x *ConfigureResponse) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[6]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ConfigureResponse.ProtoReflect.Descriptor instead.
func (*ConfigureResponse) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{6}
}

// ValidateRequest carries a TrainJob being created or updated, or a
// runtime (kind).
//
// The host also validates runtimes: when a TrainingRuntime or
// ClusterTrainingRuntime is created or updated, kind is
// VALIDATION_KIND_RUNTIME and new_train_job is a stand-in TrainJob named as
// the runtime that overrides nothing. A plugin then reports only what is
// wrong with the runtime itself, not a default that a real TrainJob could
// still override (the runtime's mlPolicy.numNodes, say). For plugins
// before protocol 1.3 the stand-in also carries the annotation
// trainforge.dev/runtime-check: "true"; a plugin takes a request whose kind
// is unset (a host before 1.3) with that annotation for a runtime check.
type ValidateRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Info for the new TrainJob, before any Enforce point has run: the
	// runtime and the TrainJob's overrides only.
	Info []byte `protobuf:"bytes,1,opt,name=info,proto3" json:"info,omitempty"`
	// The stored TrainJob, JSON; empty on create.
	OldTrainJob []byte `protobuf:"bytes,2,opt,name=old_train_job,json=oldTrainJob,proto3" json:"old_train_job,omitempty"`
	// The TrainJob as submitted, JSON.
	NewTrainJob []byte `protobuf:"bytes,3,opt,name=new_train_job,json=newTrainJob,proto3" json:"new_train_job,omitempty"`
	// What is validated (protocol 1.3); unset from hosts before 1.3.
	Kind          ValidationKind `protobuf:"varint,4,opt,name=kind,proto3,enum=trainforge.plugin.v1.ValidationKind" json:"kind,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ValidateRequest) Reset() {
	*x = ValidateRequest{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[7]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ValidateRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ValidateRequest) ProtoMessage() {}

func (x *ValidateRequest) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[7]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ValidateRequest.ProtoReflect.Descriptor instead.
func (*ValidateRequest) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{7}
}

func (x *ValidateRequest) GetInfo() []byte {
	if x != nil {
		return x.Info
	}
	return nil
}

func (x *ValidateRequest) GetOldTrainJob() []byte {
	if x != nil {
		return x.OldTrainJob
	}
	return nil
}

func (x *ValidateRequest) GetNewTrainJob() []byte {
	if x != nil {
		return x.NewTrainJob
	}
	return nil
}

func (x *ValidateRequest) GetKind() ValidationKind {
	if x != nil {
		return x.Kind
	}
	return ValidationKind_VALIDATION_KIND_UNSPECIFIED
}

// ValidateResponse lists what is wrong with the TrainJob.
type ValidateResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Warnings shown to the user; the TrainJob is admitted.
	Warnings []string `protobuf:"bytes,1,rep,name=warnings,proto3" json:"warnings,omitempty"`
	// Errors; any one rejects the TrainJob.
	FieldErrors   []*FieldError `protobuf:"bytes,2,rep,name=field_errors,json=fieldErrors,proto3" json:"field_errors,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ValidateResponse) Reset() {
	*x = ValidateResponse{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[8]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ValidateResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ValidateResponse) ProtoMessage() {}

func (x *ValidateResponse) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[8]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ValidateResponse.ProtoReflect.Descriptor instead.
func (*ValidateResponse) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{8}
}

func (x *ValidateResponse) GetWarnings() []string {
	if x != nil {
		return x.Warnings
	}
	return nil
}

func (x *ValidateResponse) GetFieldErrors() []*FieldError {
	if x != nil {
		return x.FieldErrors
	}
	return nil
}

// FieldError is one problem with one field of the TrainJob.
type FieldError struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	Type  FieldErrorType         `protobuf:"varint,1,opt,name=type,proto3,enum=trainforge.plugin.v1.FieldErrorType" json:"type,omitempty"`
	// The field's path in the TrainJob, for example
	// "spec.trainer.numProcPerNode" or "spec.trainer.env[0].name".
	Field string `protobuf:"bytes,2,opt,name=field,proto3" json:"field,omitempty"`
	// The offending value as JSON (a string is "\"quoted\""), or empty.
	BadValue []byte `protobuf:"bytes,3,opt,name=bad_value,json=badValue,proto3" json:"bad_value,omitempty"`
	// What is wrong and how to fix it.
	Detail        string `protobuf:"bytes,4,opt,name=detail,proto3" json:"detail,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *FieldError) Reset() {
	*x = FieldError{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[9]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *FieldError) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*FieldError) ProtoMessage() {}

func (x *FieldError) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[9]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use FieldError.ProtoReflect.Descriptor instead.
func (*FieldError) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{9}
}

func (x *FieldError) GetType() FieldErrorType {
	if x != nil {
		return x.Type
	}
	return FieldErrorType_FIELD_ERROR_TYPE_UNSPECIFIED
}

func (x *FieldError) GetField() string {
	if x != nil {
		return x.Field
	}
	return ""
}

func (x *FieldError) GetBadValue() []byte {
	if x != nil {
		return x.BadValue
	}
	return nil
}

func (x *FieldError) GetDetail() string {
	if x != nil {
		return x.Detail
	}
	return ""
}

// EnforceMLPolicyRequest carries the job being reconciled.
type EnforceMLPolicyRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Info, JSON, as the previous plugins left it.
	Info []byte `protobuf:"bytes,1,opt,name=info,proto3" json:"info,omitempty"`
	// The TrainJob, JSON. Read it; changes to it are not possible.
	TrainJob []byte `protobuf:"bytes,2,opt,name=train_job,json=trainJob,proto3" json:"train_job,omitempty"`
	// True when the host accepts the whole changed Info in
	// EnforceMLPolicyResponse.info instead of a patch. Hosts of protocol 1.1
	// set it; hosts since 1.2 do not (they set accepts_info_changes). A
	// plugin that ignores it answers with a patch, which every host accepts.
	AcceptsInfo bool `protobuf:"varint,3,opt,name=accepts_info,json=acceptsInfo,proto3" json:"accepts_info,omitempty"`
	// True when the host accepts EnforceMLPolicyResponse.info_changes.
	// Hosts since protocol 1.2 set it.
	AcceptsInfoChanges bool `protobuf:"varint,4,opt,name=accepts_info_changes,json=acceptsInfoChanges,proto3" json:"accepts_info_changes,omitempty"`
	unknownFields      protoimpl.UnknownFields
	sizeCache          protoimpl.SizeCache
}

func (x *EnforceMLPolicyRequest) Reset() {
	*x = EnforceMLPolicyRequest{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[10]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EnforceMLPolicyRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EnforceMLPolicyRequest) ProtoMessage() {}

func (x *EnforceMLPolicyRequest) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[10]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EnforceMLPolicyRequest.ProtoReflect.Descriptor instead.
func (*EnforceMLPolicyRequest) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{10}
}

func (x *EnforceMLPolicyRequest) GetInfo() []byte {
	if x != nil {
		return x.Info
	}
	return nil
}

func (x *EnforceMLPolicyRequest) GetTrainJob() []byte {
	if x != nil {
		return x.TrainJob
	}
	return nil
}

func (x *EnforceMLPolicyRequest) GetAcceptsInfo() bool {
	if x != nil {
		return x.AcceptsInfo
	}
	return false
}

func (x *EnforceMLPolicyRequest) GetAcceptsInfoChanges() bool {
	if x != nil {
		return x.AcceptsInfoChanges
	}
	return false
}

// EnforceMLPolicyResponse says how Info changes: by patch, by info_changes
// (when the request's accepts_info_changes is true) or by info (when its
// accepts_info is true). All empty means no change; setting more than one
// is refused.
type EnforceMLPolicyResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// An RFC 6902 JSON Patch against the info of the request, or empty for
	// no change: a JSON array of operations, applied to the exact document
	// the request carried. Paths are JSON Pointers (RFC 6901), whose tokens
	// escape "~" as "~0" and "/" as "~1": a label key
	// "scheduling.k8s.io/group-name" is the token
	// "scheduling.k8s.io~1group-name". It may touch only Info's own fields
	// (labels, annotations, runtimePolicy, podSets, template); a patch that
	// adds any other field, changes "version" or does not apply is refused,
	// and the call fails. The patched document is then decoded strictly: a
	// field Info does not define, or a value of the wrong JSON type (1.0 or
	// "1" where an integer goes, a number where a string goes), fails it too.
	// The simplest correct patch is computed: decode Info, change a copy,
	// diff the two. Enforcing the result again must give an empty patch.
	Patch []byte `protobuf:"bytes,1,opt,name=patch,proto3" json:"patch,omitempty"`
	// The whole Info after the plugin's changes, JSON, for a request whose
	// accepts_info (protocol 1.1) or accepts_info_changes (1.2) is true;
	// empty for no change. The same rules hold as for a patch: its "version"
	// must be the request's, and a field that Info does not have is refused.
	// Sending the changed document costs both ends less than computing a
	// diff and applying it, but a plugin whose view of Info lacks a field of
	// the host's drops that field. So a plugin sends it only when its view of
	// Info is the host's: when it encodes the Info it decoded to the
	// request's info byte for byte (the Go SDK's test; a plugin that changes
	// the request's own document, every key kept, passes it by
	// construction). Otherwise it sends info_changes, or a patch.
	Info []byte `protobuf:"bytes,2,opt,name=info,proto3" json:"info,omitempty"`
	// The plugin's changes to Info, JSON, for a request whose
	// accepts_info_changes is true; empty for no change (protocol 1.2). They
	// are computed from the plugin's own view of Info: its decoding of the
	// request's info, encoded again, to the same after its changes. So they
	// never mention a field the plugin does not know, and the host applies
	// them to the Info it sent, which keeps those fields. The document is a
	// change of Info's root object:
	//
	//	change = {"set": <value>}       the value becomes <value>
	//	       | {"fields": {<name>: <change> | {"remove": true}, ...}}
	//	                                changes to an object's members; a
	//	                                member not named is kept as it is
	//	       | {"items": [<item>, ...]}
	//	                                the list's new elements, in order
	//	item   = {"set": <value>}       a new element
	//	       | {"from": <n>}          element n (from 0) of the list the
	//	                                request carried, as it was
	//	       | {"from": <n>, "fields": {...}} | {"from": <n>, "items": [...]}
	//	                                element n with changes inside
	//
	// An element of the request's list that no item takes is removed; an
	// item may take an element once. "set" values are decoded strictly, as
	// a patched Info is: a field Info does not have (unless its value is
	// empty: null, false, 0, "", {} or []), or a value of the wrong type,
	// fails the call with its path. The root's
	// fields may be only Info's own (labels, annotations, runtimePolicy,
	// podSets, template), never version. Which element of the request's list
	// an element of the changed list is, the plugin decides. The Go SDK takes
	// the element of the same "name" when every element of both lists is an
	// object with a distinct string "name" (podSets, containers, env,
	// volumes, named ports), else the elements equal at the start and at the
	// end of both lists, then the rest in order. A plugin that changes the
	// request's own document, every key of it kept (the Python example),
	// diffs a list of unchanged length element by element and sets one whose
	// length changed whole: that keeps the keys it does not know too.
	InfoChanges   []byte `protobuf:"bytes,3,opt,name=info_changes,json=infoChanges,proto3" json:"info_changes,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *EnforceMLPolicyResponse) Reset() {
	*x = EnforceMLPolicyResponse{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[11]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EnforceMLPolicyResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EnforceMLPolicyResponse) ProtoMessage() {}

func (x *EnforceMLPolicyResponse) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[11]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EnforceMLPolicyResponse.ProtoReflect.Descriptor instead.
func (*EnforceMLPolicyResponse) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{11}
}

func (x *EnforceMLPolicyResponse) GetPatch() []byte {
	if x != nil {
		return x.Patch
	}
	return nil
}

func (x *EnforceMLPolicyResponse) GetInfo() []byte {
	if x != nil {
		return x.Info
	}
	return nil
}

func (x *EnforceMLPolicyResponse) GetInfoChanges() []byte {
	if x != nil {
		return x.InfoChanges
	}
	return nil
}

// EnforcePodGroupPolicyRequest carries the job being reconciled.
type EnforcePodGroupPolicyRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Info, JSON, after every plugin's EnforceMLPolicy.
	Info []byte `protobuf:"bytes,1,opt,name=info,proto3" json:"info,omitempty"`
	// The TrainJob, JSON.
	TrainJob []byte `protobuf:"bytes,2,opt,name=train_job,json=trainJob,proto3" json:"train_job,omitempty"`
	// As EnforceMLPolicyRequest.accepts_info.
	AcceptsInfo bool `protobuf:"varint,3,opt,name=accepts_info,json=acceptsInfo,proto3" json:"accepts_info,omitempty"`
	// As EnforceMLPolicyRequest.accepts_info_changes.
	AcceptsInfoChanges bool `protobuf:"varint,4,opt,name=accepts_info_changes,json=acceptsInfoChanges,proto3" json:"accepts_info_changes,omitempty"`
	unknownFields      protoimpl.UnknownFields
	sizeCache          protoimpl.SizeCache
}

func (x *EnforcePodGroupPolicyRequest) Reset() {
	*x = EnforcePodGroupPolicyRequest{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[12]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EnforcePodGroupPolicyRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EnforcePodGroupPolicyRequest) ProtoMessage() {}

func (x *EnforcePodGroupPolicyRequest) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[12]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EnforcePodGroupPolicyRequest.ProtoReflect.Descriptor instead.
func (*EnforcePodGroupPolicyRequest) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{12}
}

func (x *EnforcePodGroupPolicyRequest) GetInfo() []byte {
	if x != nil {
		return x.Info
	}
	return nil
}

func (x *EnforcePodGroupPolicyRequest) GetTrainJob() []byte {
	if x != nil {
		return x.TrainJob
	}
	return nil
}

func (x *EnforcePodGroupPolicyRequest) GetAcceptsInfo() bool {
	if x != nil {
		return x.AcceptsInfo
	}
	return false
}

func (x *EnforcePodGroupPolicyRequest) GetAcceptsInfoChanges() bool {
	if x != nil {
		return x.AcceptsInfoChanges
	}
	return false
}

// EnforcePodGroupPolicyResponse says how Info changes, with the rules of
// EnforceMLPolicyResponse.
type EnforcePodGroupPolicyResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// An RFC 6902 JSON Patch against the info of the request, with the rules
	// of EnforceMLPolicyResponse.patch.
	Patch []byte `protobuf:"bytes,1,opt,name=patch,proto3" json:"patch,omitempty"`
	// The whole changed Info, with the rules of EnforceMLPolicyResponse.info.
	Info []byte `protobuf:"bytes,2,opt,name=info,proto3" json:"info,omitempty"`
	// The plugin's changes to Info, with the rules of
	// EnforceMLPolicyResponse.info_changes.
	InfoChanges   []byte `protobuf:"bytes,3,opt,name=info_changes,json=infoChanges,proto3" json:"info_changes,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *EnforcePodGroupPolicyResponse) Reset() {
	*x = EnforcePodGroupPolicyResponse{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[13]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EnforcePodGroupPolicyResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EnforcePodGroupPolicyResponse) ProtoMessage() {}

func (x *EnforcePodGroupPolicyResponse) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[13]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EnforcePodGroupPolicyResponse.ProtoReflect.Descriptor instead.
func (*EnforcePodGroupPolicyResponse) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{13}
}

func (x *EnforcePodGroupPolicyResponse) GetPatch() []byte {
	if x != nil {
		return x.Patch
	}
	return nil
}

func (x *EnforcePodGroupPolicyResponse) GetInfo() []byte {
	if x != nil {
		return x.Info
	}
	return nil
}

func (x *EnforcePodGroupPolicyResponse) GetInfoChanges() []byte {
	if x != nil {
		return x.InfoChanges
	}
	return nil
}

// BuildRequest carries the job being reconciled.
type BuildRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Info, JSON, after every Enforce point.
	Info []byte `protobuf:"bytes,1,opt,name=info,proto3" json:"info,omitempty"`
	// The TrainJob, JSON.
	TrainJob []byte `protobuf:"bytes,2,opt,name=train_job,json=trainJob,proto3" json:"train_job,omitempty"`
	// The host reads BuildResponse.built (protocol 1.4): answer with it
	// alone.
	AcceptsBuilt  bool `protobuf:"varint,3,opt,name=accepts_built,json=acceptsBuilt,proto3" json:"accepts_built,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *BuildRequest) Reset() {
	*x = BuildRequest{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[14]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *BuildRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*BuildRequest) ProtoMessage() {}

func (x *BuildRequest) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[14]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use BuildRequest.ProtoReflect.Descriptor instead.
func (*BuildRequest) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{14}
}

func (x *BuildRequest) GetInfo() []byte {
	if x != nil {
		return x.Info
	}
	return nil
}

func (x *BuildRequest) GetTrainJob() []byte {
	if x != nil {
		return x.TrainJob
	}
	return nil
}

func (x *BuildRequest) GetAcceptsBuilt() bool {
	if x != nil {
		return x.AcceptsBuilt
	}
	return false
}

// BuildResponse lists the objects to create or update.
type BuildResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Kubernetes objects, JSON, each with apiVersion, kind and metadata.name
	// (a DNS-1123 subdomain), and no status. Each must be of a kind listed in
	// DescribeResponse.builds and have no namespace or the TrainJob's, and
	// the same input must give the same objects. The host sets the namespace, the TrainJob
	// as controller owner and the labels trainer.kubeflow.org/trainjob-name
	// and app.kubernetes.io/managed-by itself, then applies the object with
	// server-side apply.
	//
	// The objects listed in create_once are created once instead.
	Objects [][]byte `protobuf:"bytes,1,rep,name=objects,proto3" json:"objects,omitempty"`
	// The indexes (from 0) in objects of the objects the host creates once,
	// when they do not exist, and never updates after, for the TrainJob's
	// whole life (protocol 1.3): generated secrets (an SSH key) that must
	// not change while the job runs. Build may then return a new random value
	// each time; only the first is created. An index out of range fails the
	// call. Hosts before 1.3 ignore this field and read the annotation
	// trainforge.dev/apply-policy: "IfNotPresent" instead: a plugin that
	// answers such hosts too sets it on these objects (the Go SDK does); a
	// 1.3 host creates an object with that annotation once as well, and
	// removes the annotation.
	CreateOnce []uint32 `protobuf:"varint,2,rep,packed,name=create_once,json=createOnce,proto3" json:"create_once,omitempty"`
	// The objects, each with how the host writes it (protocol 1.4), for a
	// host that set accepts_built; objects and create_once are then empty.
	Built         []*BuiltObject `protobuf:"bytes,3,rep,name=built,proto3" json:"built,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *BuildResponse) Reset() {
	*x = BuildResponse{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[15]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *BuildResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*BuildResponse) ProtoMessage() {}

func (x *BuildResponse) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[15]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use BuildResponse.ProtoReflect.Descriptor instead.
func (*BuildResponse) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{15}
}

func (x *BuildResponse) GetObjects() [][]byte {
	if x != nil {
		return x.Objects
	}
	return nil
}

func (x *BuildResponse) GetCreateOnce() []uint32 {
	if x != nil {
		return x.CreateOnce
	}
	return nil
}

func (x *BuildResponse) GetBuilt() []*BuiltObject {
	if x != nil {
		return x.Built
	}
	return nil
}

// BuiltObject is one object a plugin built and how the host writes it.
type BuiltObject struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The Kubernetes object, JSON, as in BuildResponse.objects.
	Object []byte `protobuf:"bytes,1,opt,name=object,proto3" json:"object,omitempty"`
	// The host creates the object when it does not exist and never updates
	// it, as for an index of BuildResponse.create_once.
	CreateOnce bool `protobuf:"varint,2,opt,name=create_once,json=createOnce,proto3" json:"create_once,omitempty"`
	// The fields the host may change while the object runs (a running
	// suspendable object is otherwise left as it is until it is suspended,
	// its pod templates being immutable), as JSON pointers (RFC 6901). The
	// host writes those that differ by one JSON patch, and nothing else.
	LiveFields []string `protobuf:"bytes,3,rep,name=live_fields,json=liveFields,proto3" json:"live_fields,omitempty"`
	// Why the live fields may not change now, when they may not (the
	// TrainJob's queue admitted it at its size): the host leaves them and
	// tells the user so in the TrainJob's Resized condition.
	LiveHeld string `protobuf:"bytes,4,opt,name=live_held,json=liveHeld,proto3" json:"live_held,omitempty"`
	// What would let a change of the live fields through, which the user
	// reads when the API server refuses it or live_held holds it.
	LiveAdvice    string `protobuf:"bytes,5,opt,name=live_advice,json=liveAdvice,proto3" json:"live_advice,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *BuiltObject) Reset() {
	*x = BuiltObject{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[16]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *BuiltObject) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*BuiltObject) ProtoMessage() {}

func (x *BuiltObject) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[16]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use BuiltObject.ProtoReflect.Descriptor instead.
func (*BuiltObject) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{16}
}

func (x *BuiltObject) GetObject() []byte {
	if x != nil {
		return x.Object
	}
	return nil
}

func (x *BuiltObject) GetCreateOnce() bool {
	if x != nil {
		return x.CreateOnce
	}
	return false
}

func (x *BuiltObject) GetLiveFields() []string {
	if x != nil {
		return x.LiveFields
	}
	return nil
}

func (x *BuiltObject) GetLiveHeld() string {
	if x != nil {
		return x.LiveHeld
	}
	return ""
}

func (x *BuiltObject) GetLiveAdvice() string {
	if x != nil {
		return x.LiveAdvice
	}
	return ""
}

// WatchRequest is empty.
type WatchRequest struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *WatchRequest) Reset() {
	*x = WatchRequest{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[17]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *WatchRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*WatchRequest) ProtoMessage() {}

func (x *WatchRequest) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[17]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use WatchRequest.ProtoReflect.Descriptor instead.
func (*WatchRequest) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{17}
}

// WatchResponse lists the extra kinds to watch.
type WatchResponse struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	Sources       []*WatchSource         `protobuf:"bytes,1,rep,name=sources,proto3" json:"sources,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *WatchResponse) Reset() {
	*x = WatchResponse{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[18]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *WatchResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*WatchResponse) ProtoMessage() {}

func (x *WatchResponse) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[18]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use WatchResponse.ProtoReflect.Descriptor instead.
func (*WatchResponse) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{18}
}

func (x *WatchResponse) GetSources() []*WatchSource {
	if x != nil {
		return x.Sources
	}
	return nil
}

// WatchSource is one kind to watch.
type WatchSource struct {
	state   protoimpl.MessageState `protogen:"open.v1"`
	Kind    *GroupVersionKind      `protobuf:"bytes,1,opt,name=kind,proto3" json:"kind,omitempty"`
	Mapping Mapping                `protobuf:"varint,2,opt,name=mapping,proto3,enum=trainforge.plugin.v1.Mapping" json:"mapping,omitempty"`
	// The label whose value names the TrainJob, with MAPPING_LABEL.
	Label string `protobuf:"bytes,3,opt,name=label,proto3" json:"label,omitempty"`
	// Fields of the kind that the controller's cache need not keep, as
	// field paths: JSON names joined by dots, a list's name followed by []
	// (spec.replicatedJobs[].template.spec.template). They are cleared from
	// every object of the kind before it is cached, so Status never sees
	// them; a field is cleared only when every plugin watching the kind the
	// same way omits it. A host that predates the field ignores it.
	Omit          []string `protobuf:"bytes,4,rep,name=omit,proto3" json:"omit,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *WatchSource) Reset() {
	*x = WatchSource{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[19]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *WatchSource) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*WatchSource) ProtoMessage() {}

func (x *WatchSource) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[19]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use WatchSource.ProtoReflect.Descriptor instead.
func (*WatchSource) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{19}
}

func (x *WatchSource) GetKind() *GroupVersionKind {
	if x != nil {
		return x.Kind
	}
	return nil
}

func (x *WatchSource) GetMapping() Mapping {
	if x != nil {
		return x.Mapping
	}
	return Mapping_MAPPING_UNSPECIFIED
}

func (x *WatchSource) GetLabel() string {
	if x != nil {
		return x.Label
	}
	return ""
}

func (x *WatchSource) GetOmit() []string {
	if x != nil {
		return x.Omit
	}
	return nil
}

// StatusRequest carries a TrainJob and what it owns.
type StatusRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The TrainJob, JSON.
	TrainJob []byte `protobuf:"bytes,1,opt,name=train_job,json=trainJob,proto3" json:"train_job,omitempty"`
	// The objects the TrainJob owns of the kinds the plugin builds, JSON.
	Owned [][]byte `protobuf:"bytes,2,rep,name=owned,proto3" json:"owned,omitempty"`
	// Info, JSON, as Build received it (after every Enforce point), or
	// empty when the host has none (protocol 1.5): the TrainJob's runtime is
	// not known (deleted, and the TrainJob has no snapshot of it), or the
	// status is read without a build (a finished TrainJob following its
	// Jobs, objects deleted after they finished), or the host is older than
	// 1.5. A plugin reads it rather than storing its own state on the
	// objects it builds, and without it reports only what the objects say.
	Info          []byte `protobuf:"bytes,3,opt,name=info,proto3" json:"info,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *StatusRequest) Reset() {
	*x = StatusRequest{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[20]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *StatusRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*StatusRequest) ProtoMessage() {}

func (x *StatusRequest) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[20]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use StatusRequest.ProtoReflect.Descriptor instead.
func (*StatusRequest) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{20}
}

func (x *StatusRequest) GetTrainJob() []byte {
	if x != nil {
		return x.TrainJob
	}
	return nil
}

func (x *StatusRequest) GetOwned() [][]byte {
	if x != nil {
		return x.Owned
	}
	return nil
}

func (x *StatusRequest) GetInfo() []byte {
	if x != nil {
		return x.Info
	}
	return nil
}

// StatusResponse is the plugin's view of the TrainJob's status.
type StatusResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// A trainer.kubeflow.org/v1alpha1 TrainJobStatus, JSON, or empty when the
	// plugin has nothing to report yet. Conditions replace those of the same
	// type reported by earlier plugins; jobsStatus, when set, replaces theirs.
	Status        []byte `protobuf:"bytes,1,opt,name=status,proto3" json:"status,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *StatusResponse) Reset() {
	*x = StatusResponse{}
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[21]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *StatusResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*StatusResponse) ProtoMessage() {}

func (x *StatusResponse) ProtoReflect() protoreflect.Message {
	mi := &file_trainforge_plugin_v1_plugin_proto_msgTypes[21]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use StatusResponse.ProtoReflect.Descriptor instead.
func (*StatusResponse) Descriptor() ([]byte, []int) {
	return file_trainforge_plugin_v1_plugin_proto_rawDescGZIP(), []int{21}
}

func (x *StatusResponse) GetStatus() []byte {
	if x != nil {
		return x.Status
	}
	return nil
}

var File_trainforge_plugin_v1_plugin_proto protoreflect.FileDescriptor

const file_trainforge_plugin_v1_plugin_proto_rawDesc = "" +
	"\n" +
	"!trainforge/plugin/v1/plugin.proto\x12\x14trainforge.plugin.v1\"V\n" +
	"\x10GroupVersionKind\x12\x14\n" +
	"\x05group\x18\x01 \x01(\tR\x05group\x12\x18\n" +
	"\aversion\x18\x02 \x01(\tR\aversion\x12\x12\n" +
	"\x04kind\x18\x03 \x01(\tR\x04kind\"\x11\n" +
	"\x0fDescribeRequest\"\x97\x02\n" +
	"\x10DescribeResponse\x12\x12\n" +
	"\x04name\x18\x01 \x01(\tR\x04name\x12\x18\n" +
	"\aversion\x18\x02 \x01(\tR\aversion\x12<\n" +
	"\x06points\x18\x03 \x03(\x0e2$.trainforge.plugin.v1.ExtensionPointR\x06points\x12$\n" +
	"\x0eml_policy_keys\x18\x04 \x03(\tR\fmlPolicyKeys\x121\n" +
	"\x15pod_group_policy_keys\x18\x05 \x03(\tR\x12podGroupPolicyKeys\x12>\n" +
	"\x06builds\x18\x06 \x03(\v2&.trainforge.plugin.v1.GroupVersionKindR\x06builds\"V\n" +
	"\x10ConfigureRequest\x12\x12\n" +
	"\x04args\x18\x01 \x01(\fR\x04args\x12.\n" +
	"\x04host\x18\x02 \x01(\v2\x1a.trainforge.plugin.v1.HostR\x04host\"U\n" +
	"\x04Host\x12M\n" +
	"\x0fstatus_endpoint\x18\x01 \x01(\v2$.trainforge.plugin.v1.StatusEndpointR\x0estatusEndpoint\"\x89\x01\n" +
	"\x0eStatusEndpoint\x12\x10\n" +
	"\x03url\x18\x01 \x01(\tR\x03url\x12+\n" +
	"\x12ca_config_map_name\x18\x02 \x01(\tR\x0fcaConfigMapName\x128\n" +
	"\x18token_expiration_seconds\x18\x03 \x01(\x03R\x16tokenExpirationSeconds\"\x13\n" +
	"\x11ConfigureResponse\"\xa7\x01\n" +
	"\x0fValidateRequest\x12\x12\n" +
	"\x04info\x18\x01 \x01(\fR\x04info\x12\"\n" +
	"\rold_train_job\x18\x02 \x01(\fR\voldTrainJob\x12\"\n" +
	"\rnew_train_job\x18\x03 \x01(\fR\vnewTrainJob\x128\n" +
	"\x04kind\x18\x04 \x01(\x0e2$.trainforge.plugin.v1.ValidationKindR\x04kind\"s\n" +
	"\x10ValidateResponse\x12\x1a\n" +
	"\bwarnings\x18\x01 \x03(\tR\bwarnings\x12C\n" +
	"\ffield_errors\x18\x02 \x03(\v2 .trainforge.plugin.v1.FieldErrorR\vfieldErrors\"\x91\x01\n" +
	"\n" +
	"FieldError\x128\n" +
	"\x04type\x18\x01 \x01(\x0e2$.trainforge.plugin.v1.FieldErrorTypeR\x04type\x12\x14\n" +
	"\x05field\x18\x02 \x01(\tR\x05field\x12\x1b\n" +
	"\tbad_value\x18\x03 \x01(\fR\bbadValue\x12\x16\n" +
	"\x06detail\x18\x04 \x01(\tR\x06detail\"\x9e\x01\n" +
	"\x16EnforceMLPolicyRequest\x12\x12\n" +
	"\x04info\x18\x01 \x01(\fR\x04info\x12\x1b\n" +
	"\ttrain_job\x18\x02 \x01(\fR\btrainJob\x12!\n" +
	"\faccepts_info\x18\x03 \x01(\bR\vacceptsInfo\x120\n" +
	"\x14accepts_info_changes\x18\x04 \x01(\bR\x12acceptsInfoChanges\"f\n" +
	"\x17EnforceMLPolicyResponse\x12\x14\n" +
	"\x05patch\x18\x01 \x01(\fR\x05patch\x12\x12\n" +
	"\x04info\x18\x02 \x01(\fR\x04info\x12!\n" +
	"\finfo_changes\x18\x03 \x01(\fR\vinfoChanges\"\xa4\x01\n" +
	"\x1cEnforcePodGroupPolicyRequest\x12\x12\n" +
	"\x04info\x18\x01 \x01(\fR\x04info\x12\x1b\n" +
	"\ttrain_job\x18\x02 \x01(\fR\btrainJob\x12!\n" +
	"\faccepts_info\x18\x03 \x01(\bR\vacceptsInfo\x120\n" +
	"\x14accepts_info_changes\x18\x04 \x01(\bR\x12acceptsInfoChanges\"l\n" +
	"\x1dEnforcePodGroupPolicyResponse\x12\x14\n" +
	"\x05patch\x18\x01 \x01(\fR\x05patch\x12\x12\n" +
	"\x04info\x18\x02 \x01(\fR\x04info\x12!\n" +
	"\finfo_changes\x18\x03 \x01(\fR\vinfoChanges\"d\n" +
	"\fBuildRequest\x12\x12\n" +
	"\x04info\x18\x01 \x01(\fR\x04info\x12\x1b\n" +
	"\ttrain_job\x18\x02 \x01(\fR\btrainJob\x12#\n" +
	"\raccepts_built\x18\x03 \x01(\bR\facceptsBuilt\"\x83\x01\n" +
	"\rBuildResponse\x12\x18\n" +
	"\aobjects\x18\x01 \x03(\fR\aobjects\x12\x1f\n" +
	"\vcreate_once\x18\x02 \x03(\rR\n" +
	"createOnce\x127\n" +
	"\x05built\x18\x03 \x03(\v2!.trainforge.plugin.v1.BuiltObjectR\x05built\"\xa5\x01\n" +
	"\vBuiltObject\x12\x16\n" +
	"\x06object\x18\x01 \x01(\fR\x06object\x12\x1f\n" +
	"\vcreate_once\x18\x02 \x01(\bR\n" +
	"createOnce\x12\x1f\n" +
	"\vlive_fields\x18\x03 \x03(\tR\n" +
	"liveFields\x12\x1b\n" +
	"\tlive_held\x18\x04 \x01(\tR\bliveHeld\x12\x1f\n" +
	"\vlive_advice\x18\x05 \x01(\tR\n" +
	"liveAdvice\"\x0e\n" +
	"\fWatchRequest\"L\n" +
	"\rWatchResponse\x12;\n" +
	"\asources\x18\x01 \x03(\v2!.trainforge.plugin.v1.WatchSourceR\asources\"\xac\x01\n" +
	"\vWatchSource\x12:\n" +
	"\x04kind\x18\x01 \x01(\v2&.trainforge.plugin.v1.GroupVersionKindR\x04kind\x127\n" +
	"\amapping\x18\x02 \x01(\x0e2\x1d.trainforge.plugin.v1.MappingR\amapping\x12\x14\n" +
	"\x05label\x18\x03 \x01(\tR\x05label\x12\x12\n" +
	"\x04omit\x18\x04 \x03(\tR\x04omit\"V\n" +
	"\rStatusRequest\x12\x1b\n" +
	"\ttrain_job\x18\x01 \x01(\fR\btrainJob\x12\x14\n" +
	"\x05owned\x18\x02 \x03(\fR\x05owned\x12\x12\n" +
	"\x04info\x18\x03 \x01(\fR\x04info\"(\n" +
	"\x0eStatusResponse\x12\x16\n" +
	"\x06status\x18\x01 \x01(\fR\x06status*\x95\x02\n" +
	"\x0eExtensionPoint\x12\x1f\n" +
	"\x1bEXTENSION_POINT_UNSPECIFIED\x10\x00\x12\x1d\n" +
	"\x19EXTENSION_POINT_CONFIGURE\x10\x01\x12\x1c\n" +
	"\x18EXTENSION_POINT_VALIDATE\x10\x02\x12%\n" +
	"!EXTENSION_POINT_ENFORCE_ML_POLICY\x10\x03\x12,\n" +
	"(EXTENSION_POINT_ENFORCE_POD_GROUP_POLICY\x10\x04\x12\x19\n" +
	"\x15EXTENSION_POINT_BUILD\x10\x05\x12\x19\n" +
	"\x15EXTENSION_POINT_WATCH\x10\x06\x12\x1a\n" +
	"\x16EXTENSION_POINT_STATUS\x10\a*m\n" +
	"\x0eValidationKind\x12\x1f\n" +
	"\x1bVALIDATION_KIND_UNSPECIFIED\x10\x00\x12\x1d\n" +
	"\x19VALIDATION_KIND_TRAIN_JOB\x10\x01\x12\x1b\n" +
	"\x17VALIDATION_KIND_RUNTIME\x10\x02*\xd0\x02\n" +
	"\x0eFieldErrorType\x12 \n" +
	"\x1cFIELD_ERROR_TYPE_UNSPECIFIED\x10\x00\x12\x1c\n" +
	"\x18FIELD_ERROR_TYPE_INVALID\x10\x01\x12\x1d\n" +
	"\x19FIELD_ERROR_TYPE_REQUIRED\x10\x02\x12\x1e\n" +
	"\x1aFIELD_ERROR_TYPE_FORBIDDEN\x10\x03\x12\"\n" +
	"\x1eFIELD_ERROR_TYPE_NOT_SUPPORTED\x10\x04\x12\x1e\n" +
	"\x1aFIELD_ERROR_TYPE_DUPLICATE\x10\x05\x12\x1e\n" +
	"\x1aFIELD_ERROR_TYPE_NOT_FOUND\x10\x06\x12\x1d\n" +
	"\x19FIELD_ERROR_TYPE_TOO_LONG\x10\a\x12\x1d\n" +
	"\x19FIELD_ERROR_TYPE_TOO_MANY\x10\b\x12\x1d\n" +
	"\x19FIELD_ERROR_TYPE_INTERNAL\x10\t*R\n" +
	"\aMapping\x12\x17\n" +
	"\x13MAPPING_UNSPECIFIED\x10\x00\x12\x1b\n" +
	"\x17MAPPING_OWNER_REFERENCE\x10\x01\x12\x11\n" +
	"\rMAPPING_LABEL\x10\x022\x8f\x06\n" +
	"\rPluginService\x12Y\n" +
	"\bDescribe\x12%.trainforge.plugin.v1.DescribeRequest\x1a&.trainforge.plugin.v1.DescribeResponse\x12\\\n" +
	"\tConfigure\x12&.trainforge.plugin.v1.ConfigureRequest\x1a'.trainforge.plugin.v1.ConfigureResponse\x12Y\n" +
	"\bValidate\x12%.trainforge.plugin.v1.ValidateRequest\x1a&.trainforge.plugin.v1.ValidateResponse\x12n\n" +
	"\x0fEnforceMLPolicy\x12,.trainforge.plugin.v1.EnforceMLPolicyRequest\x1a-.trainforge.plugin.v1.EnforceMLPolicyResponse\x12\x80\x01\n" +
	"\x15EnforcePodGroupPolicy\x122.trainforge.plugin.v1.EnforcePodGroupPolicyRequest\x1a3.trainforge.plugin.v1.EnforcePodGroupPolicyResponse\x12P\n" +
	"\x05Build\x12\".trainforge.plugin.v1.BuildRequest\x1a#.trainforge.plugin.v1.BuildResponse\x12P\n" +
	"\x05Watch\x12\".trainforge.plugin.v1.WatchRequest\x1a#.trainforge.plugin.v1.WatchResponse\x12S\n" +
	"\x06Status\x12#.trainforge.plugin.v1.StatusRequest\x1a$.trainforge.plugin.v1.StatusResponseBFZDgithub.com/trainforge/trainforge/proto/trainforge/plugin/v1;pluginv1b\x06proto3"

var (
	file_trainforge_plugin_v1_plugin_proto_rawDescOnce sync.Once
	file_trainforge_plugin_v1_plugin_proto_rawDescData []byte
)

func file_trainforge_plugin_v1_plugin_proto_rawDescGZIP() []byte {
	file_trainforge_plugin_v1_plugin_proto_rawDescOnce.Do(func() {
		file_trainforge_plugin_v1_plugin_proto_rawDescData = protoimpl.X.CompressGZIP(unsafe.Slice(unsafe.StringData(file_trainforge_plugin_v1_plugin_proto_rawDesc), len(file_trainforge_plugin_v1_plugin_proto_rawDesc)))
	})
	return file_trainforge_plugin_v1_plugin_proto_rawDescData
}

var file_trainforge_plugin_v1_plugin_proto_enumTypes = make([]protoimpl.EnumInfo, 4)
var file_trainforge_plugin_v1_plugin_proto_msgTypes = make([]protoimpl.MessageInfo, 22)
var file_trainforge_plugin_v1_plugin_proto_goTypes = []any{
	(ExtensionPoint)(0),                   // 0: trainforge.plugin.v1.ExtensionPoint
	(ValidationKind)(0),                   // 1: trainforge.plugin.v1.ValidationKind
	(FieldErrorType)(0),                   // 2: trainforge.plugin.v1.FieldErrorType
	(Mapping)(0),                          // 3: trainforge.plugin.v1.Mapping
	(*GroupVersionKind)(nil),              // 4: trainforge.plugin.v1.GroupVersionKind
	(*DescribeRequest)(nil),               // 5: trainforge.plugin.v1.DescribeRequest
	(*DescribeResponse)(nil),              // 6: trainforge.plugin.v1.DescribeResponse
	(*ConfigureRequest)(nil),              // 7: trainforge.plugin.v1.ConfigureRequest
	(*Host)(nil),                          // 8: trainforge.plugin.v1.Host
	(*StatusEndpoint)(nil),                // 9: trainforge.plugin.v1.StatusEndpoint
	(*ConfigureResponse)(nil),             // 10: trainforge.plugin.v1.ConfigureResponse
	(*ValidateRequest)(nil),               // 11: trainforge.plugin.v1.ValidateRequest
	(*ValidateResponse)(nil),              // 12: trainforge.plugin.v1.ValidateResponse
	(*FieldError)(nil),                    // 13: trainforge.plugin.v1.FieldError
	(*EnforceMLPolicyRequest)(nil),        // 14: trainforge.plugin.v1.EnforceMLPolicyRequest
	(*EnforceMLPolicyResponse)(nil),       // 15: trainforge.plugin.v1.EnforceMLPolicyResponse
	(*EnforcePodGroupPolicyRequest)(nil),  // 16: trainforge.plugin.v1.EnforcePodGroupPolicyRequest
	(*EnforcePodGroupPolicyResponse)(nil), // 17: trainforge.plugin.v1.EnforcePodGroupPolicyResponse
	(*BuildRequest)(nil),                  // 18: trainforge.plugin.v1.BuildRequest
	(*BuildResponse)(nil),                 // 19: trainforge.plugin.v1.BuildResponse
	(*BuiltObject)(nil),                   // 20: trainforge.plugin.v1.BuiltObject
	(*WatchRequest)(nil),                  // 21: trainforge.plugin.v1.WatchRequest
	(*WatchResponse)(nil),                 // 22: trainforge.plugin.v1.WatchResponse
	(*WatchSource)(nil),                   // 23: trainforge.plugin.v1.WatchSource
	(*StatusRequest)(nil),                 // 24: trainforge.plugin.v1.StatusRequest
	(*StatusResponse)(nil),                // 25: trainforge.plugin.v1.StatusResponse
}
var file_trainforge_plugin_v1_plugin_proto_depIdxs = []int32{
	0,  // 0: trainforge.plugin.v1.DescribeResponse.points:type_name -> trainforge.plugin.v1.ExtensionPoint
	4,  // 1: trainforge.plugin.v1.DescribeResponse.builds:type_name -> trainforge.plugin.v1.GroupVersionKind
	8,  // 2: trainforge.plugin.v1.ConfigureRequest.host:type_name -> trainforge.plugin.v1.Host
	9,  // 3: trainforge.plugin.v1.Host.status_endpoint:type_name -> trainforge.plugin.v1.StatusEndpoint
	1,  // 4: trainforge.plugin.v1.ValidateRequest.kind:type_name -> trainforge.plugin.v1.ValidationKind
	13, // 5: trainforge.plugin.v1.ValidateResponse.field_errors:type_name -> trainforge.plugin.v1.FieldError
	2,  // 6: trainforge.plugin.v1.FieldError.type:type_name -> trainforge.plugin.v1.FieldErrorType
	20, // 7: trainforge.plugin.v1.BuildResponse.built:type_name -> trainforge.plugin.v1.BuiltObject
	23, // 8: trainforge.plugin.v1.WatchResponse.sources:type_name -> trainforge.plugin.v1.WatchSource
	4,  // 9: trainforge.plugin.v1.WatchSource.kind:type_name -> trainforge.plugin.v1.GroupVersionKind
	3,  // 10: trainforge.plugin.v1.WatchSource.mapping:type_name -> trainforge.plugin.v1.Mapping
	5,  // 11: trainforge.plugin.v1.PluginService.Describe:input_type -> trainforge.plugin.v1.DescribeRequest
	7,  // 12: trainforge.plugin.v1.PluginService.Configure:input_type -> trainforge.plugin.v1.ConfigureRequest
	11, // 13: trainforge.plugin.v1.PluginService.Validate:input_type -> trainforge.plugin.v1.ValidateRequest
	14, // 14: trainforge.plugin.v1.PluginService.EnforceMLPolicy:input_type -> trainforge.plugin.v1.EnforceMLPolicyRequest
	16, // 15: trainforge.plugin.v1.PluginService.EnforcePodGroupPolicy:input_type -> trainforge.plugin.v1.EnforcePodGroupPolicyRequest
	18, // 16: trainforge.plugin.v1.PluginService.Build:input_type -> trainforge.plugin.v1.BuildRequest
	21, // 17: trainforge.plugin.v1.PluginService.Watch:input_type -> trainforge.plugin.v1.WatchRequest
	24, // 18: trainforge.plugin.v1.PluginService.Status:input_type -> trainforge.plugin.v1.StatusRequest
	6,  // 19: trainforge.plugin.v1.PluginService.Describe:output_type -> trainforge.plugin.v1.DescribeResponse
	10, // 20: trainforge.plugin.v1.PluginService.Configure:output_type -> trainforge.plugin.v1.ConfigureResponse
	12, // 21: trainforge.plugin.v1.PluginService.Validate:output_type -> trainforge.plugin.v1.ValidateResponse
	15, // 22: trainforge.plugin.v1.PluginService.EnforceMLPolicy:output_type -> trainforge.plugin.v1.EnforceMLPolicyResponse
	17, // 23: trainforge.plugin.v1.PluginService.EnforcePodGroupPolicy:output_type -> trainforge.plugin.v1.EnforcePodGroupPolicyResponse
	19, // 24: trainforge.plugin.v1.PluginService.Build:output_type -> trainforge.plugin.v1.BuildResponse
	22, // 25: trainforge.plugin.v1.PluginService.Watch:output_type -> trainforge.plugin.v1.WatchResponse
	25, // 26: trainforge.plugin.v1.PluginService.Status:output_type -> trainforge.plugin.v1.StatusResponse
	19, // [19:27] is the sub-list for method output_type
	11, // [11:19] is the sub-list for method input_type
	11, // [11:11] is the sub-list for extension type_name
	11, // [11:11] is the sub-list for extension extendee
	0,  // [0:11] is the sub-list for field type_name
}

func init() { file_trainforge_plugin_v1_plugin_proto_init() }
func file_trainforge_plugin_v1_plugin_proto_init() {
	if File_trainforge_plugin_v1_plugin_proto != nil {
		return
	}
	type x struct{}
	out := protoimpl.TypeBuilder{
		File: protoimpl.DescBuilder{
			GoPackagePath: reflect.TypeOf(x{}).PkgPath(),
			RawDescriptor: unsafe.Slice(unsafe.StringData(file_trainforge_plugin_v1_plugin_proto_rawDesc), len(file_trainforge_plugin_v1_plugin_proto_rawDesc)),
			NumEnums:      4,
			NumMessages:   22,
			NumExtensions: 0,
			NumServices:   1,
		},
		GoTypes:           file_trainforge_plugin_v1_plugin_proto_goTypes,
		DependencyIndexes: file_trainforge_plugin_v1_plugin_proto_depIdxs,
		EnumInfos:         file_trainforge_plugin_v1_plugin_proto_enumTypes,
		MessageInfos:      file_trainforge_plugin_v1_plugin_proto_msgTypes,
	}.Build()
	File_trainforge_plugin_v1_plugin_proto = out.File
	file_trainforge_plugin_v1_plugin_proto_goTypes = nil
	file_trainforge_plugin_v1_plugin_proto_depIdxs = nil
}
