package faults

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/test/load/harness"
)

// faultAt is when, after the first create, each fault strikes: the storm
// is well under way (about a third of a 500-TrainJob storm on this
// machine).
const faultAt = 2 * time.Second

func everyNormal(i int) expectation { return normal(kindOf(i)) }

// TestPluginSIGKILL kills the Torch plugin's process (SIGKILL) mid-storm.
// The host restarts it with backoff; the reconciles that failed meanwhile
// are retried; every TrainJob ends as if nothing happened.
func TestPluginSIGKILL(t *testing.T) {
	base := baselineMakespan(t)
	e := newEnv(t, "plugin-sigkill", setup{})
	cp := e.startController("controller", "")
	w := e.startWatcher(everyNormal)
	var killed int
	m := e.storm(w, func(start time.Time) {
		sleepUntil(start.Add(faultAt))
		pid, err := pluginPID(cp, "Torch")
		if err != nil {
			t.Error(err)
			return
		}
		killed = pid
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Error(err)
		}
	})
	r := e.finish(w, everyNormal)
	if killed != 0 {
		if pid, err := pluginPID(cp, "Torch"); err == nil && pid == killed {
			t.Errorf("the Torch plugin still runs as the killed process %d", pid)
		}
	}
	addFigure(figure{name: "a. Torch plugin SIGKILLed at 2 s", makespan: m, base: base, peakRSS: r.peakRSS, maxEvents: r.maxEvents, maxOccurs: r.maxOccurs, cpu: r.cpu, pluginCPU: r.pluginCPU, note: fmt.Sprintf("process %d killed; restarted by the host", killed), load: harness.LoadAvg()})
}

// TestPluginHangs runs the hostile plugin hanging on every call for 5 s
// (callTimeout is 2 s) from the storm's first call, then answering well.
func TestPluginHangs(t *testing.T) {
	base := baselineMakespan(t)
	e := newEnv(t, "plugin-hangs", setup{hostileArgs: []string{"--hang", "5s"}})
	e.startController("controller", "")
	w := e.startWatcher(everyNormal)
	m := e.storm(w, nil)
	r := e.finish(w, everyNormal)
	addFigure(figure{name: "b. hostile plugin hangs 5 s (callTimeout 2 s)", makespan: m, base: base, peakRSS: r.peakRSS, maxEvents: r.maxEvents, maxOccurs: r.maxOccurs, cpu: r.cpu, pluginCPU: r.pluginCPU, note: "the 1/5 of TrainJobs it takes part in wait for it", load: harness.LoadAvg()})
}

// TestControllerSIGKILL kills the controller (SIGKILL) 2 s into the storm
// and starts it again with the same configuration and --kubeconfig.
func TestControllerSIGKILL(t *testing.T) {
	base := baselineMakespan(t)
	e := newEnv(t, "controller-sigkill", setup{})
	cp := e.startController("controller", "")
	w := e.startWatcher(everyNormal)
	var down time.Duration
	m := e.storm(w, func(start time.Time) {
		sleepUntil(start.Add(faultAt))
		e.kill(cp)
		from := time.Now()
		e.restart(cp, "")
		down = time.Since(from)
	})
	r := e.finish(w, everyNormal)
	addFigure(figure{name: "c. controller SIGKILLed at 2 s, restarted", makespan: m, base: base, peakRSS: r.peakRSS, maxEvents: r.maxEvents, maxOccurs: r.maxOccurs, cpu: r.cpu, pluginCPU: r.pluginCPU, outage: down, note: "outage: from the kill until the new process's /readyz answers", load: harness.LoadAvg()})
}

// TestAPIServerRestart stops kube-apiserver 2 s into the storm (SIGTERM,
// SIGKILL when it has not exited 5 s later), keeps it down 2 s, and starts
// it again on the same port with the same etcd. The controller is not
// restarted.
func TestAPIServerRestart(t *testing.T) {
	base := baselineMakespan(t)
	e := newEnv(t, "apiserver-restart", setup{})
	e.startController("controller", "")
	w := e.startWatcher(everyNormal)
	var outage time.Duration
	var how string
	m := e.storm(w, func(start time.Time) {
		sleepUntil(start.Add(faultAt))
		from := time.Now()
		var err error
		if how, err = e.cl.RestartAPIServer(5*time.Second, 2*time.Second); err != nil {
			t.Error(err)
		}
		outage = time.Since(from)
	})
	r := e.finish(w, everyNormal)
	addFigure(figure{name: "d. API server restarted at 2 s", makespan: m, base: base, peakRSS: r.peakRSS, maxEvents: r.maxEvents, maxOccurs: r.maxOccurs, cpu: r.cpu, pluginCPU: r.pluginCPU, outage: outage, note: fmt.Sprintf("outage: the API server %s, down 2 s, started again", how), load: harness.LoadAvg()})
}

