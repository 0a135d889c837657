package external

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// link is what carries the gRPC connection of one start of a plugin: a
// child process the host started (procLink, process.go) or a connection
// to the socket of a plugin that runs on its own (sockLink, socket.go).
// The supervisor and the calls see a plugin only through it, so the two
// kinds are supervised, restarted and called alike.
type link interface {
	// logKeys name it in log entries: pid=4711, or socket=/run/p.sock.
	logKeys() []any
	// pid is the process's pid, 0 for a socket.
	pid() int
	// ended is closed once the process has exited, or the connection is
	// gone.
	ended() <-chan struct{}
	// endReason says how it ended ("exit status 3", "the connection
	// broke (IDLE)"); "" until ended is closed.
	endReason() string
	// endedAfter is the message of Ready once it ended after running for
	// ran: "process 4711 exited after 3.2s: signal: killed".
	endedAfter(ran time.Duration) string
	// endedDuringCall is the error of a call that saw it end.
	endedDuringCall() string
	// endedDuringStart explains a failed step of a start that saw it end.
	endedDuringStart() string
	// maybeEnded reports, after a call failed, whether it may have ended
	// before ended is closed.
	maybeEnded() bool
	// poll runs every exitCheck while the supervisor waits for the end.
	poll()
	// grpcConn is the connection, for health checks.
	grpcConn() (*grpc.ClientConn, error)
	// abandon ends a link whose plugin does not answer its health check:
	// it kills the process, or drops the connection; ended is closed
	// afterwards. abandoning says what it does, for the log.
	abandon()
	abandoning() string
	// close ends it for good and cleans up after it (the process's socket
	// directory); it returns when that is done.
	close()
}

// started records a running plugin.
func (p *Plugin) started(c *conn, restart bool) {
	desc := c.described.Desc
	p.mu.Lock()
	p.proc = c
	// Only a new description makes the framework compile its plugin set
	// again.
	if p.generation.Load() == 0 || !p.described.Equal(c.described) {
		p.generation.Add(1)
	}
	p.described = c.described
	p.down = ""
	p.mu.Unlock()
	msg := "plugin started"
	if restart {
		msg = "plugin restarted"
	}
	p.log.Info(msg, append(c.link.logKeys(), "version", desc.Version, "points", c.described.Points)...)
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

// exited records the end of c, once, and schedules the next start. The
// supervisor calls it, and so does a call that saw the plugin go, so that
// Ready changes before the call returns.
func (p *Plugin) exited(c *conn) {
	p.mu.Lock()
	if c.exitSeen || p.closed {
		c.exitSeen = true
		p.mu.Unlock()
		return
	}
	c.exitSeen = true
	ran := time.Since(c.started)
	if ran >= p.opts.Backoff.Max {
		p.delay = p.opts.Backoff.Initial
	}
	reason := c.link.endedAfter(ran)
	if p.proc == c {
		p.proc = nil
	}
	p.down = reason
	p.nextStart = time.Now().Add(p.delay)
	delay := p.delay
	p.mu.Unlock()
	msg := "plugin process exited; restarting it with backoff"
	if c.link.pid() == 0 {
		msg = "connection to the plugin broke; reconnecting with backoff"
	}
	p.log.Error(errors.New(reason), msg, append(c.link.logKeys(), "restartIn", delay.String())...)
}

// supervise waits for the running plugin to end, and starts (or
// connects to) a new one with backoff, until ctx ends.
func (p *Plugin) supervise(ctx context.Context, c *conn) {
	defer close(p.done)
	defer p.markClosed()
	for {
		if c != nil {
			if !p.waitExit(ctx, c) {
				p.markClosed()
				c.link.close()
				p.log.Info("plugin stopped", c.link.logKeys()...)
				return
			}
			p.exited(c)
			c.link.close() // cleans up the socket and go-plugin's goroutines
			c = nil
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
		frameworkruntime.PluginRestarts.WithLabelValues(p.opts.Name).Inc()
		var err error
		c, err = p.connect(ctx)
		if ctx.Err() != nil {
			if c != nil {
				c.link.close()
			}
			return
		}
		if err != nil {
			p.startFailed(err)
			continue
		}
		p.started(c, true)
	}
}

// markClosed makes calls fail: the host is stopping the plugin.
func (p *Plugin) markClosed() {
	p.mu.Lock()
	p.closed = true
	p.proc = nil
	p.mu.Unlock()
}

// waitExit returns true when c has ended, false when ctx ended first.
//
// A call that failed as if the plugin had gone pokes it: a plugin that
// still runs but fails its health check is abandoned (its process killed,
// its connection dropped), to be started again.
func (p *Plugin) waitExit(ctx context.Context, c *conn) bool {
	tick := time.NewTicker(exitCheck)
	defer tick.Stop()
	for {
		select {
		case <-c.link.ended():
			return true
		case <-ctx.Done():
			return false
		case <-tick.C:
			c.link.poll()
		case <-p.poke:
			if err := p.healthCheck(ctx, c); err != nil && ctx.Err() == nil {
				select {
				case <-c.link.ended():
					return true
				default:
				}
				p.log.Error(err, "plugin does not answer its health check; "+c.link.abandoning(), c.link.logKeys()...)
				c.link.abandon()
			}
		}
	}
}

const (
	exitCheck = 500 * time.Millisecond
	pipeGrace = time.Second
)

// healthCheck asks the plugin's gRPC health service, which go-plugin's
// server and the SDK's socket server both run, within callTimeout.
func (p *Plugin) healthCheck(ctx context.Context, c *conn) error {
	cc, err := c.link.grpcConn()
	if err != nil || cc == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	_, err = healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: plugin.GRPCServiceName})
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	return nil
}
