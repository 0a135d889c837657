//go:build !wasip1

package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
)

// parentAtStart is the process's parent when the program started, taken
// as early as possible: a parent that dies before it is read is not seen.
var parentAtStart = os.Getppid()

// parentPollInterval is how often a served plugin checks that its parent,
// the host, is still there.
const parentPollInterval = time.Second

// Serve serves p as a Trainforge plugin. Call it from main, once, and write
// nothing to stdout before it:
//
//	func main() {
//		sdk.Serve(&myPlugin{})
//	}
//
// It serves with hashicorp/go-plugin over gRPC, with the Trainforge
// handshake (remote.Handshake) and protocol versions (remote.PluginSet),
// and go-plugin's own logs go through Logger's stderr.
//
// When the environment variable TRAINFORGE_PLUGIN_SOCKET (SocketEnv) is
// set to an absolute path, Serve serves the same gRPC services, plus gRPC
// health, on a Unix socket at that path instead, for a plugin that runs
// on its own (its own container in the controller's pod, the socket in a
// directory both share) and that the host connects to with
// `external.socket`. See ServeSocket.
//
// Serve returns when the host stops the plugin; main should then return.
// It exits the process instead:
//
//   - with status 1 and a message on stderr when the program was not
//     started by a Trainforge host (the handshake cookie is missing, as when
//     someone runs the binary by hand), or when p is nil or its Describe
//     gives no name;
//   - when its parent process changes, that is when the host that started
//     it has died (besides the parent-death signal the host asks for), so
//     that no plugin process outlives its host.
func Serve(p framework.Plugin) {
	serve(p, remote.PluginSet(p), func(ctx context.Context, path string) error { return ServeSocket(ctx, p, path) })
}

// serve is Serve of p, whose go-plugin sets are set and which socket
// serves on a Unix socket.
func serve(p framework.Plugin, set map[int]plugin.PluginSet, socket func(ctx context.Context, path string) error) {
	if path := os.Getenv(SocketEnv); path != "" {
		if code := checkPlugin(p, stderr); code != 0 {
			os.Exit(code)
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		if err := socket(ctx, path); err != nil {
			fmt.Fprintf(stderr, "sdk.Serve: %s=%s: %v\n", SocketEnv, path, err)
			os.Exit(1)
		}
		return
	}
	exe, _ := os.Executable()
	if code := checkStart(p, os.Getenv, stderr, exe, os.Args[1:]); code != 0 {
		os.Exit(code)
	}
	log := Logger().WithName("sdk")
	go watchParent(parentAtStart, parentPollInterval, os.Getppid, func(before, now int) {
		log.Info("the host that started this plugin is gone; exiting", "hostPID", before, "parentPID", now)
		os.Exit(1)
	})
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  remote.Handshake,
		VersionedPlugins: set,
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger:           hclogger(),
	})
}

// checkStart returns 0 when p can be served, else writes why not to w and
// returns the exit status. exe and args are the program's path and
// arguments, for the message.
func checkStart(p framework.Plugin, getenv func(string) string, w io.Writer, exe string, args []string) int {
	if code := checkPlugin(p, w); code != 0 {
		return code
	}
	name := p.Describe().Name
	cookie := getenv(remote.Handshake.MagicCookieKey)
	if cookie == remote.Handshake.MagicCookieValue {
		return 0
	}
	if exe == "" {
		exe = "/path/to/this/program"
	}
	argsLine := ""
	if len(args) > 0 {
		quoted, _ := json.Marshal(args)
		argsLine = fmt.Sprintf("      args: %s\n", quoted)
	}
	fmt.Fprintf(w, `This is a Trainforge plugin, %s: the Trainforge controller starts it, it is not meant to be run by hand.
To use it, enable it in the controller's configuration file, for example:

  plugins:
  - name: %s
    external:
      command: %s
%s
`, name, name, exe, argsLine)
	if cookie != "" {
		fmt.Fprintf(w, "(%s is set, but not to the value a Trainforge host sets.)\n", remote.Handshake.MagicCookieKey)
	}
	return 1
}

// watchParent calls gone when getppid's answer changes from parent: the
// process that started this one has exited and this one was re-parented.
// It checks every interval and returns after calling gone.
func watchParent(parent int, interval time.Duration, getppid func() int, gone func(before, now int)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for range t.C {
		if now := getppid(); now != parent {
			gone(parent, now)
			return
		}
	}
}