// TestRuntimeDeleted deletes the plain Torch ClusterTrainingRuntime (3 in
// 5 TrainJobs use it) 2 s into the storm. A TrainJob reconciled before has
// its runtime snapshot and keeps its objects; one first reconciled after
// gets Created=False, RuntimeNotFound, and nothing built. Exactly its
// objects, for a TrainJob of the deleted runtime, is: its JobSet when it
// has a snapshot, nothing when it does not. The other TrainJobs finish as
// usual.
func TestRuntimeDeleted(t *testing.T) {
	base := baselineMakespan(t)
	e := newEnv(t, "runtime-deleted", setup{})
	e.startController("controller", "")
	notFound := expectation{reason: trainer.TrainJobRuntimeNotFoundReason, message: `"` + runtimeTorch + `" not found`}
	// While the storm runs, a TrainJob of the deleted runtime is done at
	// either end; which one it must be is told by its snapshot at the end.
	w := e.startWatcher(func(i int) expectation {
		if kindOf(i) == kindTorch {
			return expectation{anyOf: []expectation{{created: true}, notFound}}
		}
		return normal(kindOf(i))
	})
	m := e.storm(w, func(start time.Time) {
		sleepUntil(start.Add(faultAt))
		rt := &trainer.ClusterTrainingRuntime{}
		rt.Name = runtimeTorch
		if err := e.c.Delete(e.ctx, rt); err != nil {
			t.Error(err)
		}
	})
	var jobs trainer.TrainJobList
	if err := e.c.List(e.ctx, &jobs); err != nil {
		t.Fatal(err)
	}
	hasSnapshot := map[int]bool{}
	var inTime, late int
	for i := range jobs.Items {
		if idx := jobIndex(jobs.Items[i].Name); idx >= 0 && kindOf(idx) == kindTorch {
			hasSnapshot[idx] = jobs.Items[i].Status.RuntimeSnapshot != nil
			if hasSnapshot[idx] {
				inTime++
			} else {
				late++
			}
		}
	}
	r := e.finish(w, func(i int) expectation {
		if kindOf(i) == kindTorch && !hasSnapshot[i] {
			return notFound
		}
		return normal(kindOf(i))
	})
	if late == 0 || inTime == 0 {
		t.Logf("the deletion did not fall mid-storm: %d TrainJobs of the deleted runtime had a snapshot, %d did not", inTime, late)
	}
	addFigure(figure{name: "e. runtime deleted at 2 s", makespan: m, base: base, peakRSS: r.peakRSS, maxEvents: r.maxEvents, maxOccurs: r.maxOccurs, cpu: r.cpu, pluginCPU: r.pluginCPU, note: fmt.Sprintf("of its %d TrainJobs, %d ran from their snapshot, %d got RuntimeNotFound", inTime+late, inTime, late), load: harness.LoadAvg()})
}

// garbageAnswer cycles the hostile TrainJobs through the four bad answers.
func garbageAnswer(i int) string {
	return [...]string{"malformed", "huge", "patch", "undeclared"}[(i/5)%4]
}

// wasmAnswer cycles the hostile TrainJobs through the answers of a
// module: the four garbage answers, a Build that loops, panics or grows
// without bound, and a good one.
func wasmAnswer(i int) string {
	return [...]string{"malformed", "huge", "patch", "undeclared", "loop", "panic", "grow", "good"}[(i/5)%8]
}

// wasmBadPoint is the point of the hostile plugin whose answer to a
// TrainJob with answer a is bad, "" for none.
func wasmBadPoint(a string) framework.ExtensionPoint {
	switch a {
	case "good":
		return ""
	case "patch":
		return framework.PointEnforceMLPolicy
	}
	return framework.PointBuild
}

// TestWasmHostileIgnore: the hostile plugin built as WebAssembly and run
// in the controller (a wasm entry, failurePolicy Ignore) answers garbage,
// loops, panics or runs out of memory on most TrainJobs it takes part in,
// and well on the others. Each bad answer is that call's error, skipped
// with a PluginIgnored Event at that point only: the TrainJob completes
// without the plugin's change there and with its change at the point it
// answered well, however long other TrainJobs' calls held the module's
// instances (such a call is retried, never skipped); the good ones get
// everything; the other TrainJobs are untouched, and the controller goes
// on.
func TestWasmHostileIgnore(t *testing.T) {
	base := baselineMakespan(t)
	e := newEnv(t, "wasm-hostile-ignore", setup{hostilePolicy: "Ignore", answer: wasmAnswer, wasm: true})
	e.startController("controller", "")
	expect := func(i int) expectation {
		x := normal(kindOf(i))
		if kindOf(i) != kindHostile {
			return x
		}
		x.onlyIgnored = "none"
		if point := wasmBadPoint(wasmAnswer(i)); point != "" {
			patch := point == framework.PointEnforceMLPolicy
			x.env, x.configMap, x.ignoredEvent, x.onlyIgnored = !patch, patch, true, string(point)
		}
		return x
	}
	w := e.startWatcher(expect)
	m := e.storm(w, nil)
	r := e.finish(w, expect)
	addFigure(figure{name: "g. wasm: garbage, loop, panic, memory, failurePolicy Ignore", makespan: m, base: base, peakRSS: r.peakRSS, maxEvents: r.maxEvents, maxOccurs: r.maxOccurs, cpu: r.cpu, pluginCPU: r.pluginCPU, note: "the hostile plugin as a wasm module in the controller; 1/5 of TrainJobs, 7 in 8 of them answered badly; " + e.wasmNote(r), load: harness.LoadAvg()})
}

