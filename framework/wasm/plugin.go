package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/pluginhost"
	"github.com/trainforge/trainforge/framework/remote"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/framework/wasm/abi"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// Options configure one WebAssembly plugin, from its entry in the
// configuration file after the configuration's defaulting (OptionsFor):
// Start refuses options that leave a timeout, the memory limit, the pool,
// the message bound or the log rate unset. Of the options every kind
// shares (pluginhost.Options): SHA256 is the module's, required (a module
// is code the controller runs in its own process); Args are the module's
// command-line arguments (os.Args[1:] of a Go guest; the plugin's name is
// its os.Args[0]); StartTimeout bounds the start of one instance (the
// module's initialisation, its main, Describe at the first, Configure);
// CallTimeout runs from the moment a call has an instance (the wait for
// one is bounded apart, by InstanceWait), and the guest is interrupted at
// it; Backoff bounds the stops of a module whose calls keep ending at
// their deadline (DeadlinesBeforeBackoff): the first lasts
// Backoff.Initial, each next one twice the last, at most Backoff.Max.
type Options struct {
	pluginhost.Options
	// Module is the path of the .wasm file.
	Module string
	// MemoryLimitBytes bounds the memory of each instance; the module's
	// attempts to grow past it fail. Rounded down to 64 KiB pages.
	MemoryLimitBytes int64
	// MaxInstances bounds the instances, and so the calls under way at
	// once, unless Budget holds fewer; the memory of the plugin is at most
	// its instances × MemoryLimitBytes.
	MaxInstances int
	// Budget is the plugin's share of the memory budget of every wasm
	// plugin (pluginHost.wasmMemoryBudget), which OptionsFor computes.
	// Zero: no budget, for a tool that runs one plugin alone.
	Budget Budget
	// CacheDir keeps the compiled machine code of modules on disk, keyed
	// by their contents, for the next start of the process; empty keeps it
	// in memory only.
	CacheDir string
}

// ErrClosed is wrapped by the errors of calls made after Close.
var ErrClosed = errors.New("the wasm plugin was closed")

// InstanceWait bounds the wait of a call for a free instance (or the
// call's timeout, when shorter). Past it the call fails at once with a
// *framework.UnavailableError, which retries the TrainJob under every
// failure policy: an instance held by another TrainJob's call (one that
// loops until its deadline) is no answer of the plugin's to this one.
// Long enough for a new instance to start on a busy machine (about 0.1 s
// on an idle one), short beside callTimeout.
const InstanceWait = time.Second

// DeadlinesBeforeBackoff is how many calls in a row may end at their
// deadline, with no answer of the module's between them, before the
// module is stopped for a backoff (Options.Backoff.Initial): each such
// call burns an instance's CPU for its whole timeout and ends the
// instance, and a module whose every call loops would otherwise do so
// for every TrainJob, as fast as new instances start. Once it is taken
// back, one more deadline before an answer stops it again, for twice as
// long.
const DeadlinesBeforeBackoff = 3

