package external

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/pluginhost/pluginhosttest"
	"github.com/trainforge/trainforge/framework/remote"
)

// goPluginEnv are the variables go-plugin v1.8's client sets for its
// handshake (client.go, with AutoMTLS and a RunnerFunc): a plugin process
// may get these besides what the host gives it.
var goPluginEnv = []string{
	remote.Handshake.MagicCookieKey,
	"PLUGIN_MIN_PORT", "PLUGIN_MAX_PORT", "PLUGIN_PROTOCOL_VERSIONS",
	"PLUGIN_CLIENT_CERT", "PLUGIN_UNIX_SOCKET_DIR", "PLUGIN_UNIX_SOCKET_GROUP", "PLUGIN_MULTIPLEX_GRPC",
}

// reportedEnv starts everypoint as a child process with env and returns
// the environment it reported.
func reportedEnv(t *testing.T, env ...string) map[string]string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "env")
	_, log := newLogs()
	o := shared("EveryPoint", log)
	o.Args, o.StartTimeout = []string{"--report-env", file}, 20*time.Second
	p := start(t, Options{Options: o, Command: everypointBin, Env: env})
	if err := p.Ready(); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\x00") {
		name, value, _ := strings.Cut(line, "=")
		out[name] = value
	}
	return out
}

// TestEnvironmentScrubbed shows that a plugin process gets go-plugin's
// handshake variables and what the host gives it (the controller gives
// PATH and GOMAXPROCS), and nothing of the controller's own environment.
func TestEnvironmentScrubbed(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("KUBECONFIG", "/home/admin/.kube/config")
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("TRAINFORGE_TEST_CANARY", "leaked")

	env := reportedEnv(t, "PATH=/usr/bin:/bin", "GOMAXPROCS=1", "CONFIGURED=yes")
	for _, name := range []string{"KUBECONFIG", "KUBERNETES_SERVICE_HOST", "AWS_SECRET_ACCESS_KEY", "TRAINFORGE_TEST_CANARY", "HOME"} {
		g.Expect(env).NotTo(HaveKey(name), "the controller's %s reached the plugin", name)
	}
	g.Expect(env).To(HaveKeyWithValue("CONFIGURED", "yes"))
	g.Expect(env).To(HaveKeyWithValue("GOMAXPROCS", "1"))
	g.Expect(env).To(HaveKeyWithValue("PATH", "/usr/bin:/bin"))
	g.Expect(env).To(HaveKeyWithValue(remote.Handshake.MagicCookieKey, remote.Handshake.MagicCookieValue))
	g.Expect(env).To(HaveKey("PLUGIN_CLIENT_CERT"), "AutoMTLS")
	for name := range env {
		g.Expect(append([]string{"PATH", "GOMAXPROCS", "CONFIGURED"}, goPluginEnv...)).To(ContainElement(name), "unexpected variable %s in the plugin's environment", name)
	}

	// The host's env may set PATH, but not go-plugin's variables.
	env = reportedEnv(t, "PATH=/opt/plugin/bin:/usr/bin", remote.Handshake.MagicCookieKey+"=forged")
	g.Expect(env).To(HaveKeyWithValue("PATH", "/opt/plugin/bin:/usr/bin"))
	g.Expect(env).To(HaveKeyWithValue(remote.Handshake.MagicCookieKey, remote.Handshake.MagicCookieValue))
}

// shortDir is a directory for sockets, whose paths must fit in about 100
// bytes, which t.TempDir's may not.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// serveOnSocket starts everypoint on its own, as its container would,
// serving on path, and waits until the socket is there.
func serveOnSocket(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(everypointBin)
	cmd.Env = append(os.Environ(), "TRAINFORGE_PLUGIN_SOCKET="+path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	NewWithT(t).Eventually(func() error { return checkSocket(context.Background(), path, time.Now().Add(time.Second)) }).
		WithTimeout(eventually).WithPolling(poll).Should(Succeed())
	return cmd
}

func socketOptions(name, path string) (Options, *logs) {
	o, l := pluginhosttest.Options(name)
	return Options{Options: o, Socket: path}, l
}

// callEveryPoint calls every extension point of everypoint and checks
// the answers carry greeting, its Configure args.
func callEveryPoint(g Gomega, p *Plugin, greeting string) {
	ctx := context.Background()
	job := testJob()
	warnings, errs, err := p.Client().Validate(ctx, framework.ValidateRequest{Info: testInfo(), NewJob: job})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(errs).To(BeEmpty())
	g.Expect(warnings).To(Equal([]string{"validated llm"}))

	info := testInfo()
	g.Expect(p.Client().EnforceMLPolicy(ctx, info, job)).To(Succeed())
	g.Expect(info.Labels).To(HaveKeyWithValue("everypoint/ml", greeting))
	g.Expect(p.Client().EnforcePodGroupPolicy(ctx, info, job)).To(Succeed())
	g.Expect(info.Annotations).To(HaveKeyWithValue("everypoint/pg", greeting))

	objs, err := p.Client().Build(ctx, info, job)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(1))
	g.Expect(objs[0].GetName()).To(Equal("llm-everypoint"))
	g.Expect(objs[0].Object["data"]).To(HaveKeyWithValue("greeting", greeting))

	sources, err := p.Watch(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sources).To(Equal([]framework.WatchSource{{Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Mapping: framework.MapByLabel, Label: "everypoint/job"}}))

	st, err := p.Client().Status(ctx, nil, job, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Conditions).To(ContainElement(HaveField("Type", "EveryPoint")))
}

