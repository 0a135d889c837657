package external

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
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
	// Describe.
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
	if opts.Name == "" {
		return nil, errors.New("an external plugin needs a name")
	}
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

	sctx, stop := context.WithCancel(ctx)
	p := &Plugin{
		opts:  opts,
		log:   opts.Logger.WithValues("plugin", opts.Name),
		stop:  stop,
		done:  make(chan struct{}),
		poke:  make(chan struct{}, 1),
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

// startProcess runs one start: checks the binary, execs it, completes the
// handshake, then Describe, Configure and Watch, within StartTimeout. On
// failure no process is left.
func (p *Plugin) startProcess(ctx context.Context) (*process, error) {
	deadline := time.Now().Add(p.opts.StartTimeout)
	path, err := exec.LookPath(p.opts.Command)
	if err != nil {
		return nil, fmt.Errorf("cannot run the plugin binary: %w", err)
	}
	if p.opts.SHA256 != "" {
		sum, err := fileSHA256(path)
		if err != nil {
			return nil, fmt.Errorf("cannot check the sha256 of the plugin binary: %w", err)
		}
		if sum != p.opts.SHA256 {
			return nil, fmt.Errorf("sha256 of %s is %s, the configuration expects %s; not starting it", path, sum, p.opts.SHA256)
		}
	}
	p.log.V(1).Info("starting plugin", "command", path, "args", p.opts.Args)

	// The runner is made by go-plugin's call of RunnerFunc, inside
	// client.Client(); stopping must be able to kill it meanwhile.
	var (
		rmu       sync.Mutex
		r         *procRunner
		socketDir string
		stopping  bool
	)
	stderr := newStderrLogger(p.log)
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  remote.Handshake,
		VersionedPlugins: remote.PluginSet(nil),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     p.opts.StartTimeout,
		Stderr:           stderr,
		// go-plugin's own log and its parsing of stderr are off: stderr
		// reaches the controller's log through Stderr, once.
		Logger: hclog.New(&hclog.LoggerOptions{Name: "go-plugin", Level: hclog.Off, Output: io.Discard}),
		RunnerFunc: func(_ hclog.Logger, cmd *exec.Cmd, dir string) (runner.Runner, error) {
			rmu.Lock()
			defer rmu.Unlock()
			socketDir = dir
			if stopping {
				return nil, errors.New("the plugin host is stopping")
			}
			var err error
			r, err = newRunner(path, p.opts.Args, cmd.Env, dir)
			if err != nil {
				return nil, err
			}
			// The stderr lines carry the pid, known once started.
			r.onStart = func(pid int) { stderr.setLogger(p.log.WithValues("pid", pid)) }
			return r, nil
		},
	}
	if p.opts.SocketDir != "" {
		cfg.UnixSocketConfig = &plugin.UnixSocketConfig{TempDir: p.opts.SocketDir}
	}
	client := plugin.NewClient(cfg)

	startDone := make(chan struct{})
	defer close(startDone)
	go func() {
		select {
		case <-ctx.Done():
			rmu.Lock()
			stopping = true
			if r != nil {
				_ = r.Kill(context.Background())
			}
			rmu.Unlock()
		case <-startDone:
		}
	}()

	fail := func(err error) (*process, error) {
		rmu.Lock()
		run, dir := r, socketDir
		rmu.Unlock()
		if run != nil {
			p.kill(client, run)
		} else if dir != "" {
			_ = os.RemoveAll(dir)
		}
		return nil, err
	}

	cp, err := client.Client()
	if err != nil {
		rmu.Lock()
		run := r
		rmu.Unlock()
		if line := lastStderrLine(stderr, run); line != "" {
			err = fmt.Errorf("%w; the plugin's last line on stderr: %q", err, line)
		}
		return fail(fmt.Errorf("starting %s: %w", path, err))
	}
	raw, err := cp.Dispense(remote.PluginName)
	if err != nil {
		return fail(fmt.Errorf("starting %s: %w", path, err))
	}
	svc, ok := raw.(pluginv1.PluginServiceClient)
	if !ok {
		return fail(fmt.Errorf("starting %s: go-plugin dispensed a %T, not a PluginServiceClient", path, raw))
	}
	rmu.Lock()
	run := r
	rmu.Unlock()
	proc := &process{client: client, runner: run, pid: run.pid(), started: time.Now()}

	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	// startErr explains a failed call during the start. remote.Dial's
	// errors already start with "Describe: ".
	startErr := func(point string, err error) error {
		prefix := point + ": "
		if strings.HasPrefix(err.Error(), prefix) {
			prefix = ""
		}
		if errors.Is(sctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return fmt.Errorf("%s: no answer within startTimeout %s", point, p.opts.StartTimeout)
		}
		if reason := proc.runner.exitReason(); reason != "" {
			return fmt.Errorf("%s: the process exited (%s): %w", point, reason, err)
		}
		return fmt.Errorf("%s%w", prefix, err)
	}

	rc, err := remote.Dial(sctx, svc)
	if err != nil {
		return fail(startErr("Describe", err))
	}
	desc := rc.Describe()
	if desc.Name != p.opts.Name {
		return fail(&configError{fmt.Errorf("plugin %q describes itself as %q; the entry's name in the configuration file must be the name the plugin gives", p.opts.Name, desc.Name)})
	}
	if err := rc.Configure(sctx, p.opts.PluginArgs); err != nil {
		var ce *remote.CallError
		if errors.As(err, &ce) {
			switch {
			case ce.Code == codes.InvalidArgument:
				return fail(&configError{fmt.Errorf("plugin %q rejected its args: %s", p.opts.Name, ce.Message)})
			case ce.Code == codes.Unimplemented && hasArgs(p.opts.PluginArgs):
				return fail(&configError{fmt.Errorf("plugin %q takes no args (it does not implement Configure), but the configuration gives it some", p.opts.Name)})
			case ce.Code == codes.Unimplemented:
				err = nil // a plugin without args need not implement Configure
			}
		}
		if err != nil {
			return fail(startErr("Configure", err))
		}
	}
	var watch []framework.WatchSource
	if desc.Implements(framework.PointWatch) {
		if watch, err = rc.Watch(sctx); err != nil {
			return fail(startErr("Watch", err))
		}
	}
	proc.rpc, proc.watch = rc, watch
	return proc, nil
}

