package external

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/pluginhost"
	"github.com/trainforge/trainforge/framework/pluginhost/pluginhosttest"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/framework/runtime/runtimetest"
	"github.com/trainforge/trainforge/test/testenv"
)

// helperHostEnv, when set to the faulty binary's path, makes the test
// binary run TestHelperHost as a plugin host for TestNoOrphans.
const helperHostEnv = "TRAINFORGE_EXTERNAL_TEST_HELPER_HOST"

// faultyBin is test/plugins/faulty, everypointBin test/plugins/everypoint,
// built once by TestMain (or by make test-bin).
var faultyBin, everypointBin string

func TestMain(m *testing.M) {
	if os.Getenv(helperHostEnv) != "" {
		os.Exit(m.Run())
	}
	plugins := testenv.NewBinaries("test/plugins/faulty", "test/plugins/everypoint")
	dir, err := plugins.Dir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the test plugins:", err)
		os.Exit(1)
	}
	faultyBin = filepath.Join(dir, "faulty")
	everypointBin = filepath.Join(dir, "everypoint")
	code := m.Run()
	plugins.Cleanup()
	os.Exit(code)
}

type logs = pluginhosttest.Logs

func newLogs() (*logs, logr.Logger) { return pluginhosttest.NewLogs() }

// options returns the options of a faulty plugin named name, with short
// timeouts and backoff, logging into the returned logs.
func options(name string, args ...string) (Options, *logs) {
	o, l := pluginhosttest.Options(name)
	o.Args = append([]string{"--name", name}, args...)
	return Options{Options: o, Command: faultyBin}, l
}

// shared are the options every kind shares of a test plugin named name
// that logs to log, with the configuration's defaults.
func shared(name string, log logr.Logger) pluginhost.Options {
	return pluginhosttest.WithDefaults(pluginhost.Options{Name: name, Logger: log})
}

// withDefaults fills the options a test leaves unset with the
// configuration's defaults, as the controller's defaulted configuration
// entry does.
func withDefaults(o Options) Options {
	o.Options = pluginhosttest.WithDefaults(o.Options)
	return o
}

func start(t *testing.T, opts Options) *Plugin {
	t.Helper()
	return pluginhosttest.Start(t, Start, withDefaults(opts))
}

func restarts(name string) float64 {
	return testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues(name))
}

// restartCounter returns the restarts of name counted since it was called
// (the metric is global, and tests may run more than once).
func restartCounter(name string) func() float64 {
	base := restarts(name)
	return func() float64 { return restarts(name) - base }
}

func testInfo() *framework.Info { return pluginhosttest.Info() }

func testJob() *trainer.TrainJob { return pluginhosttest.Job("llm") }

func faultyEnv(info *framework.Info) []string {
	var out []string
	for _, ps := range info.PodSets {
		for _, c := range ps.Containers {
			for _, e := range c.Env {
				if e.Name == "FAULTY" {
					out = append(out, e.Value)
				}
			}
		}
	}
	return out
}

const (
	eventually = 30 * time.Second
	poll       = 20 * time.Millisecond
)

