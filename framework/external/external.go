package external

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-plugin"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// Defaults for the zero values of Options; the configuration file has the
// same defaults.
const (
	DefaultStartTimeout   = 10 * time.Second
	DefaultCallTimeout    = 2 * time.Second
	DefaultBackoffInitial = time.Second
	DefaultBackoffMax     = time.Minute
)

// Backoff is the wait between restarts: Initial, doubling after each crash
// or failed start up to Max. It goes back to Initial once a process has run
// for Max.
type Backoff struct{ Initial, Max time.Duration }

// Options configure one external plugin, from its entry in the
// configuration file.
type Options struct {
	// Name is the entry's name. The plugin must give the same name in
	// Describe. Empty takes the name the plugin gives at its first start,
	// for tools that check any plugin (trainforge-plugin-conformance).
	Name string
	// Command is the plugin binary; a bare name is looked up in PATH.
	Command string
	// Args are the command-line arguments of the binary.
	Args []string
	// SHA256 is the expected hex SHA-256 of the binary, checked before
	// every start; empty for no check.
	SHA256 string
	// PluginArgs are sent to Configure after every start.
	PluginArgs json.RawMessage
	// StartTimeout bounds one start: exec, handshake, Describe, Configure
	// and, when the plugin implements it, Watch. Default 10s.
	StartTimeout time.Duration
	// CallTimeout is the deadline of each extension-point call. Default 2s.
	CallTimeout time.Duration
	// SocketDir is where the plugin's Unix socket is made (in a fresh
	// directory per start); empty for the system temp dir.
	SocketDir string
	// Backoff is the restart backoff. Default 1s to 1m.
	Backoff Backoff
	// Env is added to the plugin's environment, after the controller's
	// own (so it wins), for example GOMAXPROCS=1.
	Env []string
	// Logger receives the host's messages about the plugin and the
	// plugin's stderr, under the key/value plugin=<Name>.
	Logger logr.Logger
}

// ErrNotRunning is wrapped by the errors of calls made while the plugin's
// process is not running, and by Ready's.
var ErrNotRunning = errors.New("the plugin is not running")

// Plugin is an external plugin: a supervised process that serves the
// plugin protocol, wrapped into the framework's interfaces. Its methods
// are safe for concurrent use.
type Plugin struct {
	opts Options
	log  logr.Logger

	stop      context.CancelFunc
	done      chan struct{} // closed when the supervisor has returned
	inflight  atomic.Int64  // calls under way
	idle      chan struct{} // signalled when a call ends
	poke      chan struct{} // a call failed as if the process had gone
	closeOnce sync.Once

	mu        sync.Mutex
	proc      *process // nil while no described, configured process runs
	known     bool
	desc      framework.Description
	watch     []framework.WatchSource
	down      string        // why no process runs
	nextStart time.Time     // when the next start is, while none runs
	delay     time.Duration // the wait before the next start after a failure
	closed    bool
}

// process is one started, described and configured plugin process.
type process struct {
	client   *plugin.Client
	runner   *procRunner
	rpc      *remote.Client
	raw      pluginv1.PluginServiceClient
	watch    []framework.WatchSource // its Watch answer
	pid      int
	started  time.Time
	exitSeen bool // its exit has been recorded (under Plugin.mu)
}

var (
	_ framework.Supervised             = (*Plugin)(nil)
	_ framework.FallibleValidator      = (*Plugin)(nil)
	_ framework.Validator              = (*Plugin)(nil)
	_ framework.MLPolicyEnforcer       = (*Plugin)(nil)
	_ framework.PodGroupPolicyEnforcer = (*Plugin)(nil)
	_ framework.Builder                = (*Plugin)(nil)
	_ framework.Watcher                = (*Plugin)(nil)
	_ framework.StatusReporter         = (*Plugin)(nil)
)