// TestSocketPlugin runs a plugin on a socket, started by the test as its
// container would be, not by the host: the host connects, calls every
// extension point, sees the plugin killed with SIGKILL (Ready goes false,
// calls fail) and reconnects once it serves again (Ready goes true, the
// plugin is configured again, the restart is counted).
func TestSocketPlugin(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(shortDir(t), "everypoint.sock")
	plugin := serveOnSocket(t, path)
	restarted := restartCounter("EveryPoint")
	opts, logs := socketOptions("EveryPoint", path)
	opts.PluginArgs = json.RawMessage(`{"greeting":"hello"}`)
	p := start(t, opts)

	g.Expect(p.Ready()).To(Succeed())
	g.Expect(p.Pid()).To(BeZero(), "the host runs no process for a socket plugin")
	// Every point but Configure, which the host calls at each start.
	_, impl, _ := p.Described()
	g.Expect(impl.Points()).To(Equal([]framework.ExtensionPoint{framework.PointValidate, framework.PointEnforceMLPolicy,
		framework.PointEnforcePodGroupPolicy, framework.PointBuild, framework.PointWatch, framework.PointStatus}))
	callEveryPoint(g, p, "hello")
	g.Expect(logs.Matching(map[string]any{"plugin": "EveryPoint", "msg": "plugin started", "socket": path})).To(HaveLen(1), logs.String)

	g.Expect(plugin.Process.Signal(syscall.SIGKILL)).To(Succeed())
	_ = plugin.Wait()
	g.Eventually(p.Ready).WithTimeout(eventually).WithPolling(poll).Should(MatchError(ErrNotRunning))
	g.Expect(p.Client().Build(context.Background(), testInfo(), testJob())).Error().To(MatchError(ErrNotRunning))
	broke := map[string]any{"plugin": "EveryPoint", "msg": "connection to the plugin broke; reconnecting with backoff", "socket": path}
	g.Eventually(func() []map[string]any { return logs.Matching(broke) }).WithTimeout(eventually).WithPolling(poll).Should(
		ConsistOf(HaveKeyWithValue("error", ContainSubstring("the connection to socket "+path+" broke after"))), logs.String)
	// Killed, the plugin left its socket behind: the host says so.
	g.Eventually(p.Ready).WithTimeout(eventually).WithPolling(poll).Should(
		MatchError(ContainSubstring("nothing listens on socket " + path + " (connection refused)")))

	serveOnSocket(t, path) // removes the stale socket, serves again
	g.Eventually(p.Ready).WithTimeout(eventually).WithPolling(poll).Should(Succeed())
	g.Expect(restarted()).To(BeNumerically(">=", 1))
	callEveryPoint(g, p, "hello")
	g.Expect(logs.Matching(broke)).To(HaveLen(1), logs.String)

	// Close closes the connection only: the plugin keeps serving.
	p.Close()
	g.Expect(p.Ready()).To(MatchError(ContainSubstring("the plugin host was closed")))
	g.Expect(checkSocket(context.Background(), path, time.Now().Add(time.Second))).To(Succeed())
}

// TestSocketNeverAppears shows the reason Ready gives while the socket of
// a plugin is not there, and that the host keeps trying.
func TestSocketNeverAppears(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(shortDir(t), "absent.sock")
	restarted := restartCounter("Absent")
	opts, _ := socketOptions("Absent", path)
	p := start(t, opts)
	g.Expect(p.Ready()).To(MatchError(MatchRegexp(`^the plugin is not running: socket %s does not exist: the plugin's container has not started serving yet, `+
		`or does not share the socket's directory with the controller; (next start in \S+ \(at \S+\)|a start is under way)$`, path)))
	g.Expect(p.Generation()).To(BeZero())
	g.Eventually(restarted).WithTimeout(eventually).WithPolling(poll).Should(BeNumerically(">=", 2), "the host keeps trying")

	// A file that is not a socket is named as such.
	g.Expect(os.WriteFile(path, nil, 0o600)).To(Succeed())
	g.Eventually(p.Ready).WithTimeout(eventually).WithPolling(poll).Should(MatchError(ContainSubstring(path + " is not a Unix socket")))
}

func TestStartRefusesBadOptions(t *testing.T) {
	g := NewWithT(t)
	_, err := Start(context.Background(), Options{Options: shared("X", logr.Discard())})
	g.Expect(err).To(MatchError(`external plugin "X": neither a command nor a socket; set one of them`))
	_, err = Start(context.Background(), Options{Options: shared("X", logr.Discard()), Command: "x", Socket: "/run/x.sock"})
	g.Expect(err).To(MatchError(`external plugin "X": both a command (x) and a socket (/run/x.sock); set one of them`))
	_, err = Start(context.Background(), Options{Options: shared("X", logr.Discard()), Socket: "x.sock"})
	g.Expect(err).To(MatchError(`external plugin "X": socket "x.sock" is not an absolute path`))
}