func TestHealthyPlugin(t *testing.T) {
	g := NewWithT(t)
	opts, logs := options("Healthy")
	restarted := restartCounter("Healthy")
	opts.PluginArgs = json.RawMessage(`{"greeting":"hello"}`)
	p := start(t, opts)

	g.Expect(p.Ready()).To(Succeed())
	g.Expect(p.Generation()).NotTo(BeZero())
	g.Expect(p.Pid()).NotTo(BeZero())
	g.Expect(p.Describe()).To(Equal(framework.Description{
		Name:         "Healthy",
		Version:      "faulty-test",
		MLPolicyKeys: []string{"faulty"},
		Builds:       []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}},
	}))
	// What the framework calls: the points it described, but Configure,
	// which the host does at each start.
	_, impl, _ := p.Described()
	g.Expect(impl.Points()).To(Equal([]framework.ExtensionPoint{framework.PointEnforceMLPolicy, framework.PointBuild}))

	info := testInfo()
	g.Expect(p.Client().EnforceMLPolicy(context.Background(), info, testJob())).To(Succeed())
	g.Expect(info.PodSets[0].Containers[0].Env).To(Equal([]corev1.EnvVar{{Name: "FAULTY", Value: "hello"}}),
		"the env var carries the greeting from the plugin args")

	objs, err := p.Client().Build(context.Background(), info, testJob())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(1))
	g.Expect(objs[0].GetKind()).To(Equal("ConfigMap"))
	g.Expect(objs[0].GetName()).To(Equal("llm-faulty"))
	g.Expect(objs[0].Object["data"]).To(Equal(map[string]any{"greeting": "hello"}))

	sources, err := p.Watch(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sources).To(BeEmpty(), "the plugin does not implement Watch")

	// The plugin's stderr reaches the logger under its name: a plain line
	// as it is, a JSON line with its message and fields.
	g.Eventually(func() int {
		return len(logs.Matching(map[string]any{"plugin": "Healthy", "msg": "configured with greeting hello"}))
	}).WithTimeout(eventually).WithPolling(poll).Should(Equal(1), logs.String)
	g.Eventually(func() int {
		return len(logs.Matching(map[string]any{"plugin": "Healthy", "msg": "configured", "greeting": "hello", "pid": p.Pid()}))
	}).WithTimeout(eventually).WithPolling(poll).Should(Equal(1), logs.String)
	g.Expect(logs.Matching(map[string]any{"plugin": "Healthy", "msg": "plugin started", "pid": p.Pid()})).To(HaveLen(1), logs.String)
	g.Expect(restarted()).To(BeZero())
}

// TestWatchAtStart shows that Watch is asked at every start and answered
// from the cache.
func TestWatchAtStart(t *testing.T) {
	g := NewWithT(t)
	opts, logs := options("Watcher", "--watch-label", "example.com/job")
	p := start(t, opts)
	want := []framework.WatchSource{{Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Mapping: framework.MapByLabel, Label: "example.com/job"}}
	_, impl, _ := p.Described()
	g.Expect(impl.Implements(framework.PointWatch)).To(BeTrue())
	g.Expect(p.Watch(context.Background())).To(Equal(want))
	pid := p.Pid()
	g.Eventually(func() int {
		return len(logs.Matching(map[string]any{"msg": "asked for watches", "pid": pid}))
	}).WithTimeout(eventually).WithPolling(poll).Should(Equal(1), logs.String)

	g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	g.Expect(p.Watch(context.Background())).To(Equal(want), "the answer of the latest start, while down")
	g.Eventually(p.Pid).WithTimeout(eventually).WithPolling(poll).Should(And(Not(BeZero()), Not(Equal(pid))))
	g.Eventually(func() int {
		return len(logs.Matching(map[string]any{"msg": "asked for watches", "pid": p.Pid()}))
	}).WithTimeout(eventually).WithPolling(poll).Should(Equal(1), "a restarted process is asked again")
	g.Expect(p.Watch(context.Background())).To(Equal(want))
}

