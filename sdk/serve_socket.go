//go:build !wasip1

package sdk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// SocketEnv is the environment variable that makes Serve serve on a Unix
// socket: its value is the socket's absolute path, the path the
// controller's configuration gives as the plugin's `external.socket`.
const SocketEnv = "TRAINFORGE_PLUGIN_SOCKET"

// SocketMode is the file mode of the socket ServeSocket makes: read and
// write for its owner and group, so that a controller that runs as another
// user of the same group (a pod's fsGroup) may connect, and nobody else.
const SocketMode fs.FileMode = 0o660

// stopGrace is how long ServeSocket lets calls under way finish once it
// is asked to stop.
const stopGrace = 5 * time.Second

// ServeSocket serves p on a Unix socket at path until ctx ends: the
// PluginService of the Trainforge protocol (the same as Serve's through
// go-plugin) and gRPC health (the service "plugin", as go-plugin's server
// names it, and ""). Serve calls it when TRAINFORGE_PLUGIN_SOCKET is set,
// with a context that SIGTERM and SIGINT end.
//
// There is no go-plugin handshake and no TLS: the socket's mode (SocketMode)
// and its directory decide who may connect, so put it in a directory only
// the controller and the plugin share (an emptyDir mounted in both
// containers). A socket left behind by a plugin that was killed is
// removed first; a path where another process still serves, or that is
// not a socket, is an error. The socket is removed when ServeSocket
// returns.
func ServeSocket(ctx context.Context, p framework.Plugin, path string) error {
	if p == nil {
		return errors.New("the plugin is nil")
	}
	return serveSocket(ctx, p.Describe().Name, remote.NewServer(p), path)
}

// serveSocket is ServeSocket of the PluginService svc of the plugin
// named name.
func serveSocket(ctx context.Context, name string, svc pluginv1.PluginServiceServer, path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("the socket path %q is not absolute", path)
	}
	if err := removeStaleSocket(path); err != nil {
		return err
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("listening on the socket: %w", err)
	}
	// net.Listen makes the socket with the umask's mode; set it at once,
	// before anyone is served.
	if err := os.Chmod(path, SocketMode); err != nil {
		_ = lis.Close()
		return fmt.Errorf("setting the socket's mode to %s: %w", SocketMode, err)
	}
	ours, _ := os.Lstat(path)

	srv := grpc.NewServer()
	pluginv1.RegisterPluginServiceServer(srv, svc)
	hs := health.NewServer()
	hs.SetServingStatus(plugin.GRPCServiceName, healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)

	log := Logger().WithName("sdk")
	log.Info("serving on a Unix socket", "socket", path, "plugin", name)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()

	select {
	case err = <-served:
	case <-ctx.Done():
		hs.Shutdown()
		stopped := make(chan struct{})
		go func() {
			srv.GracefulStop()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(stopGrace):
			srv.Stop()
		}
		err = <-served
		log.Info("stopped serving", "socket", path)
	}
	// The listener unlinks the socket when it closes; a plugin that took
	// the path over meanwhile keeps its own.
	if fi, statErr := os.Lstat(path); statErr == nil && ours != nil && os.SameFile(fi, ours) {
		_ = os.Remove(path)
	}
	if errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	return err
}

// removeStaleSocket removes a socket that nothing serves on, left behind
// by a plugin that was killed. It refuses to remove anything else.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket (its mode is %s); not removing it", path, fi.Mode())
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = c.Close()
		return fmt.Errorf("another process serves on the socket %s; not taking it over", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("checking the socket left at %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the stale socket: %w", err)
	}
	return nil
}
