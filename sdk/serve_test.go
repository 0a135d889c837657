//go:build !wasip1

package sdk

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// serveEnv makes the test binary a plugin (or the parent of one) instead
// of running tests; see TestMain.
const serveEnv = "SDK_TEST_SERVE"

func TestMain(m *testing.M) {
	switch os.Getenv(serveEnv) {
	case "plugin":
		Serve(echo{})
		os.Exit(0)
	case "parent":
		// Start a plugin as a host would, wait for its handshake line,
		// then die without stopping it.
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), serveEnv+"=plugin",
			remote.Handshake.MagicCookieKey+"="+remote.Handshake.MagicCookieValue,
			"PLUGIN_PROTOCOL_VERSIONS=1")
		stdout, err := child.StdoutPipe()
		if err == nil {
			err = child.Start()
		}
		if err == nil {
			_, err = bufio.NewReader(stdout).ReadString('\n')
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(child.Process.Pid)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// echo is the plugin the test binary serves.
type echo struct{}

func (echo) Describe() framework.Description {
	return framework.Description{Name: "Echo", Version: "v1.2.3"}
}

func (echo) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	Logger().WithName("echo").Info("enforcing", "job", job.Name)
	// After Serve, stdout no longer carries the protocol: a stray print
	// does not break the connection.
	fmt.Println("stray output")
	_, c, err := info.Trainer()
	if err != nil {
		return err
	}
	c.UpsertEnv(corev1.EnvVar{Name: "ECHO", Value: job.Name})
	return nil
}

type named string

func (n named) Describe() framework.Description { return framework.Description{Name: string(n)} }