func TestProcessKilledDuringCall(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	block := filepath.Join(dir, "block")
	g.Expect(os.WriteFile(block, nil, 0o644)).To(Succeed())
	opts, logs := options("Killed", "--block-file", block)
	restarted := restartCounter("Killed")
	// A long enough first wait to look at Ready between the crash and the
	// restart; the assertions do not depend on it.
	opts.Backoff = Backoff{Initial: 500 * time.Millisecond, Max: 5 * time.Second}
	p := start(t, opts)
	pid := p.Pid()
	g.Expect(pid).NotTo(BeZero())

	errc := make(chan error, 1)
	info := testInfo()
	go func() { errc <- p.Client().EnforceMLPolicy(context.Background(), info, testJob()) }()
	g.Eventually(func() string {
		data, _ := os.ReadFile(block + ".pid")
		return string(data)
	}).WithTimeout(eventually).WithPolling(poll).Should(Equal(strconv.Itoa(pid)), "the call reaches the plugin and blocks")
	g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())

	var err error
	g.Eventually(errc).WithTimeout(eventually).Should(Receive(&err))
	g.Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("the plugin's process %d exited during the call (signal: killed)", pid))))
	g.Expect(faultyEnv(info)).To(BeEmpty(), "a failed call leaves Info as it was")

	ready := p.Ready()
	g.Expect(ready).To(MatchError(ErrNotRunning))
	g.Expect(ready.Error()).To(MatchRegexp(`^the plugin is not running: process %d exited after \S+: signal: killed; (next start in \S+ \(at \S+\)|a start is under way)$`, pid))

	g.Eventually(p.Pid).WithTimeout(eventually).WithPolling(poll).Should(And(Not(BeZero()), Not(Equal(pid))), "a new process runs")
	g.Expect(p.Ready()).To(Succeed())
	g.Expect(restarted()).To(Equal(1.0))
	g.Expect(logs.Matching(map[string]any{"plugin": "Killed", "msg": "plugin process exited; restarting it with backoff", "pid": pid})).To(HaveLen(1), logs.String)
	g.Expect(logs.Matching(map[string]any{"plugin": "Killed", "msg": "plugin restarted", "pid": p.Pid()})).To(HaveLen(1), logs.String)

	g.Expect(os.Remove(block)).To(Succeed())
	g.Expect(p.Client().EnforceMLPolicy(context.Background(), info, testJob())).To(Succeed())
	g.Expect(faultyEnv(info)).To(Equal([]string{"1"}), "the restarted process serves calls")
}

func TestCrashInCall(t *testing.T) {
	g := NewWithT(t)
	opts, _ := options("Crasher", "--crash-in-enforce")
	opts.Backoff = Backoff{Initial: 500 * time.Millisecond, Max: 5 * time.Second}
	p := start(t, opts)
	pid := p.Pid()

	err := p.Client().EnforceMLPolicy(context.Background(), testInfo(), testJob())
	g.Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("the plugin's process %d exited during the call (exit status 3)", pid))))
	g.Expect(p.Ready()).To(MatchError(ContainSubstring("exit status 3")))
	g.Eventually(p.Pid).WithTimeout(eventually).WithPolling(poll).Should(And(Not(BeZero()), Not(Equal(pid))))
	g.Expect(p.Describe().Name).To(Equal("Crasher"), "the restarted process is described again")
}

func TestCallTimeout(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	block := filepath.Join(dir, "block")
	g.Expect(os.WriteFile(block, nil, 0o644)).To(Succeed())
	opts, _ := options("Slow", "--block-file", block)
	restarted := restartCounter("Slow")
	opts.CallTimeout = time.Second
	p := start(t, opts)
	pid := p.Pid()

	info := testInfo()
	enforce := func(job *trainer.TrainJob) error {
		return p.Client().EnforceMLPolicy(context.Background(), info, job)
	}
	const first = "no answer within callTimeout 1s (the first time for this input: the TrainJob is retried before the failure policy applies)"
	err := enforce(testJob())
	g.Expect(err).To(MatchError(first))
	g.Expect(framework.IsUnavailable(err)).To(BeTrue(), "the first miss of an input may be other TrainJobs' calls ahead of it: no answer of the plugin's")
	g.Expect(faultyEnv(info)).To(BeEmpty(), "a call past its deadline leaves Info as it was")
	g.Expect(p.Ready()).To(Succeed(), "a slow plugin is not restarted")

	err = enforce(testJob())
	g.Expect(err).To(MatchError("no answer within callTimeout 1s, again for this input"))
	g.Expect(framework.IsUnavailable(err)).To(BeFalse(), "the second miss of the same input is the plugin's failure, which its failure policy judges")

	other := pluginhosttest.Job("other")
	other.UID = "uid-2"
	err = enforce(other)
	g.Expect(framework.IsUnavailable(err)).To(BeTrue(), "another TrainJob's first miss is its own: %v", err)

	g.Expect(os.Remove(block)).To(Succeed())
	g.Expect(enforce(testJob())).To(Succeed())
	g.Expect(faultyEnv(info)).To(Equal([]string{"1"}))
	g.Expect(p.Pid()).To(Equal(pid))
	g.Expect(restarted()).To(BeZero())

	g.Expect(os.WriteFile(block, nil, 0o644)).To(Succeed())
	info = testInfo()
	err = enforce(testJob())
	g.Expect(framework.IsUnavailable(err)).To(BeTrue(), "an answer clears the input's miss: the next miss is a first again: %v", err)
}