// Plugin is a WebAssembly plugin: a module compiled once and run in a
// pool of instances in the controller's process, wrapped into the
// framework's interfaces by the plugin protocol's client (remote.Client),
// the one that wraps external plugins, with the same decoder and limits.
// Its methods are safe for concurrent use.
type Plugin struct {
	opts   Options
	log    logr.Logger
	plog   *pluginhost.Log
	mod    *compiled
	client *remote.Client
	// configure is the Configure request an instance started as the first
	// was gets before its first call (one started from snap was
	// configured already); nil until the first instance is described.
	configure []byte
	// snap is the first instance, saved once configured: every later
	// instance starts from it (snapshot.go). Nil when the module's
	// instances cannot be saved; then each starts as the first did.
	snap *snapshot
	// ended are the inputs whose calls ended their instance lately, or
	// whose answers were refused unread for their size, with their
	// errors: a module has no clock, no network and no files, so given
	// the same input it does the same again, and a retry of its TrainJob
	// would spend an instance (a new one's start) and, for a loop, a core
	// for the whole callTimeout, or the building of megabytes in the
	// guest, to get the same answer. Such a call gets that answer at once
	// instead.
	ended pluginhost.RecentInputs
	// starved are the inputs whose latest call reached its deadline with
	// a tenth of it or less in CPU time (starvedShare): the controller's
	// process was short of CPU, which is no answer of the module's.
	starved pluginhost.RecentInputs
	// callCPU measures the CPU time of a call (threadCPU; a test's own).
	callCPU func() (stop func() (time.Duration, bool))

	// idle holds the instances no call uses; its capacity is the pool's
	// size, so a send never blocks.
	idle  chan *instance
	calls pluginhost.Calls

	mu       sync.Mutex
	all      map[*instance]bool // the instances that run, idle or in a call
	live     int                // those and the ones starting
	released bool               // the compiled module was released (drop)
	size     int                // the most instances: MaxInstances within the Budget
	spawnErr error              // why the latest start of an instance failed
	// described are the first instance's answers to the start sequence.
	described pluginhost.Described
	closed    bool
	// strikes are the calls in a row that ended at their deadline with no
	// answer of the module's between them; backoff is the length of the
	// latest stop, downUntil its end and downWhy its cause.
	strikes   int
	backoff   time.Duration
	downUntil time.Time
	downWhy   string
}

var (
	_ frameworkruntime.Supervised = (*Plugin)(nil)
	_ framework.Watcher           = (*Plugin)(nil)
	_ grpc.ClientConnInterface    = (*Plugin)(nil)
)

// Start loads, checks and compiles the module (or takes it from the
// compilation cache), starts a first instance, asks it for its
// description, configures it and asks for its watches. Any failure is
// returned: the module is a file, and nothing but another file (a
// configuration reload) can fix it.
func Start(ctx context.Context, opts Options) (*Plugin, error) {
	if err := opts.Check("wasm",
		pluginhost.Required{Name: "Module", OK: opts.Module != ""},
		pluginhost.Required{Name: "SHA256", OK: opts.SHA256 != ""},
		pluginhost.Required{Name: "MemoryLimitBytes", OK: opts.MemoryLimitBytes >= PageBytes},
		pluginhost.Required{Name: "MaxInstances", OK: opts.MaxInstances > 0},
	); err != nil {
		return nil, err
	}
	pages := memoryPages(opts.MemoryLimitBytes)
	size, err := opts.Budget.instances(opts.Name, opts.MaxInstances, int64(pages)*PageBytes)
	if err != nil {
		return nil, err
	}
	log := opts.Logger.WithValues("plugin", opts.Name)
	p := &Plugin{
		opts: opts,
		log:  log,
		plog: pluginhost.NewLog(log, opts.LogLinesPerSecond),
		idle: make(chan *instance, size),
		all:  map[*instance]bool{},
		size: size,
		// As long as the longest stop of the module.
		ended:   pluginhost.RecentInputs{TTL: opts.Backoff.Max},
		starved: pluginhost.RecentInputs{TTL: pluginhost.MissedDeadlineTTL},
		callCPU: threadCPU,
	}
	p.client = remote.NewClient(pluginv1.NewPluginServiceClient(p), opts.Limits)
	if p.mod, err = load(ctx, opts.Name, opts.Module, opts.SHA256, pages, opts.CacheDir); err != nil {
		return nil, err
	}
	if err := p.first(ctx); err != nil {
		p.Close()
		return nil, err
	}
	frameworkruntime.PluginDown.WithLabelValues(opts.Name).Set(0)
	log.Info("wasm plugin started", "module", opts.Module, "sha256", opts.SHA256,
		"memoryLimitBytes", int64(pages)*PageBytes, "maxInstances", opts.MaxInstances, "instances", size,
		"memoryBudgetBytes", opts.Budget.TotalBytes)
	return p, nil
}