func TestCheckStart(t *testing.T) {
	cookie := remote.Handshake.MagicCookieKey
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	cases := []struct {
		name     string
		plugin   framework.Plugin
		env      map[string]string
		args     []string
		wantCode int
		want     []string
	}{
		{
			name:   "started by a host",
			plugin: named("MPI"),
			env:    map[string]string{cookie: remote.Handshake.MagicCookieValue},
		},
		{
			name:     "run by hand",
			plugin:   named("MPI"),
			wantCode: 1,
			want: []string{
				"This is a Trainforge plugin, MPI: the Trainforge controller starts it, it is not meant to be run by hand.",
				"enable it in the controller's configuration file",
				"  - name: MPI\n    external:\n      command: /plugins/mpi\n\n",
			},
		},
		{
			name:     "run by hand with arguments",
			plugin:   named("MPI"),
			args:     []string{"--log-level", "debug"},
			wantCode: 1,
			want:     []string{"      command: /plugins/mpi\n      args: [\"--log-level\",\"debug\"]\n"},
		},
		{
			name:     "with another cookie",
			plugin:   named("MPI"),
			env:      map[string]string{cookie: "something-else"},
			wantCode: 1,
			want:     []string{"This is a Trainforge plugin, MPI", "(TRAINFORGE_PLUGIN is set, but not to the value a Trainforge host sets.)"},
		},
		{
			name:     "a nil plugin",
			env:      map[string]string{cookie: remote.Handshake.MagicCookieValue},
			wantCode: 1,
			want:     []string{"sdk.Serve: the plugin is nil"},
		},
		{
			name:     "a plugin without a name",
			plugin:   named(""),
			env:      map[string]string{cookie: remote.Handshake.MagicCookieValue},
			wantCode: 1,
			want:     []string{"the plugin's Describe gives no name"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			code := checkStart(tc.plugin, env(tc.env), &out, "/plugins/mpi", tc.args)
			if code != tc.wantCode {
				t.Errorf("exit status %d, want %d", code, tc.wantCode)
			}
			if tc.wantCode == 0 && out.Len() > 0 {
				t.Errorf("wrote %q, want nothing", out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the message does not say %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestWatchParent(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	getppid := func() int {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls < 3 {
			return 42
		}
		return 1
	}
	type change struct{ before, now int }
	done := make(chan change, 1)
	go watchParent(42, time.Millisecond, getppid, func(before, now int) { done <- change{before, now} })
	select {
	case got := <-done:
		if got != (change{42, 1}) {
			t.Errorf("gone(%d, %d), want gone(42, 1)", got.before, got.now)
		}
		mu.Lock()
		defer mu.Unlock()
		if calls != 3 {
			t.Errorf("gone was called after %d checks, want 3: as soon as the parent changed", calls)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("gone was not called after the parent changed")
	}
}

// syncBuffer is a bytes.Buffer safe for the host logger's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServeToAHost starts the test binary as a plugin with go-plugin's
// client, as the controller does (handshake, AutoMTLS, gRPC), calls it
// through the host's client and checks that its log line reaches the
// host's logger with its level and fields.
func TestServeToAHost(t *testing.T) {
	var hostLog syncBuffer
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=plugin")
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  remote.Handshake,
		VersionedPlugins: remote.PluginSet(nil),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "host", Output: &hostLog, Level: hclog.Info}),
	})
	t.Cleanup(client.Kill)
	proto, err := client.Client()
	if err != nil {
		t.Fatalf("starting the plugin: %v\nhost log:\n%s", err, hostLog.String())
	}
	if v := client.NegotiatedVersion(); v != remote.ProtocolVersion {
		t.Errorf("negotiated protocol version %d, want %d", v, remote.ProtocolVersion)
	}
	raw, err := proto.Dispense(remote.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, ok := raw.(*remote.Client)
	if !ok {
		t.Fatalf("Dispense returned %T, want a *remote.Client", raw)
	}
	d, points, err := c.Describe(ctx)
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if d.Name != "Echo" || d.Version != "v1.2.3" || !slices.Contains(points, framework.PointEnforceMLPolicy) {
		t.Errorf("Describe = %+v, %v; want Echo v1.2.3 implementing EnforceMLPolicy", d, points)
	}
	info := &framework.Info{Version: framework.InfoVersion, PodSets: []framework.PodSet{{
		Name: "node", AncestorStep: trainer.TrainerStep, Replicas: 1, Count: 1,
		Containers: []framework.Container{{Name: "node"}},
	}}}
	job := &trainer.TrainJob{}
	job.Name = "llm"
	if err := c.EnforceMLPolicy(ctx, info, job); err != nil {
		t.Fatal(err)
	}
	if env := info.PodSets[0].Containers[0].Env; len(env) != 1 || env[0].Value != "llm" {
		t.Errorf("env = %v, want ECHO=llm", env)
	}
	// The log line travels through the plugin's stderr asynchronously.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(hostLog.String(), "enforcing") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var line string
	for _, l := range strings.Split(hostLog.String(), "\n") {
		if strings.Contains(l, "enforcing") {
			line = l
		}
	}
	for _, want := range []string{"[INFO]", "host", "enforcing", "@module=echo", "job=llm"} {
		if !strings.Contains(line, want) {
			t.Errorf("the host logged the plugin's line as %q, want it to hold %q\nhost log:\n%s", line, want, hostLog.String())
		}
	}
}

// TestServeByHand runs the plugin binary without a host: it says what it
// is and exits with status 1, writing nothing to stdout.
func TestServeByHand(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{serveEnv + "=plugin"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("run by hand: %v, want exit status 1", err)
	}
	if stdout.Len() > 0 {
		t.Errorf("wrote %q to stdout, want nothing", stdout.String())
	}
	for _, want := range []string{"This is a Trainforge plugin, Echo", "configuration file", "- name: Echo"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
}

// TestServeExitsWithItsHost starts a plugin from a process that then
// exits, as a crashed host would: the plugin notices that its parent
// changed and exits.
func TestServeExitsWithItsHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=parent")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the parent: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the parent printed %q, not a pid", out)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if !running(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the plugin (pid %d) still runs %s after its parent exited", pid, 15*time.Second)
}

// running reports whether a process exists and is not a zombie.
func running(pid int) bool {
	f, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	// pid (comm) state ...; comm may hold spaces, so cut at the last ')'.
	i := strings.LastIndexByte(line, ')')
	if i < 0 || i+2 >= len(line) {
		return false
	}
	return line[i+2] != 'Z' && line[i+2] != 'X'
}

// shortTempDir is a directory for sockets: a socket's path must fit in
// about 100 bytes, which t.TempDir's may not.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sdk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func TestServeSocket(t *testing.T) {
	dir := shortTempDir(t)
	path := filepath.Join(dir, "echo.sock")
	// A socket left behind by a plugin that was killed: nothing listens.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = stale.Close()

	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ServeSocket(ctx, echo{}, path) }()
	waitFor(t, func() bool {
		c, err := net.Dial("unix", path)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != SocketMode {
		t.Errorf("socket mode %s, want %s", got, SocketMode)
	}

	cc, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	desc, err := pluginv1.NewPluginServiceClient(cc).Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if desc.GetName() != "Echo" {
		t.Errorf("Describe gives %q, want Echo", desc.GetName())
	}
	for _, svc := range []string{plugin.GRPCServiceName, ""} {
		resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health of %q: %v, %v", svc, resp, err)
		}
	}

	// A second plugin on the same path is refused while the first serves.
	if err := ServeSocket(context.Background(), echo{}, path); err == nil || !strings.Contains(err.Error(), "another process serves on the socket") {
		t.Errorf("a second ServeSocket on the same path: %v", err)
	}

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeSocket: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeSocket did not return after its context ended")
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the socket is still there after ServeSocket returned: %v", err)
	}
}

func TestServeSocketRefuses(t *testing.T) {
	dir := shortTempDir(t)
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"relative.sock", `the socket path "relative.sock" is not absolute`},
		{file, file + " exists and is not a socket"},
	} {
		err := ServeSocket(context.Background(), echo{}, tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ServeSocket(%q) = %v, want an error containing %q", tc.path, err, tc.want)
		}
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the file that is not a socket was removed: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
