package external

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"

	"github.com/hashicorp/go-plugin/runner"
)

// The spawner is the one goroutine that starts plugin processes. It is
// locked to its OS thread and never returns, so the thread lives as long as
// the host: Linux sends a child its parent-death signal (Pdeathsig) when the
// *thread* that forked it exits, not the process, and the Go runtime ends
// threads whose locked goroutine returns and may end idle ones. Starting
// plugins from any other goroutine would kill them at random.
//
// Only the fork and exec run there (cmd.Start, which is quick); the
// handshake, Describe and Configure run in the plugin's own goroutine, so a
// slow plugin does not hold up the others.
var (
	spawnOnce sync.Once
	spawnReqs chan spawnRequest
)

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan<- error
}

// spawn starts cmd on the spawner's thread.
func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnReqs = make(chan spawnRequest)
		go spawner(spawnReqs)
	})
	done := make(chan error, 1)
	spawnReqs <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

func spawner(reqs <-chan spawnRequest) {
	runtime.LockOSThread()
	// Never unlocked, never returns: see above.
	for req := range reqs {
		req.done <- startCmd(req.cmd)
	}
}

func startCmd(cmd *exec.Cmd) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("starting the process panicked: %v", r)
		}
	}()
	return cmd.Start()
}

// procRunner is the go-plugin runner of one plugin process. It is
// go-plugin's own command runner, except that the process is started by the
// spawner, with the parent-death signal set, and that it tells when the
// process has exited and how.
//
// It is given to go-plugin through ClientConfig.RunnerFunc rather than
// ClientConfig.Cmd because go-plugin v1.8 creates the socket directory
// under UnixSocketConfig.TempDir, and tells the plugin about it, only for a
// RunnerFunc: with Cmd the plugin's socket would land in the system temp
// dir whatever SocketDir says.
type procRunner struct {
	path      string
	cmd       *exec.Cmd
	stdout    io.ReadCloser
	stderr    *eofSignal
	socketDir string
	onStart   func(pid int) // called once the process runs, before its output is read

	mu      sync.Mutex
	process *os.Process
	killed  bool // kill was called before the process started

	waitOnce sync.Once
	exited   chan struct{} // closed when the process has exited and been reaped
	waitErr  error         // how it exited; read after exited is closed
}

var _ runner.Runner = (*procRunner)(nil)

// newRunner prepares the command of a plugin. env is the environment
// go-plugin prepared (the host's, the handshake cookie, the client
// certificate, the socket directory).
func newRunner(path string, args, env []string, socketDir string) (*procRunner, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	setProcAttr(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	return &procRunner{path: path, cmd: cmd, stdout: stdout, stderr: newEOFSignal(stderr), socketDir: socketDir, exited: make(chan struct{})}, nil
}

// eofSignal is a reader that closes done once reading it has ended. go-plugin
// copies a plugin's stderr line by line into the host's log; the line it
// read before the end has been written out by the time it reads again and
// meets the end.
type eofSignal struct {
	io.ReadCloser
	once sync.Once
	done chan struct{}
}

func newEOFSignal(r io.ReadCloser) *eofSignal {
	return &eofSignal{ReadCloser: r, done: make(chan struct{})}
}

func (e *eofSignal) Read(p []byte) (int, error) {
	n, err := e.ReadCloser.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.done) })
	}
	return n, err
}

func (r *procRunner) Start(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.killed {
		return errors.New("the plugin host is stopping")
	}
	if err := spawn(r.cmd); err != nil {
		return err
	}
	r.process = r.cmd.Process
	if r.onStart != nil {
		r.onStart(r.process.Pid)
	}
	return nil
}

// Wait is called once by go-plugin, after the process's stdout and stderr
// are closed.
func (r *procRunner) Wait(context.Context) error {
	err := errors.New("the process was never started")
	r.waitOnce.Do(func() {
		err = r.cmd.Wait()
		r.waitErr = err
		close(r.exited)
	})
	return err
}

// Kill kills the process. It may be called any number of times, from any
// goroutine, also while go-plugin waits for the handshake.
func (r *procRunner) Kill(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.killed = true
	if r.process == nil {
		return nil
	}
	if err := r.process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (r *procRunner) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.process == nil {
		return 0
	}
	return r.process.Pid
}

func (r *procRunner) ID() string {
	if pid := r.pid(); pid != 0 {
		return strconv.Itoa(pid)
	}
	return ""
}

func (r *procRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *procRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *procRunner) Name() string          { return r.path }

// Diagnose explains, in one line, a process that did not complete the
// handshake.
func (r *procRunner) Diagnose(context.Context) string {
	arch := ""
	if f, err := elf.Open(r.path); err == nil {
		arch = fmt.Sprintf(" (the binary is ELF %s, this host is %s/%s)", f.Machine, runtime.GOOS, runtime.GOARCH)
		_ = f.Close()
	}
	return "This usually means that the binary is not a Trainforge plugin, was built for another system" + arch +
		", or wrote to stdout before go-plugin's handshake line (a plugin must log to stderr only)."
}

func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// gone reports whether the process has exited, even when go-plugin has not
// noticed yet (see closePipes).
func (r *procRunner) gone() bool {
	pid := r.pid()
	return pid != 0 && processExited(pid)
}

// closePipes stops reading the process's stdout and stderr. go-plugin
// waits for the process only once both reach their end, which never
// happens while a process the plugin started (a wrapper script's child, a
// helper daemon) still holds them open: the exit would go unnoticed, and
// go-plugin's Kill would wait forever.
func (r *procRunner) closePipes() {
	_ = r.stdout.Close()
	_ = r.stderr.Close()
}

// exitReason returns how the process exited, or "" while it runs.
func (r *procRunner) exitReason() string {
	select {
	case <-r.exited:
	default:
		return ""
	}
	if r.waitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(r.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	return r.waitErr.Error()
}