// first starts the first instance and runs the start sequence every kind
// of plugin runs (pluginhost.Handshake) on it.
func (p *Plugin) first(ctx context.Context) error {
	deadline := time.Now().Add(p.opts.StartTimeout)
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	in, err := newInstance(sctx, p.mod, p.opts.Name, p.opts.Args, p.plog)
	if err != nil {
		if errors.Is(sctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within startTimeout %s: %w", p.opts.StartTimeout, err)
		}
		return p.startError(&pluginhost.StepError{Step: "starting an instance", Err: err})
	}
	p.mu.Lock()
	p.live, p.all[in] = 1, true
	p.idle <- in
	p.mu.Unlock()
	d, err := pluginhost.Handshake{
		Name:         p.opts.Name,
		PluginArgs:   p.opts.PluginArgs,
		Host:         p.opts.Host,
		Limits:       p.opts.Limits,
		StartTimeout: p.opts.StartTimeout,
	}.Run(ctx, deadline, p.with(p.opts.StartTimeout))
	if err != nil {
		return p.startError(err)
	}
	if p.opts.Name == "" {
		p.opts.Name = d.Desc.Name
		p.log = p.log.WithValues("plugin", d.Desc.Name)
	}
	// Every instance started later is configured the same way.
	if p.configure, err = proto.Marshal(&pluginv1.ConfigureRequest{Args: p.opts.PluginArgs, Host: remote.HostToProto(p.opts.Host)}); err != nil {
		return err
	}
	if p.mod.module.Restorable {
		p.saveFirst(ctx, in, deadline)
	}
	p.mu.Lock()
	p.described = d
	p.mu.Unlock()
	return nil
}

// saveFirst saves in, the first instance, configured and idle, and
// replaces it in the pool with an instance started from the save, once
// that one has described itself byte for byte as in does. A module whose
// instances do not survive a save runs without one (the reason is
// logged): each instance then starts as the first did.
func (p *Plugin) saveFirst(ctx context.Context, in *instance, deadline time.Time) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	s, err := in.save(p.mod.module)
	if err != nil {
		p.log.Info("the wasm plugin's first instance could not be saved; every instance starts as the first did", "error", err.Error())
		return
	}
	restored, err := s.restore(ctx, p.mod, p.opts.Name, p.opts.Args, p.plog)
	if err == nil {
		err = sameDescription(ctx, in, restored, p.opts.MaxMessageBytes)
		if err != nil {
			restored.close()
		}
	}
	if err != nil {
		s.close()
		p.log.Info("an instance started from the saved first instance does not serve as the first did; every instance starts as the first did", "error", err.Error())
		return
	}
	p.mu.Lock()
	// No call runs before Start returns: in is the one instance, idle.
	if len(p.idle) != 1 || len(p.all) != 1 || !p.all[in] {
		p.mu.Unlock()
		restored.close()
		s.close()
		return
	}
	<-p.idle
	delete(p.all, in)
	p.all[restored] = true
	p.idle <- restored
	p.snap = s
	p.mu.Unlock()
	in.close()
}

// sameDescription checks that instance b describes itself as instance a.
func sameDescription(ctx context.Context, a, b *instance, maxBytes int) error {
	want, err := a.invoke(ctx, abi.MethodDescribe, nil, maxBytes)
	if err != nil {
		return fmt.Errorf("Describe of the saved instance: %w", err)
	}
	got, err := b.invoke(ctx, abi.MethodDescribe, nil, maxBytes)
	if err != nil {
		return fmt.Errorf("Describe: %w", err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("its Describe answer (%d bytes) is not the saved instance's (%d bytes)", len(got), len(want))
	}
	return nil
}

// startError names the plugin in the error of a failed start; a
// *pluginhost.ConfigError names it already.
func (p *Plugin) startError(err error) error {
	var cerr *pluginhost.ConfigError
	if errors.As(err, &cerr) {
		return err
	}
	return fmt.Errorf("wasm plugin %q: %w", p.opts.Name, err)
}

// acquire returns an instance no other call uses: an idle one, else the
// first to become idle within InstanceWait, while one more is started in
// the background when fewer than the pool's size run. An instance starts
// within StartTimeout, not the wait: a call that gives up leaves the
// instance it caused to the next. A plugin stopped for a backoff, or
// closed, gives none at once.
func (p *Plugin) acquire(ctx context.Context) (*instance, error) {
	if err := p.unavailable(); err != nil {
		return nil, err
	}
	select {
	case in := <-p.idle:
		return in, nil
	default:
	}
	p.grow()
	wait := min(InstanceWait, p.opts.CallTimeout)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case in := <-p.idle:
		return in, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
	}
	if err := p.unavailable(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// The message names no count that changes from one call to the next:
	// it is the TrainJob's condition until a retry succeeds.
	msg := fmt.Sprintf("no instance of the wasm plugin was free within %s: all %d were in other calls or starting; "+
		"that is no answer of the plugin's, so the TrainJob is retried", wait, p.size)
	if p.spawnErr != nil {
		msg += "; the latest start of an instance failed: " + p.spawnErr.Error()
	}
	return nil, &framework.UnavailableError{Err: errors.New(msg)}
}

// unavailable returns why the plugin takes no call now (it is closed, or
// stopped for a backoff), or nil.
func (p *Plugin) unavailable() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return &framework.UnavailableError{Err: ErrClosed}
	case p.stopped():
		return &framework.UnavailableError{Err: fmt.Errorf("the wasm plugin is stopped for a backoff of %s: %s", p.backoff, p.downWhy)}
	}
	return nil
}

