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
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"

	"google.golang.org/grpc/codes"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// connect runs one start: it starts the process (process.go) or connects
// to the socket (socket.go), then Describe, Configure and Watch, all within
// StartTimeout. On failure no process or connection is left.
func (p *Plugin) connect(ctx context.Context) (*conn, error) {
	if p.opts.Socket != "" {
		return p.connectSocket(ctx)
	}
	return p.startProcess(ctx)
}

// handshake describes and configures the plugin behind l and asks for its
// watches, within deadline. what names it in messages ("/plugins/mpi",
// "socket /run/mpi.sock"). On failure it does not close l.
func (p *Plugin) handshake(ctx context.Context, deadline time.Time, l link, cc grpc.ClientConnInterface, what string) (*conn, error) {
	c := &conn{link: l, cc: cc, raw: pluginv1.NewPluginServiceClient(cc), started: time.Now()}
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	// startErr explains a failed call during the start.
	startErr := func(point string, err error) error {
		if errors.Is(sctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return fmt.Errorf("%s: no answer within startTimeout %s", point, p.opts.StartTimeout)
		}
		select {
		case <-l.ended():
			return fmt.Errorf("%s: %s: %w", point, l.endedDuringStart(), err)
		default:
		}
		return fmt.Errorf("%s: %w", point, err)
	}

	rc := remote.NewClient(c.raw, p.opts.Limits)
	desc, points, err := rc.Describe(sctx)
	if err != nil {
		var ce *remote.CallError
		if p.opts.Socket != "" && errors.As(err, &ce) && ce.Code == codes.Unimplemented {
			return nil, fmt.Errorf("Describe: %s does not serve trainforge.plugin.v1.PluginService, the plugin protocol version %d this host speaks "+
				"(a plugin of another protocol version, or not a Trainforge plugin): %w", what, remote.ProtocolVersion, err)
		}
		return nil, startErr("Describe", err)
	}
	p.mu.Lock()
	if p.opts.Name == "" {
		p.opts.Name = desc.Name
	}
	p.mu.Unlock()
	if desc.Name != p.opts.Name {
		return nil, &configError{fmt.Errorf("plugin %q describes itself as %q; the entry's name in the configuration file must be the name the plugin gives", p.opts.Name, desc.Name)}
	}
	if err := rc.ConfigureWith(sctx, p.opts.PluginArgs, p.opts.Host); err != nil {
		var ce *remote.CallError
		if errors.As(err, &ce) {
			switch {
			case ce.Code == codes.InvalidArgument:
				return nil, &configError{fmt.Errorf("plugin %q rejected its args: %s", p.opts.Name, ce.Message)}
			case ce.Code == codes.Unimplemented && hasArgs(p.opts.PluginArgs):
				return nil, &configError{fmt.Errorf("plugin %q takes no args (it does not implement Configure), but the configuration gives it some", p.opts.Name)}
			case ce.Code == codes.Unimplemented:
				err = nil // a plugin without args need not implement Configure
			}
		}
		if err != nil {
			return nil, startErr("Configure", err)
		}
	}
	if slices.Contains(points, framework.PointWatch) {
		if c.watch, err = rc.Watch(sctx); err != nil {
			return nil, startErr("Watch", err)
		}
	}
	c.desc, c.points = desc, points
	return c, nil
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
