package external

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"

	"google.golang.org/grpc/codes"

	"github.com/trainforge/trainforge/framework/pluginhost"
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

// handshake runs the start sequence every kind of plugin runs
// (pluginhost.Handshake) on the plugin behind l, within deadline. what
// names it in messages ("/plugins/mpi", "socket /run/mpi.sock"). On
// failure it does not close l.
func (p *Plugin) handshake(ctx context.Context, deadline time.Time, l link, cc grpc.ClientConnInterface, what string) (*conn, error) {
	p.mu.Lock()
	name := p.opts.Name
	p.mu.Unlock()
	d, err := pluginhost.Handshake{
		Name:         name,
		PluginArgs:   p.opts.PluginArgs,
		Host:         p.opts.Host,
		Limits:       p.opts.Limits,
		StartTimeout: p.opts.StartTimeout,
		Ended: func() string {
			select {
			case <-l.ended():
				return l.endedDuringStart()
			default:
				return ""
			}
		},
	}.Run(ctx, deadline, cc)
	var step *pluginhost.StepError
	var ce *remote.CallError
	if p.opts.Socket != "" && errors.As(err, &step) && step.Step == "Describe" && errors.As(err, &ce) && ce.Code == codes.Unimplemented {
		return nil, fmt.Errorf("Describe: %s does not serve trainforge.plugin.v1.PluginService, the plugin protocol version %d this host speaks "+
			"(a plugin of another protocol version, or not a Trainforge plugin): %w", what, remote.ProtocolVersion, ce)
	}
	if err != nil {
		return nil, err
	}
	if name == "" {
		p.mu.Lock()
		p.opts.Name = d.Desc.Name
		p.mu.Unlock()
	}
	return &conn{link: l, cc: cc, raw: pluginv1.NewPluginServiceClient(cc), described: d, started: time.Now()}, nil
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
func lastStderrLine(w *pluginhost.Lines, r *procRunner) string {
	if r != nil && (r.gone() || r.exitReason() != "") {
		select {
		case <-r.stderr.done:
		case <-time.After(stderrDrainTimeout):
		}
	}
	return w.Last()
}

// stderrDrainTimeout bounds the wait for the rest of an exited plugin's
// stderr.
const stderrDrainTimeout = 2 * time.Second
