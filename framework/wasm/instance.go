package wasm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
	"google.golang.org/genproto/googleapis/rpc/status"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/trainforge/trainforge/framework/pluginhost"
	"github.com/trainforge/trainforge/framework/remote"
	"github.com/trainforge/trainforge/framework/wasm/abi"
)

// instance is one instance of a plugin's module: its own memory, its own
// Go runtime and its own plugin value. One call at a time runs on it.
type instance struct {
	mod                api.Module
	malloc, free, call api.Function
	interrupt          *interrupter // nil: wazero interrupts it (WithCloseOnContextDone)
	log                *logSink
	clock              *fakeClock
	broken             bool      // a call ended it, or left it in a state no call may see
	called             time.Time // when its latest call started
}

// instanceSeq makes the instances' module names unique in a runtime.
var instanceSeq atomic.Uint64

// newInstance instantiates c's module, runs its initialisation and its
// main (abi.StartExport), within ctx. It gets no file system, no
// environment, no network and no real clock (a fake clock that moves only
// as it is read, as wazero's own); stdout is discarded and stderr goes to
// its log like its log function.
func newInstance(ctx context.Context, c *compiled, name string, args []string, log *pluginhost.Log) (*instance, error) {
	in, err := instantiate(c.module.Context(ctx), c, name, args, log, newFakeClock())
	if err != nil {
		return nil, err
	}
	ctx = context.WithValue(ctx, sinkKey{}, in.log)
	fail := func(err error) (*instance, error) {
		in.close()
		return nil, err
	}
	mod := in.mod
	if _, err := in.run(ctx, mod.ExportedFunction(abi.InitializeExport)); err != nil {
		return fail(explain(ctx, "starting the module", err, in.log))
	}
	res, err := in.run(ctx, mod.ExportedFunction(abi.VersionExport))
	if err != nil {
		return fail(explain(ctx, abi.VersionExport, err, in.log))
	}
	if v := api.DecodeU32(res[0]); v != abi.Version {
		return fail(fmt.Errorf("the module speaks the Trainforge plugin ABI %d; this host speaks %d", v, abi.Version))
	}
	res, err = in.run(ctx, mod.ExportedFunction(abi.StartExport))
	var exit *sys.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 0 {
		return fail(fmt.Errorf("its main exited with status 0 (os.Exit(0)) instead of returning: " +
			"built as WebAssembly, sdk.Serve registers the plugin and returns at once, and main must then return for the module to serve"))
	}
	if err != nil {
		return fail(explain(ctx, "its main", err, in.log))
	}
	if api.DecodeU32(res[0]) != 0 {
		why := in.log.why()
		if why == "" {
			why = "it gave no reason"
		}
		return fail(fmt.Errorf("its main served no plugin: %s", why))
	}
	return in, nil
}

// instantiate instantiates c's module with clock, and runs nothing of it:
// its memory comes from the allocator of ctx (PreparedModule.Context, or
// a snapshot's).
func instantiate(ctx context.Context, c *compiled, name string, args []string, log *pluginhost.Log, clock *fakeClock) (*instance, error) {
	sink := newLogSink(log)
	ctx = context.WithValue(ctx, sinkKey{}, sink)
	cfg := wazero.NewModuleConfig().
		WithName(fmt.Sprintf("%s#%d", name, instanceSeq.Add(1))).
		WithArgs(append([]string{name}, args...)...).
		WithStderr(sink).
		WithRandSource(rand.Reader).
		WithNanotime(clock.nanotime, sys.ClockResolution(time.Nanosecond)).
		WithWalltime(clock.walltime, sys.ClockResolution(time.Microsecond)).
		WithStartFunctions() // abi.InitializeExport, once the interruption is armed
	mod, err := c.rt.InstantiateModule(ctx, c.mod, cfg)
	if err != nil {
		return nil, explain(ctx, "starting the module", err, sink)
	}
	in := &instance{
		mod:    mod,
		malloc: mod.ExportedFunction(abi.MallocExport),
		free:   mod.ExportedFunction(abi.FreeExport),
		call:   mod.ExportedFunction(abi.CallExport),
		log:    sink,
		clock:  clock,
	}
	if c.module.Interruptible {
		g, ok := mod.ExportedGlobal(InterruptExport).(api.MutableGlobal)
		if !ok {
			in.close()
			return nil, fmt.Errorf("the module's %s is not a mutable global", InterruptExport)
		}
		in.interrupt = &interrupter{global: g}
	}
	return in, nil
}

// run calls f of the instance with params; the end of ctx interrupts it.
func (in *instance) run(ctx context.Context, f api.Function, params ...uint64) ([]uint64, error) {
	if in.interrupt == nil {
		return f.Call(ctx, params...)
	}
	defer in.interrupt.arm(ctx)()
	return f.Call(ctx, params...)
}

// interrupter interrupts an instance of an interruptible module
// (PreparedModule.Interruptible) by setting its interruption global, which
// its code reads every yieldEvery loop headers and function entries.
type interrupter struct {
	global api.MutableGlobal
	mu     sync.Mutex
	armed  bool
}