func sha256Of(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func TestChecksum(t *testing.T) {
	g := NewWithT(t)
	actual := sha256Of(t, faultyBin)
	wrong := strings.Repeat("0", 64)
	want := fmt.Sprintf("sha256 of %s is %s, the configuration expects %s; not starting it", faultyBin, actual, wrong)

	opts, logs := options("Checked")
	restarted := restartCounter("Checked")
	opts.SHA256 = wrong
	p, err := Start(context.Background(), withDefaults(opts))
	g.Expect(err).NotTo(HaveOccurred(), "a checksum mismatch is retried, not a configuration error")
	t.Cleanup(p.Close)
	g.Expect(p.Ready()).To(MatchError(ContainSubstring(want)))
	g.Expect(p.Generation()).To(BeZero())
	g.Expect(p.Pid()).To(BeZero())
	g.Expect(p.Describe()).To(Equal(framework.Description{Name: "Checked"}))

	err = p.Client().EnforceMLPolicy(context.Background(), testInfo(), testJob())
	g.Expect(err).To(MatchError(ErrNotRunning))
	g.Expect(err).To(MatchError(MatchRegexp(`^the plugin is not running: .*; not starting it; (next start in \S+ \(at \S+\)|a start is under way)$`)))

	// It keeps checking, and says so each time.
	g.Eventually(restarted).WithTimeout(eventually).WithPolling(poll).Should(BeNumerically(">=", 2))
	g.Eventually(func() int {
		return len(logs.Matching(map[string]any{"plugin": "Checked", "msg": "plugin did not start; retrying with backoff", "error": want}))
	}).WithTimeout(eventually).WithPolling(poll).Should(BeNumerically(">=", 3), logs.String)
	g.Expect(p.Ready()).To(MatchError(ContainSubstring(want)))

	// The right sum, in either case, starts it.
	opts, _ = options("Checked2")
	opts.SHA256 = strings.ToUpper(actual)
	p2 := start(t, opts)
	g.Expect(p2.Ready()).To(Succeed())
}

func TestNotStartable(t *testing.T) {
	hang := filepath.Join(t.TempDir(), "hang.sh")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, command, args, want string
	}{{
		name:    "Hangs",
		command: hang,
		want:    "timeout while waiting for plugin to start",
	}, {
		name: "NotAPlugin",
		args: "--not-a-plugin",
		want: "Unrecognized remote plugin message: hello, I am not a plugin; This usually means that the binary is not a Trainforge plugin",
	}, {
		name: "ProtocolTwo",
		args: "--protocol-version=2",
		want: "incompatible API version with plugin. Plugin version: 2, Client versions: [1]",
	}, {
		// A plugin that exits before the handshake usually says why on
		// stderr: its last line is part of the reason.
		name: "ExitsEarly",
		args: "--start-after-file=/nonexistent/go-ahead",
		want: `the plugin's last line on stderr: "not starting yet: stat /nonexistent/go-ahead: no such file or directory"`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			opts, _ := options(tc.name, tc.args)
			restarted := restartCounter(tc.name)
			if tc.command != "" {
				opts.Command, opts.Args, opts.StartTimeout = tc.command, nil, 300*time.Millisecond
			}
			p, err := Start(context.Background(), withDefaults(opts))
			g.Expect(err).NotTo(HaveOccurred())
			t.Cleanup(p.Close)
			g.Expect(p.Ready()).To(MatchError(ContainSubstring(tc.want)))
			g.Expect(p.Ready()).To(MatchError(ContainSubstring("starting " + opts.Command + ": ")))
			g.Eventually(restarted).WithTimeout(eventually).WithPolling(poll).Should(BeNumerically(">=", 2))
			g.Expect(p.Generation()).To(BeZero())
			g.Expect(p.Ready()).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestMissingBinary(t *testing.T) {
	for _, tc := range []struct{ command, want string }{
		{"/nonexistent/trainforge-plugin", `cannot run the plugin binary: exec: "/nonexistent/trainforge-plugin": stat /nonexistent/trainforge-plugin: no such file or directory`},
		{"trainforge-plugin-not-in-path", `cannot run the plugin binary: exec: "trainforge-plugin-not-in-path": executable file not found in $PATH`},
	} {
		g := NewWithT(t)
		opts, _ := options("Missing")
		opts.Command = tc.command
		p, err := Start(context.Background(), withDefaults(opts))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.Ready()).To(MatchError(ContainSubstring(tc.want)))
		g.Expect(p.Generation()).To(BeZero())
		p.Close()
	}
}

func TestConfigurationErrors(t *testing.T) {
	g := NewWithT(t)

	opts, _ := options("Named", "--describe-name", "Other")
	p, err := Start(context.Background(), withDefaults(opts))
	g.Expect(p).To(BeNil())
	g.Expect(err).To(MatchError(ContainSubstring(`plugin "Named" describes itself as "Other"`)))

	opts, _ = options("Picky")
	opts.PluginArgs = json.RawMessage(`{"greeting":"hi","colour":"red"}`)
	p, err = Start(context.Background(), withDefaults(opts))
	g.Expect(p).To(BeNil())
	g.Expect(err).To(MatchError(`plugin "Picky" rejected its args: unknown arg "colour"`))
}

// TestLaterConfigurationError shows that a configuration error found at a
// restart (here, the binary was replaced by one with another name) is not
// fatal: the host says why and keeps trying.
func TestLaterConfigurationError(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	nameFile := filepath.Join(dir, "name")
	script := filepath.Join(dir, "plugin.sh")
	g.Expect(os.WriteFile(nameFile, []byte("Wrapped"), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\nexec %q --name Wrapped --describe-name \"$(cat %q)\"\n", faultyBin, nameFile)), 0o755)).To(Succeed())
	opts, logs := options("Wrapped")
	opts.Command, opts.Args = script, nil
	p := start(t, opts)
	pid := p.Pid()
	g.Expect(pid).NotTo(BeZero())

	g.Expect(os.WriteFile(nameFile, []byte("Impostor"), 0o644)).To(Succeed())
	g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	want := `plugin "Wrapped" describes itself as "Impostor"`
	g.Eventually(p.Ready).WithTimeout(eventually).WithPolling(poll).Should(MatchError(ContainSubstring(want)))
	g.Eventually(func() int {
		return len(logs.Matching(map[string]any{"plugin": "Wrapped", "msg": "plugin did not start; retrying with backoff"}))
	}).WithTimeout(eventually).WithPolling(poll).Should(BeNumerically(">=", 2), logs.String)
	g.Expect(p.Describe().Name).To(Equal("Wrapped"), "Describe keeps the latest good description")

	g.Expect(os.WriteFile(nameFile, []byte("Wrapped"), 0o644)).To(Succeed())
	g.Eventually(p.Ready).WithTimeout(eventually).WithPolling(poll).Should(Succeed())
	g.Expect(p.Pid()).NotTo(Equal(pid))
}

