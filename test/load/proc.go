package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ,
// 100 on every Linux the harness runs on).
const clockTick = 10 * time.Millisecond

// process is a measured controller process.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	log    *os.File
	// probe is the URL that answers 200 once the controller is ready, or "".
	probe string
	// pprof is the address of its pprof endpoint, or "".
	pprof string
}

// startProcess runs argv with env added to the harness's environment,
// its output going to logPath.
func startProcess(argv, env []string, logPath, probe string) (*process, error) {
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
	p := &process{cmd: cmd, exited: make(chan struct{}), log: log, probe: probe}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// waitReady waits for the probe (when there is one), then for the process
// to go quiet: its caches are synced and its start-up work is done.
func (p *process) waitReady(ctx context.Context) error {
	if p.probe != "" {
		for {
			if err := p.alive(); err != nil {
				return err
			}
			resp, err := http.Get(p.probe)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s: %w", p.probe, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	_, err := p.waitIdle(ctx)
	return err
}

// alive returns an error when the process has exited.
func (p *process) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("the controller exited: %v (log: %s)", p.cmd.ProcessState, p.log.Name())
	default:
		return nil
	}
}

// Idleness: the process tree used at most idleCPU of CPU during idleWindow.
const (
	idleWindow = time.Second
	idleCPU    = 3 * clockTick
	idlePoll   = 100 * time.Millisecond
)

// waitIdle waits until the process tree has been quiet for idleWindow and
// returns when the quiet began.
func (p *process) waitIdle(ctx context.Context) (time.Time, error) {
	type sample struct {
		at  time.Time
		cpu time.Duration
	}
	var samples []sample
	for {
		if err := p.alive(); err != nil {
			return time.Time{}, err
		}
		now := sample{time.Now(), treeUsage(p.pid()).cpu}
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

// stop asks the process to exit and kills it after a grace period.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.log.Close()
}

// usage is what a process tree has used so far.
type usage struct {
	cpu time.Duration
	// peakRSS is the sum of each process's peak resident set (VmHWM).
	peakRSS int64
	procs   int
}

// treeUsage sums the CPU time and peak RSS of pid and its descendants that
// are alive (plugin processes of the external row).
func treeUsage(pid int) usage {
	var u usage
	for _, p := range append([]int{pid}, descendants(pid)...) {
		cpu, ok := procCPU(p)
		if !ok {
			continue
		}
		u.cpu += cpu
		u.peakRSS += procPeakRSS(p)
		u.procs++
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

// procCPU returns the user and system CPU time of a process.
func procCPU(pid int) (time.Duration, bool) {
	f, ok := procStat(pid)
	// After the name: state(0) ppid(1) ... utime(11) stime(12).
	if !ok || len(f) < 13 {
		return 0, false
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick, true
}

// procPeakRSS returns VmHWM in bytes.
func procPeakRSS(pid int) int64 {
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

// descendants lists the living descendants of pid.
func descendants(pid int) []int {
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

// freeAddr returns a free local TCP address.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// loadAvg returns the 1-minute load average.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

// childrenNamed returns the descendants of the harness whose command name
// is one of names (the API server and etcd that envtest started).
func childrenNamed(names ...string) []int {
	var out []int
	for _, p := range descendants(os.Getpid()) {
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

// cpuOf sums the CPU time of processes.
func cpuOf(pids []int) time.Duration {
	var total time.Duration
	for _, p := range pids {
		if cpu, ok := procCPU(p); ok {
			total += cpu
		}
	}
	return total
}
