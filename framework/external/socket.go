package external

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
)

// connectSocket runs one start of a plugin that runs on its own and serves
// on a Unix socket (sdk.Serve with TRAINFORGE_PLUGIN_SOCKET): it connects,
// then Describe, Configure and Watch, within StartTimeout. There is no
// process to start and no go-plugin handshake: the socket's file mode (and
// the directory it is in, shared by the plugin's container and the
// controller's) decides who may connect. On failure no connection is left.
func (p *Plugin) connectSocket(ctx context.Context) (*conn, error) {
	deadline := time.Now().Add(p.opts.StartTimeout)
	path := p.opts.Socket
	if err := checkSocket(ctx, path, deadline); err != nil {
		return nil, err
	}
	cc, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(p.opts.MaxMessageBytes)),
		// An idle channel would leave READY, which is how the host sees
		// a broken connection: no idleness.
		grpc.WithIdleTimeout(0))
	if err != nil {
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	l := &sockLink{path: path, cc: cc, done: make(chan struct{}), stop: make(chan struct{})}
	c, err := p.handshake(ctx, deadline, l, cc, "the plugin on socket "+path)
	if err != nil {
		l.close()
		return nil, err
	}
	if !l.watch() {
		l.close()
		return nil, fmt.Errorf("socket %s: the connection broke right after Configure (%s)", path, cc.GetState())
	}
	p.log.V(1).Info("connected to the plugin's socket", "socket", path)
	return c, nil
}

// checkSocket explains why path cannot be connected to, or returns nil.
// gRPC's own errors would only say "connection error".
func checkSocket(ctx context.Context, path string, deadline time.Time) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("socket %s does not exist: the plugin's container has not started serving yet, "+
			"or does not share the socket's directory with the controller", path)
	case err != nil:
		return fmt.Errorf("socket %s: %w", path, err)
	case fi.Mode().Type() != fs.ModeSocket:
		return fmt.Errorf("%s is not a Unix socket (its mode is %s); the plugin serves on it when TRAINFORGE_PLUGIN_SOCKET names it", path, fi.Mode())
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(dctx, "unix", path)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("nothing listens on socket %s (connection refused): the plugin is not running, and left its socket behind", path)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("the controller may not connect to socket %s (permission denied): the socket must be writable by the controller's user or group "+
			"(the SDK makes it 0660: give both containers the same fsGroup)", path)
	case err != nil:
		return fmt.Errorf("cannot connect to socket %s: %w", path, err)
	}
	_ = nc.Close()
	return nil
}

// sockLink is the connection to the socket of a plugin that runs on its
// own. It ends when the connection leaves READY: the plugin exited or
// closed it (a Unix socket breaks at once when its peer dies), or the host
// dropped it. The host does not let gRPC reconnect behind its back: a new
// connection is a new start, described and configured again, with the
// restart backoff.
type sockLink struct {
	path string
	cc   *grpc.ClientConn

	once     sync.Once
	done     chan struct{} // closed when the connection has ended
	stopOnce sync.Once
	stop     chan struct{} // closed by close, to end the watcher
	stopped  sync.WaitGroup

	mu     sync.Mutex
	reason string
}

var _ link = (*sockLink)(nil)

func (l *sockLink) logKeys() []any         { return []any{"socket", l.path} }
func (l *sockLink) pid() int               { return 0 }
func (l *sockLink) ended() <-chan struct{} { return l.done }
func (l *sockLink) maybeEnded() bool       { return l.cc.GetState() != connectivity.Ready }
func (l *sockLink) poll()                  {}
func (l *sockLink) abandoning() string     { return "closing the connection" }

func (l *sockLink) grpcConn() (*grpc.ClientConn, error) { return l.cc, nil }

func (l *sockLink) endReason() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reason
}

func (l *sockLink) endedAfter(ran time.Duration) string {
	return fmt.Sprintf("the connection to socket %s broke after %s: %s", l.path, ran.Round(time.Millisecond), l.endReason())
}

func (l *sockLink) endedDuringCall() string {
	return fmt.Sprintf("the connection to the plugin's socket %s broke during the call (%s); the host reconnects with backoff", l.path, l.endReason())
}

func (l *sockLink) endedDuringStart() string {
	return fmt.Sprintf("the connection to socket %s broke (%s)", l.path, l.endReason())
}

// end records why the connection ended, once.
func (l *sockLink) end(reason string) {
	l.once.Do(func() {
		l.mu.Lock()
		l.reason = reason
		l.mu.Unlock()
		close(l.done)
	})
}

// watch starts watching the connection, which must be READY: it returns
// false when it is not.
func (l *sockLink) watch() bool {
	state := l.cc.GetState()
	if state != connectivity.Ready {
		l.end(fmt.Sprintf("the connection is %s", state))
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.stopped.Add(1)
	go func() {
		defer l.stopped.Done()
		<-l.stop
		cancel()
	}()
	l.stopped.Add(1)
	go func() {
		defer l.stopped.Done()
		for l.cc.WaitForStateChange(ctx, state) {
			state = l.cc.GetState()
			if state != connectivity.Ready {
				l.end(fmt.Sprintf("the plugin closed it or exited (the connection went %s)", state))
				return
			}
		}
	}()
	return true
}

// abandon drops the connection of a plugin that does not answer.
func (l *sockLink) abandon() {
	l.end("the plugin did not answer its health check; the host closed the connection")
	_ = l.cc.Close()
}

// close closes the connection and stops watching it. The plugin keeps
// running: the host does not own its process.
func (l *sockLink) close() {
	l.end("the host closed the connection")
	l.stopOnce.Do(func() { close(l.stop) })
	_ = l.cc.Close()
	l.stopped.Wait()
}