// TestChildHoldsOutput shows that the exit of a plugin is noticed, and
// Close returns, even when a process the plugin started keeps its stdout
// and stderr open (go-plugin waits for them to close).
func TestChildHoldsOutput(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the exit is checked apart from the output only on Linux")
	}
	g := NewWithT(t)
	dir := t.TempDir()
	children := filepath.Join(dir, "children")
	script := filepath.Join(dir, "plugin.sh")
	g.Expect(os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\nsleep 300 &\necho $! >> %q\nexec %q --name Parent\n", children, faultyBin)), 0o755)).To(Succeed())
	t.Cleanup(func() {
		data, _ := os.ReadFile(children)
		for _, s := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(s); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	opts, logs := options("Parent")
	opts.Command, opts.Args = script, nil
	p := start(t, opts)
	pid := p.Pid()
	g.Expect(pid).NotTo(BeZero())

	g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	g.Eventually(p.Pid).WithTimeout(eventually).WithPolling(poll).Should(And(Not(BeZero()), Not(Equal(pid))), "the crash is noticed and the plugin restarted")
	g.Expect(logs.Matching(map[string]any{"plugin": "Parent", "pid": pid, "msg": "plugin process exited, but a process it started keeps its stdout or stderr open; no longer reading them"})).To(HaveLen(1), logs.String)
	exits := logs.Matching(map[string]any{"plugin": "Parent", "pid": pid, "msg": "plugin process exited; restarting it with backoff"})
	g.Expect(exits).To(HaveLen(1), logs.String)
	g.Expect(exits[0]["error"]).To(HaveSuffix(": signal: killed"))

	pid = p.Pid()
	p.Close()
	g.Expect(processGone(pid)).To(BeTrue(), "Close returns once the process is gone")
}

func TestRefusedPatch(t *testing.T) {
	g := NewWithT(t)
	opts, _ := options("Patcher", "--patch", `[{"op":"add","path":"/trainJob","value":1}]`)
	p := start(t, opts)
	info := testInfo()
	err := p.Client().EnforceMLPolicy(context.Background(), info, testJob())
	g.Expect(err).To(MatchError(And(ContainSubstring("patch operation 0"), ContainSubstring("/trainJob"), ContainSubstring("is outside Info"))))
	g.Expect(info).To(Equal(testInfo()))
	g.Expect(p.Ready()).To(Succeed(), "a bad answer is the call's failure, not the process's")
}

func TestSocketDir(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	opts, _ := options("Socketed")
	opts.SocketDir = dir
	p := start(t, opts)
	g.Expect(p.Ready()).To(Succeed())
	sockets, err := filepath.Glob(filepath.Join(dir, "plugin-dir*", "plugin*"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sockets).To(HaveLen(1), "the plugin's socket is in SocketDir")
	st, err := os.Stat(sockets[0])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Mode().Type()).To(Equal(os.ModeSocket))

	p.Close()
	entries, err := os.ReadDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(entries).To(BeEmpty(), "Close removes the socket directory")
}

// processGone reports whether pid has exited. A zombie has exited: its
// parent may be gone too, and who reaps it depends on the system.
func processGone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...; comm may hold spaces and parentheses.
	rest := string(data[bytes.LastIndexByte(data, ')')+1:])
	fields := strings.Fields(rest)
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

func TestClose(t *testing.T) {
	t.Run("Close", func(t *testing.T) {
		g := NewWithT(t)
		opts, _ := options("Closed")
		restarted := restartCounter("Closed")
		p := start(t, opts)
		pid := p.Pid()
		g.Expect(processGone(pid)).To(BeFalse())

		p.Close()
		g.Eventually(func() bool { return processGone(pid) }).WithTimeout(eventually).WithPolling(poll).Should(BeTrue())
		g.Expect(p.Pid()).To(BeZero())
		g.Expect(p.Ready()).To(MatchError("the plugin is not running: the plugin host was closed"))
		g.Expect(p.Client().EnforceMLPolicy(context.Background(), testInfo(), testJob())).To(MatchError(ErrNotRunning))
		p.Close() // again: nothing happens
		g.Expect(restarted()).To(BeZero(), "a closed plugin is not restarted")
	})
	t.Run("context ends", func(t *testing.T) {
		g := NewWithT(t)
		opts, _ := options("Cancelled")
		ctx, cancel := context.WithCancel(context.Background())
		p, err := Start(ctx, withDefaults(opts))
		g.Expect(err).NotTo(HaveOccurred())
		pid := p.Pid()
		g.Expect(pid).NotTo(BeZero())
		cancel()
		g.Eventually(func() bool { return processGone(pid) }).WithTimeout(eventually).WithPolling(poll).Should(BeTrue())
		g.Eventually(p.Ready).WithTimeout(eventually).WithPolling(poll).Should(MatchError(ContainSubstring("closed")))
		p.Close()
	})
}

// TestNoOrphans kills a host with SIGKILL, which runs no cleanup, and
// checks that its plugin dies with it.
func TestNoOrphans(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("plugins die with their host only on Linux (parent-death signal)")
	}
	g := NewWithT(t)
	host := exec.Command(os.Args[0], "-test.run=^TestHelperHost$", "-test.count=1")
	host.Env = append(os.Environ(), helperHostEnv+"="+faultyBin)
	var stderr bytes.Buffer
	host.Stderr = &stderr
	stdout, err := host.StdoutPipe()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(host.Start()).To(Succeed())
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })

	pidc := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if s, ok := strings.CutPrefix(sc.Text(), "PLUGIN PID "); ok {
				pid, _ := strconv.Atoi(s)
				pidc <- pid
				return
			}
		}
		close(pidc)
	}()
	var pid int
	g.Eventually(pidc).WithTimeout(eventually).Should(Receive(&pid), func() string { return stderr.String() })
	g.Expect(pid).NotTo(BeZero(), func() string { return stderr.String() })
	g.Expect(processGone(pid)).To(BeFalse())

	g.Expect(host.Process.Signal(syscall.SIGKILL)).To(Succeed())
	_ = host.Wait()
	g.Eventually(func() bool { return processGone(pid) }).WithTimeout(eventually).WithPolling(poll).Should(BeTrue(),
		"the plugin process %d outlived its host", pid)
}

