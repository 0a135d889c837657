package wasm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/pluginhost"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
)

// waitIdle waits until p has an idle instance: one that replaces an
// instance a call ended starts in the background.
func waitIdle(t *testing.T, p *Plugin) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for len(p.idle) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no instance of %s became idle within a minute", p.opts.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// inCalls waits until n instances of p run and none is idle: n calls
// hold them.
func inCalls(t *testing.T, p *Plugin, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		p.mu.Lock()
		held := len(p.all) == n && len(p.idle) == 0
		p.mu.Unlock()
		if held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls did not hold %d instances of %s within a minute", n, n, p.opts.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// warm starts instances of p until n are idle.
func warm(t *testing.T, p *Plugin, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for len(p.idle) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d instances of %s did not start within a minute", n, p.opts.Name)
		}
		p.grow()
		time.Sleep(10 * time.Millisecond)
	}
}

// hostileCycle runs the hostile plugin's EnforceMLPolicy and Build for a
// TrainJob that asks it for answer, under policy.
func hostileCycle(t *testing.T, p *Plugin, policy frameworkruntime.FailurePolicy, answer string) (frameworkruntime.Ignored, error) {
	t.Helper()
	fw, err := frameworkruntime.New(context.Background(), framework.Registry{}, []frameworkruntime.PluginSpec{{Name: "Hostile", Plugin: p, FailurePolicy: policy}})
	if err != nil {
		t.Fatalf("frameworkruntime.New: %v", err)
	}
	c, err := fw.Current().NewCycle(hostileJob("job-"+answer, answer), framework.PolicyKeys{ML: []string{"hostile"}})
	if err != nil {
		t.Fatalf("NewCycle: %v", err)
	}
	info := hostileInfo()
	if err := c.Enforce(context.Background(), info); err != nil {
		return c.Ignored(), err
	}
	_, err = c.Build(context.Background(), info)
	return c.Ignored(), err
}

// TestNoWaitBehindLoopingCalls: every instance is held by a call that
// loops until its deadline; a new call of another TrainJob does not wait
// for them: within InstanceWait it fails with a *framework.UnavailableError
// that says why, and under Ignore too the cycle returns it instead of
// going on without the plugin.
func TestNoWaitBehindLoopingCalls(t *testing.T) {
	p, _ := startHostile(t, 128<<20, 10*time.Second)
	p.size = 2 // as a budget of two instances would
	var loops sync.WaitGroup
	for range 2 {
		loops.Go(func() { _, _ = p.Client().Build(context.Background(), hostileInfo(), hostileJob("looping", "loop")) })
	}
	defer loops.Wait()
	inCalls(t, p, 2)

	for _, policy := range []frameworkruntime.FailurePolicy{frameworkruntime.FailurePolicyIgnore, frameworkruntime.FailurePolicyFail} {
		start := time.Now()
		ignored, err := hostileCycle(t, p, policy, "good")
		took := time.Since(start)
		if len(ignored) > 0 {
			t.Errorf("%s: ignored %v: a call that got no instance was skipped", policy, ignored)
		}
		var pe *framework.PluginError
		if !errors.As(err, &pe) || pe.Plugin != "Hostile" || pe.Point != framework.PointEnforceMLPolicy || !framework.IsUnavailable(err) {
			t.Fatalf("%s: %v, want an UnavailableError of Hostile's EnforceMLPolicy", policy, err)
		}
		for _, want := range []string{"no instance of the wasm plugin was free within 1s", "all 2 were in other calls or starting", "retried"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the error does not say %q: %v", policy, want, err)
			}
		}
		// The loops hold their instances for 10 s.
		if took > 5*time.Second {
			t.Errorf("%s: the call failed after %s, waiting for the looping calls; want about InstanceWait (%s)", policy, took, InstanceWait)
		}
	}
}