// TestWasmHostileFail: the same with failurePolicy Fail. The TrainJobs it
// answers badly get Created=False (JobsBuildFailed) naming the plugin, a
// Warning Event naming it, and nothing built; the others complete.
func TestWasmHostileFail(t *testing.T) {
	base := baselineMakespan(t)
	e := newEnv(t, "wasm-hostile-fail", setup{hostilePolicy: "Fail", answer: wasmAnswer, wasm: true})
	e.startController("controller", "")
	expect := func(i int) expectation {
		if kindOf(i) == kindHostile && wasmBadPoint(wasmAnswer(i)) != "" {
			return expectation{reason: trainer.TrainJobBuildFailedReason, message: hostileName, failedEvent: true}
		}
		return normal(kindOf(i))
	}
	w := e.startWatcher(expect)
	m := e.storm(w, nil)
	r := e.finish(w, expect)
	addFigure(figure{name: "g. wasm: garbage, loop, panic, memory, failurePolicy Fail", makespan: m, base: base, peakRSS: r.peakRSS, maxEvents: r.maxEvents, maxOccurs: r.maxOccurs, cpu: r.cpu, pluginCPU: r.pluginCPU, note: "the 7 in 8 hostile TrainJobs answered badly get Created=False naming the plugin; " + e.wasmNote(r), load: harness.LoadAvg()})
}

// wasmNote says what the wasm host did in a case: the peak of the
// controller's start-up (the module's compilation, or reading it from
// pluginHost.wasmCacheDir), the instances calls ended and the stops for
// a backoff, from the controller's log.
func (e *env) wasmNote(r result) string {
	e.mu.Lock()
	logPath := e.controllers[0].logPath
	e.mu.Unlock()
	data, _ := os.ReadFile(logPath)
	return fmt.Sprintf("start-up: peak RSS %d MiB, CPU %.1f s; %d instances ended by a call, %d stops for a backoff",
		r.startRSS>>20, r.startCPU.Seconds(), strings.Count(string(data), "a call ended an instance of the wasm plugin"),
		strings.Count(string(data), "the wasm plugin is stopped for a backoff: its calls keep ending"))
}

// TestGarbageIgnore: the hostile plugin, failurePolicy Ignore, answers
// garbage to the TrainJobs it takes part in. They complete without the
// plugin's changes at the point that answered garbage (a bad Build: no
// ConfigMap, its Enforce change kept; a bad Enforce: no HOSTILE variable,
// its ConfigMap built), with a PluginIgnored Event naming it; the other
// TrainJobs are untouched.
func TestGarbageIgnore(t *testing.T) {
	base := baselineMakespan(t)
	e := newEnv(t, "garbage-ignore", setup{hostilePolicy: "Ignore", answer: garbageAnswer})
	e.startController("controller", "")
	expect := func(i int) expectation {
		x := normal(kindOf(i))
		if kindOf(i) == kindHostile {
			patch := garbageAnswer(i) == "patch"
			x.env, x.configMap, x.ignoredEvent = !patch, patch, true
		}
		return x
	}
	w := e.startWatcher(expect)
	m := e.storm(w, nil)
	r := e.finish(w, expect)
	addFigure(figure{name: "f. garbage answers, failurePolicy Ignore", makespan: m, base: base, peakRSS: r.peakRSS, maxEvents: r.maxEvents, maxOccurs: r.maxOccurs, cpu: r.cpu, pluginCPU: r.pluginCPU, note: "malformed, 50 MB, 100,000-op patch, undeclared kind; 1/5 of TrainJobs", load: harness.LoadAvg()})
}

// TestGarbageFail: the same with failurePolicy Fail. The TrainJobs it
// takes part in get Created=False (JobsBuildFailed) with a message naming
// the plugin, a Warning Event naming it, and nothing built; the others
// complete.
func TestGarbageFail(t *testing.T) {
	base := baselineMakespan(t)
	e := newEnv(t, "garbage-fail", setup{hostilePolicy: "Fail", answer: garbageAnswer})
	e.startController("controller", "")
	expect := func(i int) expectation {
		if kindOf(i) == kindHostile {
			return expectation{reason: trainer.TrainJobBuildFailedReason, message: hostileName, failedEvent: true}
		}
		return normal(kindOf(i))
	}
	w := e.startWatcher(expect)
	m := e.storm(w, nil)
	r := e.finish(w, expect)
	addFigure(figure{name: "f. garbage answers, failurePolicy Fail", makespan: m, base: base, peakRSS: r.peakRSS, maxEvents: r.maxEvents, maxOccurs: r.maxOccurs, cpu: r.cpu, pluginCPU: r.pluginCPU, note: "the 1/5 of TrainJobs get Created=False naming the plugin", load: harness.LoadAvg()})
}