// configError is a start failure that the configuration must fix: the
// plugin has another name, or rejects its args. Start returns it when the
// first start finds it.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// Start starts the plugin and supervises it until Close or until ctx ends.
//
// It returns an error only for configuration errors found at the first
// start: the plugin describes itself under another name, or rejects its
// args in Configure (the error includes the plugin's message). A plugin
// that cannot start (binary missing, checksum mismatch, not a plugin, other
// protocol version, start timeout, crash) is not an error: the returned
// Plugin is not Ready (Ready says why), it is retried with backoff in the
// background, and the log says why each time.
func Start(ctx context.Context, opts Options) (*Plugin, error) {
	if opts.Command == "" {
		return nil, fmt.Errorf("external plugin %q: no command", opts.Name)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Backoff.Initial <= 0 {
		opts.Backoff.Initial = DefaultBackoffInitial
	}
	if opts.Backoff.Max <= 0 {
		opts.Backoff.Max = DefaultBackoffMax
	}
	opts.Backoff.Max = max(opts.Backoff.Max, opts.Backoff.Initial)
	opts.SHA256 = strings.ToLower(opts.SHA256)
	opts.Args = slices.Clone(opts.Args)
	opts.Env = slices.Clone(opts.Env)

	sctx, stop := context.WithCancel(ctx)
	p := &Plugin{
		opts:  opts,
		log:   opts.Logger.WithValues("plugin", opts.Name),
		stop:  stop,
		done:  make(chan struct{}),
		poke:  make(chan struct{}, 1),
		idle:  make(chan struct{}, 1),
		delay: opts.Backoff.Initial,
	}
	proc, err := p.startProcess(sctx)
	var cerr *configError
	if errors.As(err, &cerr) {
		stop()
		return nil, cerr.err
	}
	if err != nil {
		p.startFailed(err)
	} else {
		p.started(proc, false)
	}
	go p.supervise(sctx, proc)
	return p, nil
}

// callDone ends a call and tells CloseWhenIdle.
func (p *Plugin) callDone() {
	p.inflight.Add(-1)
	select {
	case p.idle <- struct{}{}:
	default:
	}
}

// CloseWhenIdle waits until no call is under way, or at most timeout, then
// closes the plugin: the host replaced it (a configuration reload) and the
// calls that started before the switch finish on it.
func (p *Plugin) CloseWhenIdle(timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for p.inflight.Load() > 0 {
		select {
		case <-p.idle:
		case <-deadline.C:
			p.log.Info("closing a replaced plugin with calls still under way", "calls", p.inflight.Load())
			p.Close()
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	p.Close()
}

// Close stops supervising the plugin and ends its process: go-plugin asks
// it to shut down and kills it after two seconds. It returns when the
// process is gone. Calls fail afterwards. Close may be called many times.
func (p *Plugin) Close() {
	p.closeOnce.Do(p.stop)
	<-p.done
}

// Pid returns the pid of the running plugin process, or 0.
func (p *Plugin) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil {
		return 0
	}
	return p.proc.pid
}

// RPC returns the PluginService client of the running process, for tools
// that check a plugin's answers themselves (trainforge-plugin-conformance).
// Calls through it have neither the call timeout nor the host's checks.
func (p *Plugin) RPC() (pluginv1.PluginServiceClient, error) {
	proc, err := p.current()
	if err != nil {
		return nil, err
	}
	return proc.raw, nil
}

// Down returns why no process runs: the failure of the latest start or
// the exit of the latest process; "" while one runs.
func (p *Plugin) Down() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc != nil {
		return ""
	}
	return p.down
}

// Describe returns the description of the latest successful start. Before
// any, it holds only the configured name (Known is false).
func (p *Plugin) Describe() framework.Description {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.known {
		return framework.Description{Name: p.opts.Name}
	}
	d := p.desc
	d.MLPolicyKeys = slices.Clone(d.MLPolicyKeys)
	d.PodGroupPolicyKeys = slices.Clone(d.PodGroupPolicyKeys)
	d.Builds = slices.Clone(d.Builds)
	d.Points = slices.Clone(d.Points)
	return d
}

// Known reports whether the plugin has described itself at least once.
func (p *Plugin) Known() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.known
}