// stopped reports whether the plugin is in a backoff (p.mu held).
func (p *Plugin) stopped() bool { return time.Now().Before(p.downUntil) }

// grow starts one more instance in the background, within StartTimeout,
// unless the pool's size run (or are starting) already, or the plugin is
// closed or stopped; it joins the idle ones when it is ready.
func (p *Plugin) grow() {
	p.mu.Lock()
	if p.closed || p.stopped() || p.live >= p.size {
		p.mu.Unlock()
		return
	}
	p.live++
	p.mu.Unlock()
	go func() {
		in, err := p.spawn(context.Background())
		p.mu.Lock()
		switch {
		case err == nil && !p.closed && !p.stopped():
			p.spawnErr = nil
			p.all[in] = true
			p.idle <- in // never blocks: at most p.size exist
			p.mu.Unlock()
			return
		case err != nil:
			p.spawnErr = err
			if !p.closed {
				p.log.Info("could not start an instance of the wasm plugin", "error", err.Error())
			}
		}
		last := p.drop(1)
		p.mu.Unlock()
		if in != nil {
			in.close()
		}
		if last {
			p.releaseModule()
		}
	}()
}

// spawn starts one more instance, within StartTimeout: from the saved
// first instance, or else as the first, configured.
func (p *Plugin) spawn(ctx context.Context) (*instance, error) {
	sctx, cancel := context.WithTimeout(ctx, p.opts.StartTimeout)
	defer cancel()
	if p.snap != nil {
		return p.snap.restore(sctx, p.mod, p.opts.Name, p.opts.Args, p.plog)
	}
	in, err := newInstance(sctx, p.mod, p.opts.Name, p.opts.Args, p.plog)
	if err != nil {
		return nil, fmt.Errorf("starting another instance: %w", err)
	}
	if _, err := in.invoke(sctx, abi.MethodConfigure, p.configure, p.opts.MaxMessageBytes); err != nil {
		if err = pluginhost.ConfigureError(p.opts.Name, p.opts.PluginArgs, err); err != nil {
			in.close()
			return nil, fmt.Errorf("configuring another instance: %w", err)
		}
	}
	return in, nil
}

// release gives the instance back to the pool after a call that ended
// with err, or ends it when its call broke it or grew it (grown), the
// plugin is closed or stopped; a broken or grown one is replaced at once,
// in the background, so that the next call finds one ready. A call that
// ended at its deadline counts towards the module's backoff, an answer
// clears it.
func (p *Plugin) release(in *instance, err error) {
	grown := !in.broken && p.grown(in)
	p.mu.Lock()
	idle := p.account(in, err)
	if !in.broken && !grown && !p.closed && !p.stopped() {
		p.idle <- in // never blocks: at most p.size exist
		p.mu.Unlock()
		return
	}
	last := p.drop(1)
	delete(p.all, in)
	p.mu.Unlock()
	memory := in.mod.Memory().Size()
	in.close()
	for _, i := range idle {
		i.close()
	}
	if last {
		p.releaseModule()
	}
	switch {
	case in.broken:
		// As a crashed external plugin's restart.
		frameworkruntime.PluginRestarts.WithLabelValues(p.opts.Name).Inc()
		p.log.Info("a call ended an instance of the wasm plugin; starting another unless it is stopped")
		p.grow()
	case grown:
		frameworkruntime.PluginInstancesReplaced.WithLabelValues(p.opts.Name).Inc()
		p.log.V(1).Info("a call left an instance of the wasm plugin holding more than half the memory its limit left it; starting another from the saved one",
			"memoryBytes", memory)
		p.grow()
	}
}

