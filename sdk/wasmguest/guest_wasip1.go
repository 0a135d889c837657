//go:build wasip1

// This file is the guest's side of the contract: the module's exports,
// which serve the PluginService Register registers, and its log. The
// SDK's sdk.Serve registers a plugin's service here when built with
// GOOS=wasip1; a test plugin that answers what the SDK never would
// (test/plugins/hostile) registers its own.
//
// The module is a WASI reactor (-buildmode=c-shared) rather than a command
// because a command's instance ends when main returns, and Go's runtime
// stops a main that blocks with nothing to run as a deadlock: neither
// leaves an instance the host can call. In a reactor Go does not run main
// itself; trainforge_start runs it, and sdk.Serve, there, only registers
// the plugin and returns.

package wasmguest

import (
	"context"
	"unsafe"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/trainforge/trainforge/framework/wasm/abi"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// served is the PluginService that Register registered; nil until then.
var served pluginv1.PluginServiceServer

// Register makes svc the service the module's calls go to.
func Register(svc pluginv1.PluginServiceServer) { served = svc }

// Log writes to the host's log function: the host rate-limits the lines
// and forwards them under the plugin's name.
var Log hostLog

// hostLog writes to the host's log function.
type hostLog struct{}

func (hostLog) Write(b []byte) (int, error) {
	if len(b) > 0 {
		hostLogLine(unsafe.Pointer(&b[0]), uint32(len(b)))
	}
	return len(b), nil
}

//go:wasmimport trainforge log
//go:noescape
func hostLogLine(ptr unsafe.Pointer, size uint32)

//go:linkname mainMain main.main
func mainMain()

// buffers keeps the buffers the host holds addresses of (requests being
// written, answers being read), so that the garbage collector, which does
// not move objects, does not free them either.
var buffers = map[uint32][]byte{}

// keep records b as a buffer the host may use and returns its address.
func keep(b []byte) uint32 {
	if cap(b) == 0 {
		b = make([]byte, 0, 1)
	}
	ptr := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	buffers[ptr] = b
	return ptr
}

//go:wasmexport trainforge_abi_version
func wasmABIVersion() uint32 { return abi.Version }

//go:wasmexport trainforge_start
func wasmStart() uint32 {
	mainMain()
	if served == nil {
		_, _ = Log.Write([]byte("sdk: main returned without calling sdk.Serve or sdk.ServeFactory; the module serves no plugin\n"))
		return 1
	}
	return 0
}

//go:wasmexport trainforge_malloc
func wasmMalloc(size uint32) uint32 { return keep(make([]byte, size)) }

//go:wasmexport trainforge_free
func wasmFree(ptr uint32) { delete(buffers, ptr) }

//go:wasmexport trainforge_call
func wasmCall(method, ptr, size uint32) uint64 {
	req := buffers[ptr]
	delete(buffers, ptr)
	if uint32(len(req)) < size {
		return answer(nil, status.Errorf(codes.Internal, "the request's buffer at %#x has %d bytes, not the %d the host gave", ptr, len(req), size))
	}
	return answer(dispatch(abi.Method(method), req[:size]))
}

// answer keeps the answer's buffer and returns its address and length.
func answer(resp proto.Message, err error) uint64 {
	var out []byte
	if err == nil {
		out, err = proto.MarshalOptions{}.MarshalAppend([]byte{abi.AnswerOK}, resp)
	}
	if err != nil {
		out, _ = proto.MarshalOptions{}.MarshalAppend([]byte{abi.AnswerError}, status.Convert(err).Proto())
	}
	return uint64(keep(out))<<32 | uint64(len(out))
}

// dispatch serves one method with the request's bytes.
func dispatch(m abi.Method, req []byte) (proto.Message, error) {
	if served == nil {
		return nil, status.Error(codes.FailedPrecondition, "the module serves no plugin: trainforge_start was not called, or main did not call sdk.Serve")
	}
	s := served
	switch m {
	case abi.MethodDescribe:
		return serveMethod(req, s.Describe)
	case abi.MethodConfigure:
		return serveMethod(req, s.Configure)
	case abi.MethodValidate:
		return serveMethod(req, s.Validate)
	case abi.MethodEnforceMLPolicy:
		return serveMethod(req, s.EnforceMLPolicy)
	case abi.MethodEnforcePodGroupPolicy:
		return serveMethod(req, s.EnforcePodGroupPolicy)
	case abi.MethodBuild:
		return serveMethod(req, s.Build)
	case abi.MethodWatch:
		return serveMethod(req, s.Watch)
	case abi.MethodStatus:
		return serveMethod(req, s.Status)
	default:
		return nil, status.Errorf(codes.Unimplemented, "unknown method %d", m)
	}
}

// serveMethod decodes a request and calls f with it.
func serveMethod[Req any, PReq interface {
	*Req
	proto.Message
}, Resp proto.Message](req []byte, f func(context.Context, PReq) (Resp, error)) (proto.Message, error) {
	in := PReq(new(Req))
	if err := proto.Unmarshal(req, in); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "the request is not a %s: %v", in.ProtoReflect().Descriptor().FullName(), err)
	}
	return f(context.Background(), in)
}
