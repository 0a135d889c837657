package wasm

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// TestWatchThreadCPU: the watch interrupts a thread that has computed for
// its bound, and not one that waited as long (a call waiting for a CPU on
// a busy machine), nor after it is stopped.
func TestWatchThreadCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a thread's CPU time is read on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	var fired atomic.Bool
	stop := watchThreadCPU(50*time.Millisecond, func() { fired.Store(true) })
	time.Sleep(300 * time.Millisecond)
	stop()
	if fired.Load() {
		t.Error("a thread that slept six times its bound was interrupted; want only its CPU time counted")
	}

	interrupted := make(chan struct{})
	start, _ := threadTime()
	stop = watchThreadCPU(100*time.Millisecond, func() { close(interrupted) })
	defer stop()
	giveUp := time.Now().Add(time.Minute)
	spins := 0
	for computing := true; computing; {
		select {
		case <-interrupted:
			computing = false
		default:
			for range 10000 {
				spins++
			}
			if time.Now().After(giveUp) {
				t.Fatal("a thread that computed for a minute was not interrupted at 100ms of CPU time")
			}
		}
	}
	if end, _ := threadTime(); end-start < 100*time.Millisecond {
		t.Errorf("interrupted after %s of CPU time, before its bound of 100ms", end-start)
	}
}

// TestCallInterruptedAtItsShareOfCPU: a call is watched with a tenth of
// its callTimeout as its bound of CPU time; interrupted there, it is the
// module's failure (not retried as a starved call), its message says
// which bound and what to change, and its instance ends.
func TestCallInterruptedAtItsShareOfCPU(t *testing.T) {
	p, _ := startHostile(t, 128<<20, 4*time.Second)
	var bounds []time.Duration
	p.watchCPU = func(bound time.Duration, interrupt func()) func() {
		bounds = append(bounds, bound)
		timer := time.AfterFunc(10*time.Millisecond, interrupt)
		return func() { timer.Stop() }
	}
	restarts := testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues("Hostile"))

	_, err := p.Client().Build(context.Background(), hostileInfo(), hostileJob("looping", "loop"))
	if len(bounds) != 1 || bounds[0] != 400*time.Millisecond {
		t.Errorf("the call was watched with bounds %v, want [400ms] (a tenth of callTimeout 4s)", bounds)
	}
	for _, want := range []string{"no answer within 400ms of CPU time (1/10 of callTimeout 4s)", "the call: interrupted", "a plugin whose calls compute longer needs a longer callTimeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("the looping call: %v, want %q", err, want)
		}
	}
	if framework.IsUnavailable(err) {
		t.Errorf("a call interrupted at its share of CPU time is an UnavailableError; it is the module's answer: %v", err)
	}
	if got := testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues("Hostile")) - restarts; got != 1 {
		t.Errorf("trainforge_plugin_restarts_total{plugin=Hostile} grew by %v, want 1 (the instance ended)", got)
	}
	p.mu.Lock()
	strikes := p.strikes
	p.mu.Unlock()
	if strikes != 1 {
		t.Errorf("%d strikes towards a backoff, want 1: it counts as a deadline", strikes)
	}

	p.watchCPU = watchThreadCPU
	if _, err := p.Client().Build(context.Background(), hostileInfo(), hostileJob("after", "good")); err != nil {
		t.Errorf("a good call after it: %v", err)
	}
}
