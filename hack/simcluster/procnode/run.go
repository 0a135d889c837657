package procnode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/trainforge/trainforge/internal/shellquote"
)

// A processSpec is what one run of a container needs.
type processSpec struct {
	argv     []string
	env      []string
	dir      string
	hostname string
	mounts   []mount
	log      string
}

// A process is one run of a container: a shell in a new mount and UTS
// namespace that makes the container's bind mounts and hostname and then
// execs its command, in a process group of its own (the group is what
// stopping the container signals, so that its children go too).
type process struct {
	cmd      *exec.Cmd
	started  time.Time
	done     chan struct{}
	exitCode int32
	finished time.Time
}

// mountScript is the shell the container's command is exec'd from.
// Mount propagation is already private: Go makes it so when it unshares
// the mount namespace. Mount points that do not exist are made on the
// host's filesystem (the namespace isolates mounts, not files).
func mountScript(spec processSpec, mountBin string) string {
	var b strings.Builder
	b.WriteString("set -e\n")
	for _, m := range spec.mounts {
		src, tgt := shellquote.Quote(m.source), shellquote.Quote(m.target)
		fmt.Fprintf(&b, "if [ -d %s ]; then mkdir -p %s; elif [ ! -e %s ]; then mkdir -p \"$(dirname %s)\"; : >%s; fi\n", src, tgt, tgt, tgt, tgt)
		fmt.Fprintf(&b, "%s --bind %s %s\n", mountBin, src, tgt)
		if m.readOnly {
			fmt.Fprintf(&b, "%s -o remount,bind,ro %s\n", mountBin, tgt)
		}
	}
	if spec.hostname != "" {
		fmt.Fprintf(&b, "printf %%s %s >/proc/sys/kernel/hostname\n", shellquote.Quote(spec.hostname))
	}
	fmt.Fprintf(&b, "cd %s\nexec \"$@\"\n", shellquote.Quote(spec.dir))
	return b.String()
}

// startProcess starts a container's run with spawn (which gives it the
// parent-death signal from a thread that lives as long as the agent).
func startProcess(spec processSpec, mountBin string, spawn func(*exec.Cmd) error) (*process, error) {
	if len(spec.argv) == 0 {
		return nil, errors.New("no command: process nodes have no images, so a container needs command (or args)")
	}
	if err := os.MkdirAll(filepath.Dir(spec.log), 0o755); err != nil {
		return nil, err
	}
	out, err := os.OpenFile(spec.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	if err := os.MkdirAll(spec.dir, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", mountScript(spec, mountBin), "sh"}, spec.argv...)...)
	cmd.Env = spec.env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:      true,
		Pdeathsig:    syscall.SIGKILL,
		Unshareflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS,
	}
	if err := spawn(cmd); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.argv[0], err)
	}
	p := &process{cmd: cmd, started: time.Now(), done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		// What the process leaves behind in its group dies with it, as
		// a container's processes do when its main process exits.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		p.exitCode = exitCode(cmd.ProcessState, err)
		p.finished = time.Now()
		close(p.done)
	}()
	return p, nil
}

// exitCode is a process's exit code as container runtimes report it: 128
// plus the signal for a process a signal ended.
func exitCode(ps *os.ProcessState, err error) int32 {
	if ps == nil {
		if err != nil {
			return 128
		}
		return 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(ps.ExitCode())
}

func (p *process) pgid() int { return p.cmd.Process.Pid }

func (p *process) signal(sig syscall.Signal) { _ = syscall.Kill(-p.pgid(), sig) }

// stop sends SIGTERM to the process group, SIGKILL after grace, and
// waits for the process to end. Whatever its group still holds is killed.
func (p *process) stop(grace time.Duration) {
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.signal(syscall.SIGKILL)
		<-p.done
	}
	p.signal(syscall.SIGKILL)
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