// grown reports whether a call left in holding more than half the room
// that the memory limit left it past the saved instance's memory: a
// WebAssembly memory never shrinks, and an instance started from the save
// (snapshot.go) costs a few page faults. Without a save, starting one
// costs more than the memory it gives back, and no instance is grown.
func (p *Plugin) grown(in *instance) bool {
	if p.snap == nil {
		return false
	}
	saved := uint64(p.snap.pages) * PageBytes
	limit := uint64(memoryPages(p.opts.MemoryLimitBytes)) * PageBytes
	return uint64(in.mod.Memory().Size()) > saved+(limit-min(saved, limit))/2
}

// releaseModule releases the compiled module and the saved instance, once
// the plugin is closed and its last instance ended.
func (p *Plugin) releaseModule() {
	p.mod.release(context.Background())
	if p.snap != nil {
		p.snap.close()
	}
}

// account counts the end of a call on in towards the backoff (p.mu held).
// When it stops the module it returns the idle instances, which it took
// out of the pool, for the caller to end.
func (p *Plugin) account(in *instance, err error) []*instance {
	var cf *callFailure
	switch {
	case !in.broken:
		// The module answered (an error answer too): it serves.
		p.strikes, p.backoff = 0, 0
		return nil
	case !errors.As(err, &cf) || !cf.deadline || cf.starved:
		return nil
	case in.called.Before(p.downUntil):
		// It started before the latest stop: the stop counted it.
		return nil
	}
	p.strikes++
	if p.strikes < DeadlinesBeforeBackoff || p.closed {
		return nil
	}
	p.backoff = min(max(2*p.backoff, p.opts.Backoff.Initial), p.opts.Backoff.Max)
	p.downUntil = time.Now().Add(p.backoff)
	p.downWhy = fmt.Sprintf("%d calls in a row ended at their deadline (callTimeout %s) with no answer between them", p.strikes, p.opts.CallTimeout)
	// On probation when it is taken back: one more deadline before an
	// answer stops it again, for twice as long.
	p.strikes = DeadlinesBeforeBackoff - 1
	var idle []*instance
	for len(p.idle) > 0 {
		i := <-p.idle
		idle = append(idle, i)
		delete(p.all, i)
	}
	p.live -= len(idle)
	frameworkruntime.PluginDown.WithLabelValues(p.opts.Name).Set(1)
	until := p.downUntil
	time.AfterFunc(p.backoff, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.downUntil.Equal(until) {
			frameworkruntime.PluginDown.WithLabelValues(p.opts.Name).Set(0)
		}
	})
	p.log.Info("the wasm plugin is stopped for a backoff: its calls keep ending at their deadline; "+
		"its calls fail at once until then, and the TrainJobs they were for are retried",
		"backoff", p.backoff.String(), "until", until.Format(time.TimeOnly), "why", p.downWhy, "latest", cf.msg)
	return idle
}

// Invoke implements grpc.ClientConnInterface for the plugin protocol's
// client: it sends one call to an instance of its own, with the call
// deadline, which interrupts the guest. A call that ends the instance (a
// trap, a panic, its deadline, memory past the limit) is that call's
// error; the next call gets another instance, and a call of the same
// input within BackoffMax gets the same error at once (Plugin.ended), as
// does one whose answer was refused unread for its size.
func (p *Plugin) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	return p.invoke(ctx, p.opts.CallTimeout, method, args, reply)
}

// with is p with another deadline per call, for the calls of a start.
func (p *Plugin) with(timeout time.Duration) grpc.ClientConnInterface {
	return timedConn{p: p, timeout: timeout}
}

