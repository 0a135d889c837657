package wasm

import (
	"runtime"
	"sync"
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

func threadTime() (time.Duration, bool) { return clockTime(unix.CLOCK_THREAD_CPUTIME_ID) }

// watchThreadCPU calls interrupt once the calling thread, locked to its
// goroutine (threadCPU), has used bound of CPU time from now on; stop
// ends the watch, and must be called before the thread is unlocked. A
// thread's CPU time grows no faster than the wall clock, so the watch
// reads it only when bound could have been reached: once after bound,
// then after what is left of it, and never for a call that ends sooner.
func watchThreadCPU(bound time.Duration, interrupt func()) (stop func()) {
	// The clock of one thread of this process (Linux's
	// MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
	clock := int32(^uint32(unix.Gettid())<<3 | 6)
	start, ok := clockTime(clock)
	if !ok || bound <= 0 {
		return func() {}
	}
	var mu sync.Mutex
	stopped := false
	var timer *time.Timer
	var check func()
	check = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		now, ok := clockTime(clock)
		switch {
		case !ok:
		case now-start >= bound:
			interrupt()
		default:
			timer = time.AfterFunc(bound-(now-start), check)
		}
	}
	timer = time.AfterFunc(bound, check)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		timer.Stop()
	}
}

func clockTime(clock int32) (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
