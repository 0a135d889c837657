package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const userHZ = 100

// cpuMeter measures the CPU time, user and system, that the benchmark's
// own process (the host) and the plugin processes spend during the timed
// loop. The external path's B/op and allocs/op count only the host's
// allocations; these say how much work each side does.
type cpuMeter struct {
	pids    []int
	host    time.Duration
	plugins time.Duration
}

// startCPU starts measuring; pids are the plugin processes.
func startCPU(b *testing.B, pids ...int) *cpuMeter {
	b.Helper()
	m := &cpuMeter{pids: pids}
	m.host, m.plugins = hostCPU(b), processesCPU(b, pids)
	return m
}

// report adds host-cpu-ns/op and, with plugin processes, plugin-cpu-ns/op
// to the benchmark's result. Call it after the loop, when b.N is the
// number of iterations. plugin-cpu-ns/op has the 10ms resolution of
// /proc/<pid>/stat: meaningful over a run of a second, not over a few
// iterations.
func (m *cpuMeter) report(b *testing.B) {
	b.Helper()
	if b.N == 0 {
		return
	}
	b.ReportMetric(float64(hostCPU(b)-m.host)/float64(b.N), "host-cpu-ns/op")
	if len(m.pids) > 0 {
		b.ReportMetric(float64(processesCPU(b, m.pids)-m.plugins)/float64(b.N), "plugin-cpu-ns/op")
	}
}

func hostCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processesCPU sums utime and stime of the processes, from /proc.
func processesCPU(b *testing.B, pids []int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Fatal(err)
		}
		// The command name, field 2, is in parentheses and may hold
		// spaces: count the fields after its closing one.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		// fields[0] is field 3 (state); utime and stime are fields 14
		// and 15.
		if len(fields) < 13 {
			b.Fatalf("/proc/%d/stat: too few fields: %q", pid, s)
		}
		for _, f := range fields[11:13] {
			ticks, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				b.Fatalf("/proc/%d/stat: %v", pid, err)
			}
			total += time.Duration(ticks) * time.Second / userHZ
		}
	}
	return total
}