// arm sets the global once ctx ends, until the returned func disarms it.
// That func leaves the global clear: the end of a context that came after
// the call returned interrupts nothing, and no later call.
func (i *interrupter) arm(ctx context.Context) (disarm func()) {
	i.mu.Lock()
	i.armed = true
	i.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		i.mu.Lock()
		defer i.mu.Unlock()
		if i.armed {
			i.global.Set(1)
		}
	})
	return func() {
		stop()
		i.mu.Lock()
		defer i.mu.Unlock()
		i.armed = false
		i.global.Set(0)
	}
}

// close ends the instance and frees its memory.
func (in *instance) close() { _ = in.mod.Close(context.Background()) }

// invoke calls method with the request's bytes and returns the answer's
// message bytes. An answer of the plugin's that is an error is returned as
// a gRPC status error, as a gRPC client returns it; every other error
// explains what happened to the call. An answer longer than maxBytes is
// refused unread.
func (in *instance) invoke(ctx context.Context, method abi.Method, req []byte, maxBytes int) ([]byte, error) {
	ctx = context.WithValue(ctx, sinkKey{}, in.log)
	res, err := in.run(ctx, in.malloc, api.EncodeU32(uint32(len(req))))
	if err != nil {
		in.broken = true
		return nil, explain(ctx, abi.MallocExport, err, in.log)
	}
	ptr := api.DecodeU32(res[0])
	if !in.mod.Memory().Write(ptr, req) {
		in.broken = true
		return nil, fmt.Errorf("%s gave a buffer at %#x that is not in its memory of %d bytes", abi.MallocExport, ptr, in.mod.Memory().Size())
	}
	res, err = in.run(ctx, in.call, uint64(method), api.EncodeU32(ptr), api.EncodeU32(uint32(len(req))))
	if err != nil {
		in.broken = true
		return nil, explain(ctx, "the call", err, in.log)
	}
	addr, n := uint32(res[0]>>32), uint32(res[0])
	defer func() {
		if _, err := in.run(ctx, in.free, api.EncodeU32(addr)); err != nil {
			in.broken = true
		}
	}()
	if int64(n) > int64(maxBytes) {
		return nil, &callFailure{msg: fmt.Sprintf("the answer has %d bytes, more than %s %d", n, remote.FieldMaxMessageBytes, maxBytes), tooLarge: true}
	}
	view, ok := in.mod.Memory().Read(addr, n)
	if !ok || n == 0 {
		in.broken = true
		return nil, &callFailure{msg: fmt.Sprintf("the answer's buffer (%d bytes at %#x) is not in the module's memory of %d bytes", n, addr, in.mod.Memory().Size())}
	}
	// The answer is copied out: the buffer is the guest's, freed below.
	out := append([]byte(nil), view[1:]...)
	switch view[0] {
	case abi.AnswerOK:
		return out, nil
	case abi.AnswerError:
		st := &status.Status{}
		if err := proto.Unmarshal(out, st); err != nil {
			return nil, &callFailure{msg: fmt.Sprintf("the plugin's error answer is not a google.rpc.Status: %v", err)}
		}
		return nil, grpcstatus.ErrorProto(st)
	default:
		return nil, &callFailure{msg: fmt.Sprintf("the answer starts with the byte %d, which is neither %d (an answer) nor %d (an error)", view[0], abi.AnswerOK, abi.AnswerError)}
	}
}

// explain turns the error of a call of the guest into what happened: the
// deadline interrupted it, it trapped, or it ended (a Go panic or fatal
// error exits), with the last line it wrote about it.
func explain(ctx context.Context, what string, err error, sink *logSink) error {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return &callFailure{msg: what + ": interrupted at the call's deadline", err: context.DeadlineExceeded, deadline: true}
		case sys.ExitCodeContextCanceled:
			return &callFailure{msg: what + ": interrupted: the call was cancelled", err: context.Canceled}
		}
		msg := fmt.Sprintf("%s: the module exited with status %d", what, exit.ExitCode())
		if why := sink.why(); why != "" {
			msg += ": " + why
		}
		return &callFailure{msg: msg, err: err}
	}
	// An interruptible module's interruption is a trap (interrupter).
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &callFailure{msg: what + ": interrupted at the call's deadline", err: context.DeadlineExceeded, deadline: true}
	case ctx.Err() != nil:
		return &callFailure{msg: what + ": interrupted: " + ctx.Err().Error(), err: ctx.Err()}
	}
	// wazero's message goes on with the guest's stack, one frame a line.
	first, _, _ := strings.Cut(err.Error(), "\n")
	msg := fmt.Sprintf("%s: the module trapped: %s", what, first)
	if why := sink.why(); why != "" {
		msg += " (it said: " + why + ")"
	}
	return &callFailure{msg: msg, err: err}
}

// callFailure is a failed call explained by the host. It has no gRPC
// status, so the protocol's client shows it as it is.
type callFailure struct {
	msg      string
	err      error
	deadline bool
	// starved: it reached its deadline short of CPU (Plugin.starvedCall).
	starved bool
	// tooLarge: the answer was refused unread, for its size.
	tooLarge bool
}

func (e *callFailure) Error() string { return e.msg }
func (e *callFailure) Unwrap() error { return e.err }