// Ready returns nil while a started, described and configured process
// runs; otherwise why not, and when the next start is.
func (p *Plugin) Ready() error {
	_, err := p.current()
	return err
}

// current returns the running process, or the error of a call made now.
func (p *Plugin) current() (*process, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc != nil && !p.closed {
		return p.proc, nil
	}
	if p.closed {
		return nil, fmt.Errorf("%w: the plugin host was closed", ErrNotRunning)
	}
	when := "a start is under way"
	if wait := time.Until(p.nextStart); wait > 0 {
		when = fmt.Sprintf("next start in %s (at %s)", wait.Round(time.Millisecond), p.nextStart.Format(time.TimeOnly))
	}
	return nil, fmt.Errorf("%w: %s; %s", ErrNotRunning, p.down, when)
}

// started records a running process.
func (p *Plugin) started(proc *process, restart bool) {
	desc := proc.rpc.Describe()
	p.mu.Lock()
	p.proc = proc
	p.known = true
	p.desc = desc
	p.watch = proc.watch
	p.down = ""
	p.mu.Unlock()
	msg := "plugin started"
	if restart {
		msg = "plugin restarted"
	}
	p.log.Info(msg, "pid", proc.pid, "version", desc.Version, "points", desc.Points)
}

// startFailed records a failed start and schedules the next.
func (p *Plugin) startFailed(err error) {
	p.mu.Lock()
	p.down = oneLine(err.Error())
	p.nextStart = time.Now().Add(p.delay)
	delay := p.delay
	p.mu.Unlock()
	p.log.Error(err, "plugin did not start; retrying with backoff", "retryIn", delay.String())
}

// exited records the exit of proc, once, and schedules the next start.
// The supervisor calls it, and so does a call that saw the process die,
// so that Ready changes before the call returns.
func (p *Plugin) exited(proc *process) {
	p.mu.Lock()
	if proc.exitSeen || p.closed {
		proc.exitSeen = true
		p.mu.Unlock()
		return
	}
	proc.exitSeen = true
	ran := time.Since(proc.started)
	if ran >= p.opts.Backoff.Max {
		p.delay = p.opts.Backoff.Initial
	}
	reason := fmt.Sprintf("process %d exited after %s: %s", proc.pid, ran.Round(time.Millisecond), proc.runner.exitReason())
	if p.proc == proc {
		p.proc = nil
	}
	p.down = reason
	p.nextStart = time.Now().Add(p.delay)
	delay := p.delay
	p.mu.Unlock()
	p.log.Error(errors.New(reason), "plugin process exited; restarting it with backoff", "pid", proc.pid, "restartIn", delay.String())
}

// supervise waits for the running process to exit, and starts a new one
// with backoff, until ctx ends.
func (p *Plugin) supervise(ctx context.Context, proc *process) {
	defer close(p.done)
	defer p.markClosed()
	for {
		if proc != nil {
			if !p.waitExit(ctx, proc) {
				p.markClosed()
				p.kill(proc.client, proc.runner)
				p.log.Info("plugin stopped", "pid", proc.pid)
				return
			}
			p.exited(proc)
			p.kill(proc.client, proc.runner) // cleans up the socket and go-plugin's goroutines
			proc = nil
		}
		p.mu.Lock()
		wait := time.Until(p.nextStart)
		p.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		p.mu.Lock()
		p.delay = min(2*p.delay, p.opts.Backoff.Max)
		p.mu.Unlock()
		framework.PluginRestarts.WithLabelValues(p.opts.Name).Inc()
		var err error
		proc, err = p.startProcess(ctx)
		if ctx.Err() != nil {
			if proc != nil {
				p.kill(proc.client, proc.runner)
			}
			return
		}
		if err != nil {
			p.startFailed(err)
			continue
		}
		p.started(proc, true)
	}
}