func hasArgs(args json.RawMessage) bool {
	s := strings.TrimSpace(string(args))
	return s != "" && s != "null"
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// oneLine joins the lines of a message, for readiness and call errors.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	lines = slices.DeleteFunc(lines, func(l string) bool { return l == "" })
	return strings.Join(lines, "; ")
}

// call runs one extension-point call on the running process, with the
// call deadline, and explains its failure.
func (p *Plugin) call(ctx context.Context, fn func(context.Context, *remote.Client) error) error {
	proc, err := p.current()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	err = fn(cctx, proc.rpc)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return err // the caller gave up
	case timedOut(cctx, err):
		return &callFailure{msg: fmt.Sprintf("no answer within callTimeout %s", p.opts.CallTimeout), err: err}
	case remote.IsUnavailable(err) || proc.client.Exited():
		// The process is probably gone: wait a moment for its exit to
		// explain the failure and to make Ready say so at once.
		select {
		case <-proc.runner.exited:
		case <-time.After(time.Second):
		}
		if reason := proc.runner.exitReason(); reason != "" {
			p.exited(proc)
			return &callFailure{msg: fmt.Sprintf("the plugin's process %d exited during the call (%s); the host restarts it with backoff", proc.pid, reason), err: err}
		}
		select {
		case p.poke <- struct{}{}:
		default:
		}
		return err
	default:
		return err
	}
}

