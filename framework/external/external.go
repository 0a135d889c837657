package external

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/pluginhost"
	"github.com/trainforge/trainforge/framework/remote"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// Backoff is the wait between restarts: Initial, doubling after each crash
// or failed start up to Max. It goes back to Initial once a process has run
// for Max.
type Backoff = pluginhost.Backoff

// Options configure one external plugin, from its entry in the
// configuration file after the configuration's defaulting, which is where
// every default is (OptionsFor makes them): the host has no defaults of
// its own, and Start refuses options that leave a timeout, the backoff,
// the message bound or the log rate unset. The options every kind of
// plugin shares are pluginhost.Options: there SHA256 is checked before
// every start (empty for no check), StartTimeout bounds exec, handshake,
// Describe, Configure and Watch, and Logger gets the plugin's stderr too.
type Options struct {
	pluginhost.Options
	// Command is the plugin binary; a bare name is looked up in PATH.
	// Exactly one of Command and Socket is set.
	Command string
	// Socket is the absolute path of the Unix socket of a plugin that runs
	// on its own (in a container of its own, served by sdk.Serve with
	// TRAINFORGE_PLUGIN_SOCKET): the host connects to it and starts no
	// process. Args, SHA256, Env and SocketDir do not apply.
	Socket string
	// SocketDir is where the plugin's Unix socket is made (in a fresh
	// directory per start); empty for the system temp dir.
	SocketDir string
	// Env is the plugin process's whole environment ("NAME=value"), PATH
	// included, besides go-plugin's handshake variables, which it cannot
	// override. Nothing of the controller's own environment reaches the
	// plugin.
	Env []string
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

	plog *pluginhost.Log // the processes' stderr

	stop  context.CancelFunc
	done  chan struct{} // closed when the supervisor has returned
	calls pluginhost.Calls
	poke  chan struct{} // a call failed as if the process had gone
	// missed are the inputs whose latest call got no answer within
	// callTimeout (Invoke).
	missed    pluginhost.RecentInputs
	closeOnce sync.Once

	// client is the plugin protocol's client over p itself: each of its
	// calls goes to the process running at the time (Invoke).
	client *remote.Client
	// generation counts the starts that described the plugin.
	generation atomic.Uint64

	mu        sync.Mutex
	proc      *conn                // nil while no described, configured plugin is connected
	described pluginhost.Described // the latest start's answers
	down      string               // why no process runs
	nextStart time.Time            // when the next start is, while none runs
	delay     time.Duration        // the wait before the next start after a failure
	closed    bool
}

// conn is one start of the plugin: a plugin process started, or a socket
// connected to, then described and configured.
type conn struct {
	link      link
	cc        grpc.ClientConnInterface
	raw       pluginv1.PluginServiceClient
	described pluginhost.Described // its answers to the start sequence
	started   time.Time
	exitSeen  bool // its end has been recorded (under Plugin.mu)
}

var (
	_ frameworkruntime.Supervised = (*Plugin)(nil)
	_ framework.Watcher           = (*Plugin)(nil)
	_ grpc.ClientConnInterface    = (*Plugin)(nil)
)