type timedConn struct {
	p       *Plugin
	timeout time.Duration
}

func (c timedConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	return c.p.invoke(ctx, c.timeout, method, args, reply)
}

func (c timedConn) NewStream(ctx context.Context, d *grpc.StreamDesc, m string, o ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.p.NewStream(ctx, d, m, o...)
}

func (p *Plugin) invoke(ctx context.Context, timeout time.Duration, method string, args, reply any) error {
	p.calls.Begin()
	defer p.calls.End()
	m, ok := abi.MethodOf(method)
	if !ok {
		return status.Errorf(codes.Unimplemented, "the plugin protocol has no method %s", method)
	}
	in, ok := args.(proto.Message)
	if !ok {
		return fmt.Errorf("%s: the request is a %T, not a protobuf message", method, args)
	}
	out, ok := reply.(proto.Message)
	if !ok {
		return fmt.Errorf("%s: the reply is a %T, not a protobuf message", method, reply)
	}
	req, err := proto.Marshal(in)
	if err != nil {
		return err
	}
	key := pluginhost.KeyOf(method, in, req)
	if err := p.ended.Lookup(key); err != nil {
		return err
	}
	inst, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	// The deadline starts with the call, not with the wait for an
	// instance: the time the plugin had is its own.
	inst.called = time.Now()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := p.callCPU()
	answer, err := inst.invoke(cctx, m, req, p.opts.MaxMessageBytes)
	cpu, measured := stop()
	remember := inst.broken || refusedUnread(err)
	starved := measured && ctx.Err() == nil && p.starvedCall(key, err, cpu, timeout)
	p.release(inst, err)
	if err != nil {
		err = p.callError(ctx, timeout, err)
		if starved {
			return &framework.UnavailableError{Err: err}
		}
		if remember && ctx.Err() == nil {
			p.ended.Add(key, err)
		}
		return err
	}
	p.starved.Forget(key)
	if err := proto.Unmarshal(answer, out); err != nil {
		return &callFailure{msg: fmt.Sprintf("the answer is not a %s: %v", out.ProtoReflect().Descriptor().FullName(), err)}
	}
	return nil
}

// starvedShare is the share of its deadline in CPU time (1/starvedShare)
// under which a call that reached it counts as starved. A module that
// loops spends most of its deadline on a CPU, even with every instance
// looping at once on a small machine (four on two cores: half each);
// an honest call that waited for a CPU spends a few milliseconds of it.
const starvedShare = 10

// starvedCall reports whether a call of that input that ended with err
// after cpu of CPU time reached its deadline (timeout) for want of CPU,
// the first time for that input: such a call is no answer of the
// module's, so it fails with a *framework.UnavailableError, which retries
// the TrainJob under either failure policy, neither remembered with the
// ended calls nor counted towards a backoff. A second such call of the
// same input within pluginhost.MissedDeadlineTTL, with no answer between,
// counts as the module's, as a call that spent its deadline looping: a
// machine short of CPU for that long delays its TrainJobs, but a module
// cannot hide a loop behind it for ever.
func (p *Plugin) starvedCall(key pluginhost.InputKey, err error, cpu, timeout time.Duration) bool {
	var cf *callFailure
	if !errors.As(err, &cf) || !cf.deadline {
		return false
	}
	// Said of every deadline: how much of it the module had is what tells
	// a loop from a busy machine.
	cf.msg += fmt.Sprintf(" after %s of CPU time", cpu.Round(time.Millisecond))
	if cpu >= timeout/starvedShare {
		return false
	}
	if !p.starved.AddFirst(key, err) {
		cf.msg += " (short of CPU again for this input: counted as the module's)"
		return false
	}
	cf.msg += " (the controller's process was short of CPU; " + pluginhost.FirstMissNote + ")"
	cf.starved = true
	return true
}

// refusedUnread reports whether err refused an answer unread, for its
// size.
func refusedUnread(err error) bool {
	var cf *callFailure
	return errors.As(err, &cf) && cf.tooLarge
}

