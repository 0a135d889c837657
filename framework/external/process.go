package external

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/trainforge/trainforge/framework/pluginhost"
	"github.com/trainforge/trainforge/framework/remote"
)

// startProcess runs one start of a child-process plugin: checks the
// binary, execs it, completes go-plugin's handshake, then Describe,
// Configure and Watch, within StartTimeout. On failure no process is left.
func (p *Plugin) startProcess(ctx context.Context) (*conn, error) {
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
	// The stderr lines carry the pid, known once started.
	var lmu sync.Mutex
	stderrLog := p.log
	stderr := pluginhost.NewLines(func(line []byte, truncated int) {
		lmu.Lock()
		log := stderrLog
		lmu.Unlock()
		p.plog.Line(log, line, truncated)
	})
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  remote.Handshake,
		VersionedPlugins: remote.PluginSet(nil),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     p.opts.StartTimeout,
		Stderr:           stderr,
		// The controller's environment stays out of the plugin's: see
		// pluginEnv.
		SkipHostEnv: true,
		// go-plugin allows answers of up to 2 GiB; the host allows
		// MaxMessageBytes (a later call option wins).
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(p.opts.MaxMessageBytes))},
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
			r, err = newRunner(path, p.opts.Args, pluginEnv(p.opts.Env, cmd.Env), dir)
			if err != nil {
				return nil, err
			}
			r.onStart = func(pid int) {
				lmu.Lock()
				stderrLog = p.log.WithValues("pid", pid)
				lmu.Unlock()
			}
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

	fail := func(err error) (*conn, error) {
		rmu.Lock()
		run, dir := r, socketDir
		rmu.Unlock()
		if run != nil {
			(&procLink{client: client, runner: run, log: p.log}).close()
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
		if strings.Contains(err.Error(), "incompatible API version") {
			err = fmt.Errorf("%w; this controller speaks Trainforge plugin protocol version %d: use a build of the plugin for it", err, remote.ProtocolVersion)
		}
		return fail(fmt.Errorf("starting %s: %w", path, err))
	}
	gc, ok := cp.(*plugin.GRPCClient)
	if !ok {
		return fail(fmt.Errorf("starting %s: go-plugin connected with %T, not gRPC", path, cp))
	}
	rmu.Lock()
	run := r
	rmu.Unlock()
	l := &procLink{client: client, runner: run, log: p.log, pidAtStart: run.pid()}
	c, err := p.handshake(ctx, deadline, l, gc.Conn, path)
	if err != nil {
		return fail(err)
	}
	return c, nil
}

// pluginEnv is the environment of a plugin process: the host's env (PATH,
// GOMAXPROCS, the entry's external.env), then go-plugin's handshake
// variables, which the others cannot override (of duplicates, exec keeps
// the last). Nothing of
// the controller's own environment: not its KUBECONFIG, its service
// account's variables, its HOME or its cloud credentials.
func pluginEnv(env, handshake []string) []string {
	out := make([]string, 0, len(env)+len(handshake))
	out = append(out, env...)
	return append(out, handshake...)
}

// procLink is a plugin process that the host started with go-plugin.
type procLink struct {
	client     *plugin.Client
	runner     *procRunner
	log        logr.Logger
	pidAtStart int

	// poll's state: when the process was first seen gone while its pipes
	// stayed open, and whether they have been closed since.
	goneSince   time.Time
	pipesClosed bool
}

var _ link = (*procLink)(nil)

func (l *procLink) logKeys() []any         { return []any{"pid", l.pidAtStart} }
func (l *procLink) pid() int               { return l.pidAtStart }
func (l *procLink) ended() <-chan struct{} { return l.runner.exited }
func (l *procLink) endReason() string      { return l.runner.exitReason() }
func (l *procLink) maybeEnded() bool       { return l.client.Exited() }
func (l *procLink) abandoning() string     { return "killing its process" }
func (l *procLink) abandon()               { _ = l.runner.Kill(context.Background()) }
func (l *procLink) endedDuringStart() string {
	return fmt.Sprintf("the process exited (%s)", l.endReason())
}
func (l *procLink) endedAfter(ran time.Duration) string {
	return fmt.Sprintf("process %d exited after %s: %s", l.pidAtStart, ran.Round(time.Millisecond), l.endReason())
}

func (l *procLink) endedDuringCall() string {
	return fmt.Sprintf("the plugin's process %d exited during the call (%s); the host restarts it with backoff", l.pidAtStart, l.endReason())
}

func (l *procLink) grpcConn() (*grpc.ClientConn, error) {
	cp, err := l.client.Client()
	if err != nil {
		return nil, err
	}
	gc, ok := cp.(*plugin.GRPCClient)
	if !ok {
		return nil, nil
	}
	return gc.Conn, nil
}

// poll notices an exit that go-plugin cannot. go-plugin notices an exit
// only when the process's stdout and stderr close; a process the plugin
// started may keep them open. So once the process has been gone for
// pipeGrace (time for go-plugin to read its last words) its pipes are
// closed, which lets go-plugin see the exit.
func (l *procLink) poll() {
	if l.pipesClosed || !l.runner.gone() {
		return
	}
	if l.goneSince.IsZero() {
		l.goneSince = time.Now()
		return
	}
	if time.Since(l.goneSince) >= pipeGrace {
		l.log.Info("plugin process exited, but a process it started keeps its stdout or stderr open; no longer reading them", "pid", l.pidAtStart)
		l.runner.closePipes()
		l.pipesClosed = true
	}
}

// killGrace is how long close waits for go-plugin's graceful shutdown
// (which itself gives the plugin 2s after asking it to exit) before it
// kills the process itself.
const killGrace = 3 * time.Second

// close ends the process, waits for it and cleans up after it.
func (l *procLink) close() {
	r := l.runner
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
			l.client.Kill()
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