// timedOut reports whether a call failed because its deadline passed.
// The plugin's side has the deadline too, and its DEADLINE_EXCEEDED may
// arrive a moment before ctx's timer fires: wait for that moment, but not
// for an answer of the plugin's own (about something else) well before.
func timedOut(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	var ce *remote.CallError
	if !errors.As(err, &ce) || ce.Code != codes.DeadlineExceeded {
		return false
	}
	select {
	case <-ctx.Done():
		return true
	case <-time.After(deadlineSkew):
		return false
	}
}

// deadlineSkew is how far apart the two ends' deadlines of one call may
// fire.
const deadlineSkew = 100 * time.Millisecond

// callFailure is a failed call explained by the host; it wraps what the
// transport said.
type callFailure struct {
	msg string
	err error
}

func (e *callFailure) Error() string { return e.msg }
func (e *callFailure) Unwrap() error { return e.err }

// Validate implements framework.Validator: a failed call becomes an
// internal field error. The runner calls ValidateCall instead.
func (p *Plugin) Validate(ctx context.Context, info *framework.Info, oldJob, newJob *trainer.TrainJob) ([]string, field.ErrorList) {
	w, errs, err := p.ValidateCall(ctx, info, oldJob, newJob)
	if err != nil {
		return w, append(errs, field.InternalError(field.NewPath("spec"), err))
	}
	return w, errs
}

// ValidateCall asks the plugin to validate a TrainJob.
func (p *Plugin) ValidateCall(ctx context.Context, info *framework.Info, oldJob, newJob *trainer.TrainJob) (warnings []string, errs field.ErrorList, err error) {
	err = p.call(ctx, func(ctx context.Context, c *remote.Client) error {
		var err error
		warnings, errs, err = c.ValidateCall(ctx, info, oldJob, newJob)
		return err
	})
	return warnings, errs, err
}

// EnforceMLPolicy asks the plugin to change Info; Info changes only when
// the call succeeds and its patch is valid.
func (p *Plugin) EnforceMLPolicy(ctx context.Context, info *framework.Info, job *trainer.TrainJob) error {
	return p.call(ctx, func(ctx context.Context, c *remote.Client) error {
		return c.EnforceMLPolicy(ctx, info, job)
	})
}

// EnforcePodGroupPolicy asks the plugin to change Info; Info changes only
// when the call succeeds and its patch is valid.
func (p *Plugin) EnforcePodGroupPolicy(ctx context.Context, info *framework.Info, job *trainer.TrainJob) error {
	return p.call(ctx, func(ctx context.Context, c *remote.Client) error {
		return c.EnforcePodGroupPolicy(ctx, info, job)
	})
}

// Build asks the plugin for its objects.
func (p *Plugin) Build(ctx context.Context, info *framework.Info, job *trainer.TrainJob) (objs []*unstructured.Unstructured, err error) {
	err = p.call(ctx, func(ctx context.Context, c *remote.Client) error {
		var err error
		objs, err = c.Build(ctx, info, job)
		return err
	})
	return objs, err
}

// Watch returns what the plugin's Watch answered at the latest successful
// start (nil when it does not implement Watch).
func (p *Plugin) Watch(context.Context) ([]framework.WatchSource, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.known {
		return nil, fmt.Errorf("%w: it has never started, so its watches are not known: %s", ErrNotRunning, p.down)
	}
	return slices.Clone(p.watch), nil
}

// Status asks the plugin for the TrainJob's status.
func (p *Plugin) Status(ctx context.Context, job *trainer.TrainJob, owned []*unstructured.Unstructured) (st *trainer.TrainJobStatus, err error) {
	err = p.call(ctx, func(ctx context.Context, c *remote.Client) error {
		var err error
		st, err = c.Status(ctx, job, owned)
		return err
	})
	return st, err
}

// lastStderrLine returns the last line a plugin that failed to start wrote
// on stderr, which often says why. A process that has just exited may
// still have lines in the pipe: they are given a moment to arrive.
func lastStderrLine(w *stderrLogger, r *procRunner) string {
	for range 25 {
		if line := w.lastLine(); line != "" || r == nil || r.exitReason() == "" {
			return line
		}
		time.Sleep(10 * time.Millisecond)
	}
	return w.lastLine()
}
