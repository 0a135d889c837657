package wasm

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU starts measuring the CPU time the calling goroutine gets,
// locking it to its thread until the returned stop, which returns that
// time and whether it could be read. The guest runs on the calling
// goroutine, so this is the CPU a call had: a call that reached its
// deadline with little of it waited for a CPU rather than looped.
func threadCPU() (stop func() (time.Duration, bool)) {
	runtime.LockOSThread()
	start, ok := threadTime()
	return func() (time.Duration, bool) {
		end, ok2 := threadTime()
		runtime.UnlockOSThread()
		return end - start, ok && ok2
	}
}

func threadTime() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