// TestTimedOutInstanceIsNotReused: a call that passes its deadline ends
// its instance, which never serves another call; a new one does.
func TestTimedOutInstanceIsNotReused(t *testing.T) {
	p, _ := startHostile(t, 128<<20, time.Second)
	p.size = 1
	p.mu.Lock()
	var first *instance
	for in := range p.all {
		first = in
	}
	p.mu.Unlock()
	restarts := testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues("Hostile"))

	_, err := p.Client().Build(context.Background(), hostileInfo(), hostileJob("looping", "loop"))
	if err == nil || !strings.Contains(err.Error(), "no answer within callTimeout 1s") {
		t.Fatalf("the looping call: %v, want its deadline", err)
	}
	if framework.IsUnavailable(err) {
		t.Errorf("the looping call's deadline is an UnavailableError; it is the plugin's answer to that call: %v", err)
	}
	p.mu.Lock()
	kept := p.all[first]
	p.mu.Unlock()
	if kept {
		t.Fatal("the instance whose call passed its deadline is still in the pool")
	}
	if got := testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues("Hostile")) - restarts; got != 1 {
		t.Errorf("trainforge_plugin_restarts_total{plugin=Hostile} grew by %v, want 1", got)
	}
	waitIdle(t, p)
	in := <-p.idle
	p.idle <- in
	if in == first {
		t.Fatal("the timed-out instance came back to the pool")
	}
	if _, err := p.Client().Build(context.Background(), hostileInfo(), hostileJob("after", "good")); err != nil {
		t.Errorf("a good call after the deadline: %v", err)
	}
}