// TestHelperHost is the host process of TestNoOrphans: it starts a plugin,
// prints its pid and waits to be killed.
func TestHelperHost(t *testing.T) {
	bin := os.Getenv(helperHostEnv)
	if bin == "" {
		t.Skip("run by TestNoOrphans")
	}
	o := shared("Orphan", funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	o.Args, o.StartTimeout = []string{"--name", "Orphan"}, 20*time.Second
	p, err := Start(context.Background(), Options{Options: o, Command: bin})
	if err == nil {
		err = p.Ready()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper host:", err)
		os.Exit(1)
	}
	fmt.Printf("PLUGIN PID %d\n", p.Pid())
	time.Sleep(time.Hour)
}

// TestThroughFramework runs the plugin through the framework's runner, as
// the controller does.
func TestThroughFramework(t *testing.T) {
	g := NewWithT(t)
	opts, _ := options("Framed")
	opts.PluginArgs = json.RawMessage(`{"greeting":"hi"}`)
	p := start(t, opts)
	fw, err := frameworkruntime.New(context.Background(), framework.Registry{}, []frameworkruntime.PluginSpec{{Name: "Framed", Plugin: p}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fw.Current().Ready()).To(Succeed())

	info := testInfo()
	info.RuntimePolicy.MLPolicy = json.RawMessage(`{"faulty":{}}`)
	job := testJob()
	built, _, err := runtimetest.Build(context.Background(), fw.Current(), info, job)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(faultyEnv(info)).To(Equal([]string{"hi"}))
	g.Expect(built).To(HaveLen(1))
	obj := built[0].Object
	g.Expect(built[0].Plugin).To(Equal("Framed"))
	g.Expect(obj.GetNamespace()).To(Equal("team-a"))
	g.Expect(obj.GetOwnerReferences()).To(HaveLen(1))
	g.Expect(obj.GetLabels()).To(HaveKeyWithValue(framework.TrainJobNameLabel, "llm"))

	// A kind the plugin did not declare is refused by the runner.
	opts, _ = options("Sneaky", "--build-kind", "v1/Secret")
	p2 := start(t, opts)
	fw2, err := frameworkruntime.New(context.Background(), framework.Registry{}, []frameworkruntime.PluginSpec{{Name: "Sneaky", Plugin: p2}})
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = runtimetest.Build(context.Background(), fw2.Current(), info, job)
	g.Expect(err).To(MatchError(ContainSubstring("plugin Sneaky, Build: built a v1/Secret, a kind it did not declare in Describe")))
}

// TestDownUnderIgnoreIsUnavailable: a call made while the plugin's process
// is not running took place nowhere, so it fails as a
// *framework.UnavailableError, as a wasm plugin's that is stopped: under
// failurePolicy Ignore too the reconcile's phase fails with it (the
// TrainJob is retried) instead of going on without the plugin.
func TestDownUnderIgnoreIsUnavailable(t *testing.T) {
	g := NewWithT(t)
	opts, _ := options("Down")
	// Down long enough to be called while no process runs.
	opts.Backoff = Backoff{Initial: time.Minute, Max: time.Minute}
	p := start(t, opts)
	fw, err := frameworkruntime.New(context.Background(), framework.Registry{}, []frameworkruntime.PluginSpec{
		{Name: "Down", Plugin: p, FailurePolicy: frameworkruntime.FailurePolicyIgnore},
	})
	g.Expect(err).NotTo(HaveOccurred())
	pid := p.Pid()
	g.Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	g.Eventually(p.Ready).WithTimeout(eventually).WithPolling(poll).Should(MatchError(ErrNotRunning))

	err = p.Client().EnforceMLPolicy(context.Background(), testInfo(), testJob())
	g.Expect(framework.IsUnavailable(err)).To(BeTrue(), "a call while down: %v (%T)", err, err)
	g.Expect(err).To(MatchError(ErrNotRunning))

	info := testInfo()
	info.RuntimePolicy.MLPolicy = json.RawMessage(`{"faulty":{}}`)
	built, ignored, err := runtimetest.Build(context.Background(), fw.Current(), info, testJob())
	g.Expect(ignored).To(BeEmpty(), "a plugin that took no call is not skipped under Ignore")
	g.Expect(built).To(BeEmpty())
	var pe *framework.PluginError
	g.Expect(errors.As(err, &pe)).To(BeTrue(), "error %v (%T), want the plugin's", err, err)
	g.Expect(pe.Plugin).To(Equal("Down"))
	g.Expect(framework.IsUnavailable(err)).To(BeTrue(), "error %v", err)
	g.Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("process %d exited", pid))))
}

