package harness

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trainforge/trainforge/internal/freeport"
	"github.com/trainforge/trainforge/test/testenv"
)

// ClockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ,
// 100 on every Linux the harness runs on).
const ClockTick = 10 * time.Millisecond

// process is a measured controller process.
type Process struct {
	Cmd    *exec.Cmd
	Exited chan struct{}
	Log    *os.File
	// probe is the URL that answers 200 once the controller is ready, or "".
	Probe string
	// pprof is the address of its pprof endpoint, or "".
	Pprof string
	// StopGrace is how long Stop waits after SIGTERM before it kills the
	// process (0: defaultStopGrace). A process under valgrind takes
	// longer to exit and writes what it counted only when it does.
	StopGrace time.Duration
	// logTail and logCrash are the end of the log and its lines that say
	// why a Go program crashed, read when the process exited, for Alive's
	// error.
	logTail, logCrash string
}

// defaultStopGrace is Stop's grace period for a process run as it is.
const defaultStopGrace = 15 * time.Second

// StartProcess runs argv with env added to the harness's environment,
// its output going to logPath.
func StartProcess(argv, env []string, logPath, probe string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	p := &Process{Cmd: cmd, Exited: make(chan struct{}), Log: log, Probe: probe}
	go func() {
		_ = cmd.Wait()
		// Read now, once: the log may be gone by the time the error is
		// read (a test's temporary directory), and Alive is polled.
		p.logTail = testenv.LogTail(logPath, testenv.LogTailLines)
		p.logCrash = testenv.LogCrash(logPath)
		close(p.Exited)
	}()
	return p, nil
}

func (p *Process) PID() int { return p.Cmd.Process.Pid }

// WaitReady waits for the probe (when there is one), then for the process
// to go quiet: its caches are synced and its start-up work is done.
func (p *Process) WaitReady(ctx context.Context) error {
	if err := p.WaitProbe(ctx); err != nil {
		return err
	}
	_, err := p.WaitIdle(ctx)
	return err
}

// WaitProbe waits until the probe (when there is one) answers 200.
func (p *Process) WaitProbe(ctx context.Context) error {
	if p.Probe != "" {
		for {
			if err := p.Alive(); err != nil {
				return err
			}
			resp, err := http.Get(p.Probe)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s: %w", p.Probe, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// Alive returns an error when the process has exited, with the end of its
// log, and the lines before it that say why it crashed.
func (p *Process) Alive() error {
	select {
	case <-p.Exited:
		if p.logCrash != "" {
			return fmt.Errorf("the controller crashed (%v):\n%s\nthe end of its log, %s:\n%s", p.Cmd.ProcessState, p.logCrash, p.Log.Name(), p.logTail)
		}
		return fmt.Errorf("the controller exited: %v; the end of its log, %s:\n%s", p.Cmd.ProcessState, p.Log.Name(), p.logTail)
	default:
		return nil
	}
}

// Idleness: the process tree used at most idleCPU of CPU during idleWindow.
const (
	idleWindow = time.Second
	idleCPU    = 3 * ClockTick
	idlePoll   = 100 * time.Millisecond
)

// waitIdle waits until the process tree has been quiet for idleWindow and
// returns when the quiet began.
func (p *Process) WaitIdle(ctx context.Context) (time.Time, error) {
	type sample struct {
		at  time.Time
		cpu time.Duration
	}
	var samples []sample
	for {
		if err := p.Alive(); err != nil {
			return time.Time{}, err
		}
		now := sample{time.Now(), TreeUsage(p.PID()).CPU}
		samples = append(samples, now)
		// The oldest sample at least idleWindow ago.
		for len(samples) > 1 && now.at.Sub(samples[1].at) >= idleWindow {
			samples = samples[1:]
		}
		if first := samples[0]; now.at.Sub(first.at) >= idleWindow && now.cpu-first.cpu <= idleCPU {
			return first.at, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("waiting for the controller to go idle: %w", ctx.Err())
		case <-time.After(idlePoll):
		}
	}
}

// Stop asks the process to exit and kills it after its grace period
// (StopGrace). Stopping a process that has exited does nothing.
func (p *Process) Stop() {
	grace := p.StopGrace
	if grace == 0 {
		grace = defaultStopGrace
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited:
	case <-time.After(grace):
		_ = p.Cmd.Process.Kill()
		<-p.Exited
	}
	p.Log.Close()
}

// usage is what a process tree has used so far.
type Usage struct {
	CPU time.Duration
	// peakRSS is the sum of each process's peak resident set (VmHWM).
	PeakRSS int64
	Procs   int
}

// TreeUsage sums the CPU time and peak RSS of pid and its Descendants that
// are alive (plugin processes of the external row).
func TreeUsage(pid int) Usage {
	var u Usage
	for _, p := range append([]int{pid}, Descendants(pid)...) {
		cpu, ok := ProcCPU(p)
		if !ok {
			continue
		}
		u.CPU += cpu
		u.PeakRSS += ProcPeakRSS(p)
		u.Procs++
	}
	return u
}

// procStat returns the fields of /proc/<pid>/stat after the command name.
func procStat(pid int) ([]string, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(data[i+1:])), true
}

// ProcCPU returns the user and system CPU time of a process.
func ProcCPU(pid int) (time.Duration, bool) {
	f, ok := procStat(pid)
	// After the name: state(0) ppid(1) ... utime(11) stime(12).
	if !ok || len(f) < 13 {
		return 0, false
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * ClockTick, true
}

// ProcPeakRSS returns VmHWM in bytes.
func ProcPeakRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// Descendants lists the living Descendants of pid.
func Descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := procStat(p); ok && len(f) > 1 && f[0] != "Z" {
			ppid, _ := strconv.Atoi(f[1])
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, children[p]...)
		queue = append(queue, children[p]...)
	}
	return out
}

// FreeAddr returns a free local TCP address for a process to listen on,
// outside the kernel's ephemeral range (freeport.Addr says why).
func FreeAddr() (string, error) { return freeport.Addr() }

// LoadAvg returns the 1-minute load average.
func LoadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

// ChildrenNamed returns the Descendants of the harness whose command name
// is one of names (the API server and etcd that envtest started).
func ChildrenNamed(names ...string) []int {
	var out []int
	for _, p := range Descendants(os.Getpid()) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p))
		if err != nil {
			continue
		}
		comm := strings.TrimSpace(string(data))
		for _, n := range names {
			if comm == n {
				out = append(out, p)
			}
		}
	}
	return out
}

// CPUOf sums the CPU time of processes.
func CPUOf(pids []int) time.Duration {
	var total time.Duration
	for _, p := range pids {
		if cpu, ok := ProcCPU(p); ok {
			total += cpu
		}
	}
	return total
}

// Kill sends SIGKILL to the process and waits for it to exit.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.Exited
	p.Log.Close()
}