// TestDeadlinesStopTheModule: DeadlinesBeforeBackoff calls in a row that
// end at their deadline stop the module for Backoff.Initial: its calls
// fail at once with an UnavailableError, Ready says why (and so the
// readiness of a set where its policy is Fail), trainforge_plugin_down is
// 1, and its idle instances are ended. Taken back, one more deadline
// before an answer stops it again for twice as long; an answer clears it.
func TestDeadlinesStopTheModule(t *testing.T) {
	p, logs := startHostile(t, 128<<20, time.Second)
	p.opts.Backoff = pluginhost.Backoff{Initial: 3 * time.Second, Max: time.Minute}
	down := func() float64 { return testutil.ToFloat64(frameworkruntime.PluginDown.WithLabelValues("Hostile")) }
	var loops atomic.Int32
	loop := func() error {
		// A TrainJob of its own each: the same one would get its answer
		// from Plugin.ended.
		job := hostileJob(fmt.Sprintf("looping-%d", loops.Add(1)), "loop")
		_, err := p.Client().Build(context.Background(), hostileInfo(), job)
		return err
	}
	// One more looping call than it takes, at once: the one that ends
	// after the stop started before it, and does not count again.
	warm(t, p, DeadlinesBeforeBackoff+1)
	var wg sync.WaitGroup
	for i := range DeadlinesBeforeBackoff + 1 {
		wg.Go(func() {
			if err := loop(); err == nil || framework.IsUnavailable(err) {
				t.Errorf("looping call %d: %v, want its deadline", i+1, err)
			}
		})
	}
	wg.Wait()
	err := p.Ready()
	if err == nil || !strings.Contains(err.Error(), "stopped for a backoff of 3s") || !strings.Contains(err.Error(), "3 calls in a row ended at their deadline (callTimeout 1s)") {
		t.Fatalf("Ready after %d deadlines: %v, want the backoff and why", DeadlinesBeforeBackoff, err)
	}
	fw, err := frameworkruntime.New(context.Background(), framework.Registry{}, []frameworkruntime.PluginSpec{{Name: "Hostile", Plugin: p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Current().Ready(); err == nil || !strings.Contains(err.Error(), "plugin Hostile: the wasm plugin is stopped") {
		t.Errorf("the set's readiness (failurePolicy Fail): %v, want the plugin stopped", err)
	}
	if got := down(); got != 1 {
		t.Errorf("trainforge_plugin_down{plugin=Hostile} = %v while stopped, want 1", got)
	}
	if n, _ := p.Instances(); n != 0 {
		t.Errorf("%d instances run while the module is stopped, want none", n)
	}
	if len(logs.Matching(map[string]any{"plugin": "Hostile", "backoff": "3s"})) == 0 {
		t.Errorf("no log line of the stop:\n%s", logs)
	}
	start := time.Now()
	_, err = hostileCycle(t, p, frameworkruntime.FailurePolicyIgnore, "good")
	if !framework.IsUnavailable(err) || !strings.Contains(err.Error(), "stopped for a backoff") || time.Since(start) > time.Second {
		t.Errorf("a call while stopped: %v after %s, want an UnavailableError at once", err, time.Since(start))
	}

	// Taken back on probation: one more deadline stops it for 6s.
	for p.Ready() != nil {
		time.Sleep(50 * time.Millisecond)
	}
	if got := down(); got != 0 {
		t.Errorf("trainforge_plugin_down{plugin=Hostile} = %v once taken back, want 0", got)
	}
	if err := loop(); err == nil || framework.IsUnavailable(err) {
		t.Fatalf("the looping call after the backoff: %v, want its deadline", err)
	}
	if err := p.Ready(); err == nil || !strings.Contains(err.Error(), "backoff of 6s") {
		t.Fatalf("Ready after one more deadline: %v, want a backoff of 6s", err)
	}

	// An answer clears it: the next stop is Backoff.Initial again.
	p.mu.Lock()
	p.downUntil = time.Time{}
	p.mu.Unlock()
	if _, err := hostileCycle(t, p, frameworkruntime.FailurePolicyFail, "good"); err != nil {
		t.Fatalf("a good call once taken back: %v", err)
	}
	p.mu.Lock()
	got := [2]any{p.strikes, p.backoff}
	p.mu.Unlock()
	if diff := cmp.Diff([2]any{0, time.Duration(0)}, got); diff != "" {
		t.Errorf("strikes and backoff after an answer (-want +got):\n%s", diff)
	}
}

// TestBudgetFor shares pluginHost.wasmMemoryBudget between the wasm
// entries: one instance each first, in configuration order, then one
// more each in turn up to maxInstances; an entry with no room gets none
// and the figures of the others.
func TestBudgetFor(t *testing.T) {
	entry := func(name, memory string, maxInstances int32) configv1alpha1.PluginConfig {
		return configv1alpha1.PluginConfig{Name: name, Wasm: &configv1alpha1.WasmPlugin{
			Module: "/m.wasm", SHA256: strings.Repeat("ab", 32),
			MemoryLimit: ptr.To(resource.MustParse(memory)), MaxInstances: &maxInstances,
		}}
	}
	for _, tc := range []struct {
		name    string
		budget  string
		entries []configv1alpha1.PluginConfig
		want    []Budget // per entry, in order; Torch (not wasm) is left out
	}{
		{
			name:    "the default budget holds two default instances",
			budget:  "256Mi",
			entries: []configv1alpha1.PluginConfig{entry("A", "128Mi", 4)},
			want:    []Budget{{TotalBytes: 256 << 20, Instances: 2}},
		},
		{
			name:    "room for all it asks",
			budget:  "1Gi",
			entries: []configv1alpha1.PluginConfig{entry("A", "64Mi", 4), {Name: "Torch"}, entry("B", "128Mi", 2)},
			want:    []Budget{{TotalBytes: 1 << 30, Instances: 4}, {TotalBytes: 1 << 30, Instances: 2}},
		},
		{
			name:    "shared in turn",
			budget:  "512Mi",
			entries: []configv1alpha1.PluginConfig{entry("A", "128Mi", 16), entry("B", "64Mi", 16)},
			// A 1, B 1 (320Mi left); A 2, B 2 (128Mi left); A 3 (none left).
			want: []Budget{{TotalBytes: 512 << 20, Instances: 3}, {TotalBytes: 512 << 20, Instances: 2}},
		},
		{
			name:    "no room for the third",
			budget:  "256Mi",
			entries: []configv1alpha1.PluginConfig{entry("A", "128Mi", 4), entry("B", "128Mi", 4), entry("C", "64Mi", 4)},
			want: []Budget{{TotalBytes: 256 << 20, Instances: 1}, {TotalBytes: 256 << 20, Instances: 1},
				{TotalBytes: 256 << 20, Held: "A: 1 × 128Mi, B: 1 × 128Mi"}},
		},
		{
			name:    "an entry larger than the budget leaves the rest to the others",
			budget:  "256Mi",
			entries: []configv1alpha1.PluginConfig{entry("Big", "512Mi", 1), entry("A", "64Mi", 8)},
			want:    []Budget{{TotalBytes: 256 << 20, Held: "A: 4 × 64Mi"}, {TotalBytes: 256 << 20, Instances: 4}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &configv1alpha1.Configuration{Plugins: tc.entries}
			cfg.PluginHost.WasmMemoryBudget = ptr.To(resource.MustParse(tc.budget))
			configv1alpha1.SetDefaults(cfg)
			var got []Budget
			for i, e := range cfg.Plugins {
				if e.Wasm != nil {
					got = append(got, OptionsFor(cfg, i, logr.Discard()).Budget)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBudgetRefusesAModule: a plugin for which the budget holds not one
// instance is refused before its module is read, naming the plugin, the
// budget, its memory limit and what the others hold.
func TestBudgetRefusesAModule(t *testing.T) {
	opts, _ := options(wasmtest.Module{Path: "/nonexistent/c.wasm", SHA256: strings.Repeat("ab", 32)}, "C")
	opts.MemoryLimitBytes = 64 << 20
	opts.Budget = Budget{TotalBytes: 256 << 20, Held: "A: 1 × 128Mi, B: 1 × 128Mi"}
	_, err := Start(context.Background(), opts)
	want := `wasm plugin "C": pluginHost.wasmMemoryBudget 256Mi has no room for one instance of its memoryLimit 64Mi: ` +
		`the wasm plugins before it in the configuration hold it all (A: 1 × 128Mi, B: 1 × 128Mi); ` +
		`lower the memoryLimit of the wasm plugins, or raise pluginHost.wasmMemoryBudget (and the controller's memory limit with it)`
	if err == nil || err.Error() != want {
		t.Errorf("Start: %v\nwant: %s", err, want)
	}
}

// TestBudgetLimitsInstances: a plugin that asks for more instances than
// its share of the budget runs no more than its share, however many calls
// come at once.
func TestBudgetLimitsInstances(t *testing.T) {
	m := wasmtest.Build(t, everypointPkg)
	opts, _ := options(m, "EveryPoint")
	opts.MaxInstances = 8
	opts.Budget = Budget{TotalBytes: 2 * opts.MemoryLimitBytes, Instances: 2}
	p := start(t, opts)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			// A call may find both instances busy; that is its error.
			_, _ = p.Client().Build(context.Background(), testInfo(), testJob("job-"+string(rune('a'+i))))
		})
	}
	wg.Wait()
	if n, _ := p.Instances(); n > 2 {
		t.Errorf("%d instances, want at most the budget's 2", n)
	}
	if cap(p.idle) != 2 {
		t.Errorf("a pool of %d, want the budget's 2", cap(p.idle))
	}
}

// TestEndedCallIsNotMadeAgain: a call that ended its instance (here its
// deadline) is remembered by its input: the same TrainJob (even with
// another status) and Info get the same error at once, without an
// instance; another TrainJob is called; after Backoff.Max the same input
// is called again.
func TestEndedCallIsNotMadeAgain(t *testing.T) {
	p, _ := startHostile(t, 128<<20, time.Second)
	restarts := func() float64 { return testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues("Hostile")) }
	// build returns how long the call took, how many instances it ended
	// and its error.
	build := func(job *trainer.TrainJob) (time.Duration, float64, error) {
		before, start := restarts(), time.Now()
		_, err := p.Client().Build(context.Background(), hostileInfo(), job)
		return time.Since(start), restarts() - before, err
	}
	job := hostileJob("looping", "loop")
	_, ended, first := build(job)
	if first == nil || ended != 1 {
		t.Fatalf("the looping call: %v, %v instances ended; want its deadline, and its instance ended", first, ended)
	}
	job.Status.Conditions = []metav1.Condition{{Type: "Created", Status: metav1.ConditionFalse, Reason: "JobsBuildFailed"}}
	took, ended, again := build(job)
	if again == nil || again.Error() != first.Error() || ended != 0 || took > 500*time.Millisecond {
		t.Errorf("the same TrainJob again: %v after %s, %v instances ended; want %q at once, no instance", again, took, ended, first)
	}
	if _, ended, err := build(hostileJob("other", "loop")); err == nil || ended != 1 {
		t.Errorf("another looping TrainJob: %v, %v instances ended; want it called", err, ended)
	}
	p.ended.TTL = 0
	if _, ended, err := build(job); err == nil || ended != 1 {
		t.Errorf("the same TrainJob after Backoff.Max: %v, %v instances ended; want it called again", err, ended)
	}
}

// TestRefusedAnswerIsNotMadeAgain: an answer refused unread for its size
// is remembered by its input as an ended call is: the same TrainJob gets
// the same error without a call of the module (which would build the same
// megabytes again); another TrainJob is called.
func TestRefusedAnswerIsNotMadeAgain(t *testing.T) {
	p, _ := startHostile(t, 512<<20, time.Minute)
	var calls atomic.Int32
	p.callCPU = func() func() (time.Duration, bool) {
		calls.Add(1)
		return threadCPU()
	}
	build := func(job *trainer.TrainJob) (int32, error) {
		before := calls.Load()
		_, err := p.Client().Build(context.Background(), hostileInfo(), job)
		return calls.Load() - before, err
	}
	job := hostileJob("huge", "huge")
	n, first := build(job)
	if first == nil || !strings.Contains(first.Error(), "more than pluginHost.limits.maxMessageBytes") || n != 1 {
		t.Fatalf("the huge answer: %v after %d calls; want it refused for its size after one", first, n)
	}
	if n, again := build(job); again == nil || again.Error() != first.Error() || n != 0 {
		t.Errorf("the same TrainJob again: %v after %d calls; want %q without a call", again, n, first)
	}
	if n, err := build(hostileJob("other", "huge")); err == nil || n != 1 {
		t.Errorf("another TrainJob: %v after %d calls; want it called", err, n)
	}
}

// TestStarvedCallIsRetried: a call that reaches its deadline having had
// almost none of it on a CPU (the controller's process short of CPU; the
// clock of the call's CPU time says so here) is no answer of the module's.
// The first such call of an input is a *framework.UnavailableError, which
// retries the TrainJob under either failure policy; it is not remembered
// with the ended calls nor counted towards a backoff, so the next call of
// the same input is made again. A second starved call of that input counts
// as the module's: a module cannot hide a loop behind a busy machine.
func TestStarvedCallIsRetried(t *testing.T) {
	p, _ := startHostile(t, 128<<20, time.Second)
	p.callCPU = func() func() (time.Duration, bool) {
		return func() (time.Duration, bool) { return 5 * time.Millisecond, true }
	}
	restarts := func() float64 { return testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues("Hostile")) }
	build := func(job *trainer.TrainJob) (float64, int, error) {
		before := restarts()
		_, err := p.Client().Build(context.Background(), hostileInfo(), job)
		p.mu.Lock()
		defer p.mu.Unlock()
		return restarts() - before, p.strikes, err
	}
	job := hostileJob("looping", "loop")

	ended, strikes, err := build(job)
	if !framework.IsUnavailable(err) || !strings.Contains(err.Error(), "short of CPU; the first time for this input") {
		t.Fatalf("the first starved call: %v; want an UnavailableError that says the controller was short of CPU", err)
	}
	if ended != 1 || strikes != 0 {
		t.Errorf("the first starved call ended %v instances and left %d strikes; want 1 (it was interrupted) and none", ended, strikes)
	}

	ended, strikes, err = build(job)
	if err == nil || framework.IsUnavailable(err) || !strings.Contains(err.Error(), "short of CPU again for this input") {
		t.Fatalf("the second starved call of the input: %v; want the module's failure", err)
	}
	if ended != 1 || strikes != 1 {
		t.Errorf("the second starved call ended %v instances and left %d strikes; want it called (1) and counted (1)", ended, strikes)
	}

	if ended, _, again := build(job); again == nil || again.Error() != err.Error() || ended != 0 {
		t.Errorf("the same input a third time: %v, %v instances ended; want %q at once", again, ended, err)
	}

	// With the CPU the module really had, a loop spends its deadline on a
	// CPU: the module's answer at once.
	p.callCPU = threadCPU
	if _, _, err := build(hostileJob("other", "loop")); err == nil || framework.IsUnavailable(err) {
		t.Errorf("a loop measured by its thread's CPU time: %v; want the module's failure", err)
	}
}
