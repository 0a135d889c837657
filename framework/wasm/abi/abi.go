// Package abi is the contract between a Trainforge plugin compiled to
// WebAssembly (the guest, served by the SDK's sdk.Serve when built with
// GOOS=wasip1) and the controller that runs it (the host, package
// framework/wasm): the names of the functions each side exports, the
// numbers of the protocol's methods and the layout of an answer. Both
// sides import it, so that they cannot disagree; it has no dependency, so
// that a guest in another language can be written from this file alone.
//
// The messages are the plugin protocol's protobuf messages
// (proto/trainforge/plugin/v1), the bytes an external plugin receives and
// sends over gRPC.
//
// # A call
//
// The module is a WASI reactor (GOOS=wasip1 GOARCH=wasm go build
// -buildmode=c-shared). The host instantiates it, which runs its
// initialisation (_initialize), then calls StartExport once: a Go guest
// runs main there, whose sdk.Serve registers the plugin and returns. Each
// call of a method is then:
//
//  1. ptr = MallocExport(len(request)): the guest allocates a buffer in its
//     memory and keeps it until it is freed;
//  2. the host writes the request's bytes at ptr;
//  3. res = CallExport(method, ptr, len(request)): the guest reads the
//     request, frees its buffer, serves the method and returns its answer
//     as a buffer of its own: res's high 32 bits are its address, its low
//     32 bits its length;
//  4. the host reads the answer and frees it with FreeExport(address).
//
// An answer's first byte is AnswerOK, followed by the response message,
// or AnswerError, followed by a google.rpc.Status message (the code and
// message a gRPC server would answer). An unknown method answers
// UNIMPLEMENTED.
//
// The guest's only import beyond the WASI functions Go's runtime needs to
// start is LogImport in module HostModule: log(ptr, len) writes a log line
// (the SDK's JSON lines, as an external plugin writes to stderr) to the
// controller's log, rate-limited. WASI's stderr goes there too.
package abi

// Version is the version of this contract. The guest exports it as
// VersionExport; a host refuses a module of another version.
const Version = 1

// GoBuildFlags are the flags of `GOOS=wasip1 GOARCH=wasm go build` that
// make a Go plugin a module of this contract, as docs/writing-a-plugin.md
// gives them: -buildmode=c-shared for a reactor, whose instance stays
// after its initialisation; -trimpath and -ldflags=-s -w for the smallest
// module, the same from the same source wherever it is built (the host
// needs no symbols, and every byte of a module costs it memory). Every
// module the project's tools and tests build uses them.
func GoBuildFlags() []string {
	return []string{"-buildmode=c-shared", "-trimpath", "-ldflags=-s -w"}
}

// The guest's exports.
const (
	// VersionExport is `() -> i32`: Version.
	VersionExport = "trainforge_abi_version"
	// StartExport is `() -> i32`: it runs the plugin's main; 0 when main
	// served a plugin, else not (the log says why).
	StartExport = "trainforge_start"
	// MallocExport is `(size i32) -> i32`: the address of a new buffer of
	// size bytes, kept until FreeExport or CallExport takes it.
	MallocExport = "trainforge_malloc"
	// FreeExport is `(ptr i32)`: frees the buffer at ptr.
	FreeExport = "trainforge_free"
	// CallExport is `(method, ptr, len i32) -> i64`: serves method with the
	// request in the buffer at ptr (which it frees) and returns its answer's
	// buffer, address<<32 | length.
	CallExport = "trainforge_call"
	// InitializeExport is the WASI reactor's initialisation, which the host
	// runs when it instantiates the module.
	InitializeExport = "_initialize"
	// CommandExport is a WASI command's entry point: a module that has it
	// and not InitializeExport was built without -buildmode=c-shared.
	CommandExport = "_start"
)

// The host's functions.
const (
	// HostModule is the module name of the host's functions.
	HostModule = "trainforge"
	// LogImport is `(ptr, len i32)`: one or more log lines.
	LogImport = "log"
)

// The first byte of an answer.
const (
	AnswerOK    byte = 0
	AnswerError byte = 1
)

// Method is the number of one method of the plugin protocol's
// PluginService.
type Method uint32

// The methods, in the order of the service in plugin.proto.
const (
	MethodDescribe Method = iota + 1
	MethodConfigure
	MethodValidate
	MethodEnforceMLPolicy
	MethodEnforcePodGroupPolicy
	MethodBuild
	MethodWatch
	MethodStatus
)

// servicePrefix is the gRPC full name of PluginService, with slashes.
const servicePrefix = "/trainforge.plugin.v1.PluginService/"

var byName = map[string]Method{
	servicePrefix + "Describe":              MethodDescribe,
	servicePrefix + "Configure":             MethodConfigure,
	servicePrefix + "Validate":              MethodValidate,
	servicePrefix + "EnforceMLPolicy":       MethodEnforceMLPolicy,
	servicePrefix + "EnforcePodGroupPolicy": MethodEnforcePodGroupPolicy,
	servicePrefix + "Build":                 MethodBuild,
	servicePrefix + "Watch":                 MethodWatch,
	servicePrefix + "Status":                MethodStatus,
}

// MethodOf returns the number of a gRPC full method name
// ("/trainforge.plugin.v1.PluginService/Build"), and false for a name that
// is not one of the protocol's.
func MethodOf(fullName string) (Method, bool) {
	m, ok := byName[fullName]
	return m, ok
}

// String returns the method's name ("Build").
func (m Method) String() string {
	for name, n := range byName {
		if n == m {
			return name[len(servicePrefix):]
		}
	}
	return "method " + itoa(uint32(m))
}

func itoa(n uint32) string {
	if n == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