// markClosed makes calls fail: the host is stopping the plugin.
func (p *Plugin) markClosed() {
	p.mu.Lock()
	p.closed = true
	p.proc = nil
	p.mu.Unlock()
}

// waitExit returns true when proc has exited, false when ctx ended first.
//
// A call that failed as if the process had gone pokes it: a process that
// still runs but fails its health check is killed, to be restarted.
//
// go-plugin notices an exit only when the process's stdout and stderr
// close; a process the plugin started may keep them open. So the process
// is also checked every exitCheck, and once it has been gone for
// pipeGrace (time for go-plugin to read its last words) its pipes are
// closed, which lets go-plugin see the exit.
func (p *Plugin) waitExit(ctx context.Context, proc *process) bool {
	tick := time.NewTicker(exitCheck)
	defer tick.Stop()
	var goneSince time.Time
	pipesClosed := false
	for {
		select {
		case <-proc.runner.exited:
			return true
		case <-ctx.Done():
			return false
		case <-tick.C:
			if pipesClosed || !proc.runner.gone() {
				continue
			}
			if goneSince.IsZero() {
				goneSince = time.Now()
			} else if time.Since(goneSince) >= pipeGrace {
				p.log.Info("plugin process exited, but a process it started keeps its stdout or stderr open; no longer reading them", "pid", proc.pid)
				proc.runner.closePipes()
				pipesClosed = true
			}
		case <-p.poke:
			if err := p.healthCheck(ctx, proc); err != nil && ctx.Err() == nil {
				select {
				case <-proc.runner.exited:
					return true
				default:
				}
				p.log.Error(err, "plugin process does not answer its health check; killing it", "pid", proc.pid)
				_ = proc.runner.Kill(context.Background())
			}
		}
	}
}

const (
	exitCheck = 500 * time.Millisecond
	pipeGrace = time.Second
)

func (p *Plugin) healthCheck(ctx context.Context, proc *process) error {
	cp, err := proc.client.Client()
	if err != nil {
		return err
	}
	gc, ok := cp.(*plugin.GRPCClient)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	_, err = healthpb.NewHealthClient(gc.Conn).Check(ctx, &healthpb.HealthCheckRequest{Service: plugin.GRPCServiceName})
	return err
}

// killGrace is how long kill waits for go-plugin's graceful shutdown
// (which itself gives the plugin 2s after asking it to exit) before it
// kills the process itself.
const killGrace = 3 * time.Second

// kill ends a process, waits for it and cleans up after it.
func (p *Plugin) kill(client *plugin.Client, r *procRunner) {
	if r == nil {
		return
	}
	if r.pid() != 0 {
		// go-plugin asks the plugin to exit over gRPC, kills it when it
		// does not within 2s, stops its goroutines and removes the socket
		// directory. A plugin that ignores the request, or whose output a
		// process it started keeps open, would hold it much longer or for
		// ever: kill the process after killGrace, and stop reading its
		// output pipeGrace after it is gone.
		done := make(chan struct{})
		go func() {
			defer close(done)
			client.Kill()
		}()
		deadline := time.Now().Add(killGrace)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		var goneSince time.Time
		pipesClosed := false
	wait:
		for {
			select {
			case <-done:
				break wait
			case <-tick.C:
				switch {
				case pipesClosed:
				case r.gone():
					if goneSince.IsZero() {
						goneSince = time.Now()
					} else if time.Since(goneSince) >= pipeGrace {
						r.closePipes()
						pipesClosed = true
					}
				case time.Now().After(deadline):
					_ = r.Kill(context.Background())
				}
			}
		}
	}
	_ = r.Kill(context.Background())
	if r.socketDir != "" {
		_ = os.RemoveAll(r.socketDir)
	}
}