// TestStderrRateLimited: a plugin process that logs in a loop gets its
// stderr forwarded as a wasm module's log is, through the same
// rate-limited forwarder: a burst of twice pluginhost.LogLinesPerSecond
// and that rate after it, the rest counted, and the count logged with the
// next line forwarded.
func TestStderrRateLimited(t *testing.T) {
	g := NewWithT(t)
	opts, logs := options("Chatty", "--log-lines", "5000")
	p := start(t, opts)
	forwarded := func() int {
		n := 0
		for _, e := range logs.Entries() {
			if msg, _ := e["msg"].(string); strings.HasPrefix(msg, "log line ") {
				n++
			}
		}
		return n
	}
	began := time.Now()
	g.Expect(p.Client().EnforceMLPolicy(context.Background(), testInfo(), testJob())).To(Succeed())
	g.Eventually(forwarded).WithTimeout(eventually).WithPolling(poll).Should(BeNumerically(">", 0))
	time.Sleep(500 * time.Millisecond) // the rest of the lines reach the host
	n, took := forwarded(), time.Since(began)
	g.Expect(n).To(BeNumerically("<=", 2*pluginhost.LogLinesPerSecond+int(took.Seconds()*pluginhost.LogLinesPerSecond)+1),
		"%d of 5000 lines forwarded in %s", n, took)
	g.Eventually(func() []map[string]any {
		g.Expect(p.Client().EnforceMLPolicy(context.Background(), testInfo(), testJob())).To(Succeed())
		return logs.Matching(map[string]any{"plugin": "Chatty", "msg": "the plugin logged faster than the host forwards; lines were dropped"})
	}).WithTimeout(eventually).WithPolling(time.Second).ShouldNot(BeEmpty(), "the dropped lines are counted")
}
