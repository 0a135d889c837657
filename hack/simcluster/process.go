package simcluster

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/trainforge/trainforge/internal/logtail"
	"github.com/trainforge/trainforge/internal/shellquote"
)

// A process is a long-running child (the JobSet controller, Trainforge's
// controller): in a process group of its own, so that stopping it stops
// what it started (plugins) and a terminal's Ctrl-C reaches only the demo,
// which then stops it in order; and with a parent-death signal, so that it
// does not outlive a crashed demo or test binary.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// The spawner is the one goroutine that starts children, locked to its OS
// thread and never returning: Linux sends the parent-death signal when the
// *thread* that forked a child exits, and the Go runtime may end other
// threads at any time.
var (
	spawnOnce sync.Once
	spawnReqs chan spawnRequest
)

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnReqs = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread()
			for req := range spawnReqs {
				req.done <- req.cmd.Start()
			}
		}()
	})
	req := spawnRequest{cmd: cmd, done: make(chan error, 1)}
	spawnReqs <- req
	return <-req.done
}

// startProcess runs bin with args and extra environment, its output
// appended to logFile.
func startProcess(name, logFile, bin string, args, env []string) (*process, error) {
	return startProcessWithMounts(name, logFile, bin, args, env, nil)
}

// startProcessWithMounts is startProcess in a mount namespace of its own
// where each of mounts' sources is bound on its target, for a program
// that reads a fixed path (made on the host if missing, an empty
// directory; the namespace isolates mounts, not files). It needs root.
func startProcessWithMounts(name, logFile, bin string, args, env []string, mounts map[string]string) (*process, error) {
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: opening its log file: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if len(mounts) > 0 {
		// Go makes the new namespace's mounts private when it unshares
		// it, so the binds do not reach the host.
		var script strings.Builder
		script.WriteString("set -e\n")
		for _, target := range slices.Sorted(maps.Keys(mounts)) {
			fmt.Fprintf(&script, "mkdir -p %[2]s\nmount --bind %[1]s %[2]s\n", shellquote.Quote(mounts[target]), shellquote.Quote(target))
		}
		script.WriteString(`exec "$@"` + "\n")
		cmd = exec.Command("/bin/sh", append([]string{"-c", script.String(), "sh", bin}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Unshareflags: syscall.CLONE_NEWNS}
	}
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := spawn(cmd); err != nil {
		out.Close()
		if len(mounts) > 0 {
			return nil, fmt.Errorf("starting %s (%s) in a mount namespace of its own (it needs root with CAP_SYS_ADMIN: run as root on the host, or in a container started with --privileged): %w", name, bin, err)
		}
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports, without waiting, whether the process has exited, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// exitError says that the process exited, how, and why when it crashed,
// with the end of its log: a failed Start removes the work directory, the
// log with it.
func (p *process) exitError(err error) error {
	if crash := logtail.Crash(p.log); crash != "" {
		return fmt.Errorf("%s crashed (%v):\n%s\nthe end of its log, %s:\n%s", p.name, err, crash, p.log, logtail.File(p.log, logtail.Lines))
	}
	return fmt.Errorf("%s exited (%v); the end of its log, %s:\n%s", p.name, err, p.log, logtail.File(p.log, logtail.Lines))
}

// stop sends SIGTERM to the process group, and SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if p == nil {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Whatever the process left in its group goes too (plugin processes
	// die with the controller by themselves; this does not wait for it).
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
