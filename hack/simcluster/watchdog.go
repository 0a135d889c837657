package simcluster

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// watchdogScript cleans up after a parent that went away without saying
// "done": it kills the process groups it was told of, stops the kwok
// cluster (whose components kwokctl detached from their parent, so no
// parent-death signal reaches them) and removes the work directory. It
// reads its parent's instructions on stdin, one a line; the end of stdin is
// the parent's death, however it died.
//
//	$1 kwokctl  $2 cluster name  $3 KWOK_WORKDIR  $4 directory to remove
const watchdogScript = `
groups=""
while read -r what arg; do
  case "$what" in
    group) groups="$groups $arg" ;;
    done) exit 0 ;;
  esac
done
for g in $groups; do kill -TERM "-$g" 2>/dev/null; done
sleep 1
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
KWOK_WORKDIR="$3" "$1" --name "$2" delete cluster >/dev/null 2>&1
for f in "$3"/clusters/*/pids/*.pid; do
  [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
done
rm -rf "$4"
`

// watchdog is a shell that outlives its parent (no parent-death signal, a
// process group of its own so that Ctrl-C does not reach it) for as long
// as it takes to clean up after it.
type watchdog struct {
	cmd *exec.Cmd
	in  io.WriteCloser
}

func startWatchdog(kwokctl, name, kwokDir, dir string) (*watchdog, error) {
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "watchdog", kwokctl, name, kwokDir, dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Not inherited by other children: os.Pipe's ends are close-on-exec,
	// so stdin ends exactly when this process does.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the watchdog: %w", err)
	}
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("starting the watchdog: %w", err)
	}
	r.Close()
	go func() { _ = cmd.Wait() }()
	return &watchdog{cmd: cmd, in: w}, nil
}

// watch tells the watchdog to kill a process group if the parent dies.
func (w *watchdog) watch(p *process) {
	if p != nil {
		w.watchGroup(p.cmd.Process.Pid)
	}
}

// watchGroup tells the watchdog to kill a process group (a process
// node's container) if the parent dies.
func (w *watchdog) watchGroup(pgid int) {
	if w != nil {
		fmt.Fprintf(w.in, "group %d\n", pgid)
	}
}

// done tells the watchdog that the parent cleaned up by itself.
func (w *watchdog) done() {
	if w == nil {
		return
	}
	fmt.Fprintln(w.in, "done")
	w.in.Close()
}