// Start starts the plugin and supervises it until Close or until ctx ends.
//
// It returns an error only for configuration errors found at the first
// start: the plugin describes itself under another name, or rejects its
// args in Configure (a *pluginhost.ConfigError, which quotes the plugin). A plugin
// that cannot start (binary missing, checksum mismatch, not a plugin, other
// protocol version, start timeout, crash) is not an error: the returned
// Plugin is not Ready (Ready says why), it is retried with backoff in the
// background, and the log says why each time.
func Start(ctx context.Context, opts Options) (*Plugin, error) {
	switch {
	case opts.Command == "" && opts.Socket == "":
		return nil, fmt.Errorf("external plugin %q: neither a command nor a socket; set one of them", opts.Name)
	case opts.Command != "" && opts.Socket != "":
		return nil, fmt.Errorf("external plugin %q: both a command (%s) and a socket (%s); set one of them", opts.Name, opts.Command, opts.Socket)
	case opts.Socket != "" && !filepath.IsAbs(opts.Socket):
		return nil, fmt.Errorf("external plugin %q: socket %q is not an absolute path", opts.Name, opts.Socket)
	}
	if err := opts.Check("external"); err != nil {
		return nil, err
	}
	opts.Env = slices.Clone(opts.Env)

	sctx, stop := context.WithCancel(ctx)
	log := opts.Logger.WithValues("plugin", opts.Name)
	p := &Plugin{
		opts:   opts,
		log:    log,
		plog:   pluginhost.NewLog(log, opts.LogLinesPerSecond),
		stop:   stop,
		done:   make(chan struct{}),
		poke:   make(chan struct{}, 1),
		delay:  opts.Backoff.Initial,
		missed: pluginhost.RecentInputs{TTL: pluginhost.MissedDeadlineTTL},
	}
	p.client = remote.NewClient(pluginv1.NewPluginServiceClient(p), opts.Limits)
	proc, err := p.connect(sctx)
	var cerr *pluginhost.ConfigError
	if errors.As(err, &cerr) {
		stop()
		return nil, cerr
	}
	if err != nil {
		p.startFailed(err)
	} else {
		p.started(proc, false)
	}
	go p.supervise(sctx, proc)
	return p, nil
}

// CloseWhenIdle waits until no call is under way, or at most timeout, then
// closes the plugin: the host replaced it (a configuration reload) and the
// calls that started before the switch finish on it.
func (p *Plugin) CloseWhenIdle(timeout time.Duration) {
	p.calls.CloseWhenIdle(timeout, p.log, p.Close)
}

// Close stops supervising the plugin and ends its process: go-plugin asks
// it to shut down and kills it after two seconds. It returns when the
// process is gone. A plugin on a socket keeps running: Close only closes
// the connection. Calls fail afterwards. Close may be called many times.
func (p *Plugin) Close() {
	p.closeOnce.Do(p.stop)
	<-p.done
}

// Pid returns the pid of the running plugin process, or 0 (also for a
// plugin on a socket, which the host does not run).
func (p *Plugin) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil {
		return 0
	}
	return p.proc.link.pid()
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

// Down returns why the plugin is not running: the failure of the latest
// start, the exit of the latest process, or how the connection to its
// socket broke; "" while it runs.
func (p *Plugin) Down() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc != nil {
		return ""
	}
	return p.down
}

// Describe returns the description of the latest successful start. Before
// any, it holds only the configured name (Generation is 0).
func (p *Plugin) Describe() framework.Description {
	d, _, _ := p.Described()
	return d
}

// Client returns the plugin protocol's client whose calls go to the
// process running at the time of each call, with the call deadline; for
// tools and tests that call one extension point themselves.
func (p *Plugin) Client() *remote.Client { return p.client }

// Generation counts the starts of the plugin that described it; 0 until
// the first.
func (p *Plugin) Generation() uint64 { return p.generation.Load() }

// Described returns the description of the latest successful start, what
// the plugin implements according to it, and the Generation it belongs
// to. Every point but Watch is called on the running process through the
// plugin protocol's client; Watch answers what the plugin said at its
// start (Watch).
func (p *Plugin) Described() (framework.Description, framework.Implementation, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	gen := p.generation.Load()
	if gen == 0 {
		return framework.Description{Name: p.opts.Name}, framework.Implementation{}, 0
	}
	// The host configures the plugin on every start of its process.
	d, impl := p.described.Implementation(p.client, p)
	return d, impl, gen
}

// Ready returns nil while a started (or connected), described and
// configured plugin runs; otherwise why not, and when the next start is.
func (p *Plugin) Ready() error {
	_, err := p.current()
	return err
}

// current returns the running plugin, or the error of a call made now.
func (p *Plugin) current() (*conn, error) {
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
