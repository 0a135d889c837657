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

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc/codes"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

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
			r, err = newRunner(path, p.opts.Args, append(cmd.Env, p.opts.Env...), dir)
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
		if strings.Contains(err.Error(), "incompatible API version") {
			err = fmt.Errorf("%w; this controller speaks Trainforge plugin protocol version %d: use a build of the plugin for it", err, remote.ProtocolVersion)
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
	p.mu.Lock()
	if p.opts.Name == "" {
		p.opts.Name = desc.Name
	}
	p.mu.Unlock()
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
	proc.rpc, proc.raw, proc.watch = rc, svc, watch
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

// lastStderrLine returns the last line a plugin that failed to start wrote
// on stderr, which often says why. A process that has exited may still
// have lines in the pipe: they are read to the end, for up to
// stderrDrainTimeout.
func lastStderrLine(w *stderrLogger, r *procRunner) string {
	if r != nil && (r.gone() || r.exitReason() != "") {
		select {
		case <-r.stderr.done:
		case <-time.After(stderrDrainTimeout):
		}
	}
	return w.lastLine()
}

// stderrDrainTimeout bounds the wait for the rest of an exited plugin's
// stderr.
const stderrDrainTimeout = 2 * time.Second