// callError says a call that its deadline ended in the words an external
// plugin's host uses.
func (p *Plugin) callError(ctx context.Context, timeout time.Duration, err error) error {
	var cf *callFailure
	switch {
	case ctx.Err() != nil:
		return err // the caller gave up
	case errors.As(err, &cf) && cf.deadline:
		return &callFailure{msg: fmt.Sprintf("no answer within callTimeout %s: %s", timeout, cf.msg), err: err, deadline: true}
	}
	return err
}

// NewStream implements grpc.ClientConnInterface; the plugin protocol has
// no streaming call.
func (p *Plugin) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "the plugin protocol has no streaming calls")
}

// Client returns the plugin protocol's client over the module, with the
// call deadline and the host's limits; for tools and tests that call one
// extension point themselves.
func (p *Plugin) Client() *remote.Client { return p.client }

// RPC returns the PluginService client over the module, for tools that
// check a plugin's answers themselves (trainforge-plugin-conformance):
// the calls have the call deadline and the answer bound, but none of the
// protocol client's checks.
func (p *Plugin) RPC() pluginv1.PluginServiceClient { return pluginv1.NewPluginServiceClient(p) }

// Describe returns the plugin's description.
func (p *Plugin) Describe() framework.Description {
	d, _, _ := p.Described()
	return d
}

// Generation is 1: a Plugin is one start of a module; a changed module is
// another Plugin (a configuration reload).
func (p *Plugin) Generation() uint64 { return 1 }

// Described returns the plugin's description, what it implements
// according to it (the protocol client's methods), and Generation.
func (p *Plugin) Described() (framework.Description, framework.Implementation, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The host configures every instance when it starts it.
	d, impl := p.described.Implementation(p.client, p)
	return d, impl, 1
}

// Ready returns nil while the plugin takes calls: a module that compiled
// and whose first instance started serves, and a call that breaks an
// instance is that call's error (the next call gets a new one). It says
// why not after Close, and while the module is stopped for a backoff.
func (p *Plugin) Ready() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return ErrClosed
	case p.stopped():
		return fmt.Errorf("the wasm plugin is stopped for a backoff of %s: %s; it takes calls again in %s (at %s)",
			p.backoff, p.downWhy, time.Until(p.downUntil).Round(time.Millisecond), p.downUntil.Format(time.TimeOnly))
	}
	return nil
}

// Watch returns what the plugin's Watch answered at the start.
func (p *Plugin) Watch(context.Context) ([]framework.WatchSource, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.described.Watch), nil
}

// Instances returns the instances that run (idle or in a call) and the
// bytes of memory they hold now (the memory of one in a call may be
// growing as it is read).
func (p *Plugin) Instances() (n int, memoryBytes uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for in := range p.all {
		memoryBytes += uint64(in.mod.Memory().Size())
	}
	return len(p.all), memoryBytes
}

// CloseWhenIdle waits until no call is under way, or at most timeout, then
// closes the plugin: the host replaced it (a configuration reload) and the
// calls that started before the switch finish on it.
func (p *Plugin) CloseWhenIdle(timeout time.Duration) {
	p.calls.CloseWhenIdle(timeout, p.log, p.Close)
}

// Close ends the idle instances at once and the others when their calls
// (or starts) end, and then releases the compiled module. Calls fail
// afterwards. Close may be called many times.
func (p *Plugin) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	var idle []*instance
	for len(p.idle) > 0 {
		in := <-p.idle
		idle = append(idle, in)
		delete(p.all, in)
	}
	last := p.drop(len(idle))
	p.mu.Unlock()
	for _, in := range idle {
		in.close()
	}
	if last {
		p.releaseModule()
	}
}

// drop counts n instances ended (p.mu held) and reports whether they were
// the last of a closed plugin: the caller then releases the compiled
// module, once it has ended them. Releasing it before would end the
// runtime under an instance that still runs a call or its start, and
// with it the instance's memory (memoryAllocator unmaps it at once).
func (p *Plugin) drop(n int) bool {
	p.live -= n
	if p.closed && p.live == 0 && !p.released {
		p.released = true
		return true
	}
	return false
}
