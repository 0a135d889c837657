package main

import (
	"github.com/trainforge/trainforge/test/load/harness"

	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
)

func TestReadAudit(t *testing.T) {
	from := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	got, err := readAudit("testdata/audit.log", harness.ControllerUser, from, from.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// The event at 10:00:09 is outside the window, the create of
	// someone-else is another user's, and the watch counts once.
	want := requests{
		byVerb:     map[string]int{"patch": 1, "update": 2, "watch": 1},
		byResource: map[string]int{"patch jobsets": 1, "update trainjobs/status": 2, "watch trainjobs": 1},
		conflicts:  1,
		total:      4,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(requests{})); diff != "" {
		t.Errorf("readAudit (-want +got):\n%s", diff)
	}
	if w := got.writes(); w != 3 {
		t.Errorf("writes() = %d, want 3", w)
	}
	if s := perJob(got.byResource, 2); s != "update trainjobs/status 1.00 · patch jobsets 0.50 · watch trainjobs 0.50" {
		t.Errorf("perJob = %q", s)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 90: 90 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := percentile(d, p); got != want {
			t.Errorf("percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile(nil) = %v", got)
	}
}

func TestRowSpecs(t *testing.T) {
	o := &options{rows: "floor, in-process,kubeflow", compare: compareFlags{"kubeflow=/tmp/manager --kubeconfig {kubeconfig}"}}
	rows, err := o.rowSpecs()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[2].kind != rowCommand || rows[2].command != "/tmp/manager --kubeconfig {kubeconfig}" {
		t.Errorf("rowSpecs = %+v", rows)
	}
	o.rows = "floor,nope"
	if _, err := o.rowSpecs(); err == nil {
		t.Error("an unknown row was accepted")
	}
}

// isDone reports whether the tracker says the row is done, without waiting.
func isDone(t *tracker) bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

func TestTrackerDoneWhen(t *testing.T) {
	for _, tc := range []struct {
		name string
		want doneWhen
		// doneOnJobSets: done once every JobSet is seen, before any
		// Created condition.
		doneOnJobSets bool
	}{
		{"floor", jobSetsOnly, true},
		{"another controller (-compare)", jobSetsCreatedIfSet, true},
		{"trainforge", jobSetsAndCreated, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker(3, tc.want)
			at := time.Now()
			for i := range 3 {
				if isDone(tr) {
					t.Fatalf("done after %d of 3 JobSets", i)
				}
				tr.seen(jobName(i), false, at)
			}
			if got := isDone(tr); got != tc.doneOnJobSets {
				t.Fatalf("done with every JobSet and no Created condition = %v, want %v", got, tc.doneOnJobSets)
			}
			for i := range 3 {
				tr.seen(jobName(i), true, at)
			}
			if !isDone(tr) {
				t.Fatal("not done with every JobSet and every Created condition")
			}
			if err := tr.wait(context.Background()); err != nil {
				t.Errorf("wait: %v", err)
			}
		})
	}
}

func TestTrackerTimeoutSaysHowFarItGot(t *testing.T) {
	for _, tc := range []struct {
		want doneWhen
		msg  string
	}{
		{jobSetsOnly, "2 of 3 JobSets seen: context canceled"},
		{jobSetsCreatedIfSet, "2 of 3 JobSets seen (and 1 Created conditions, which this row does not wait for): context canceled"},
		{jobSetsAndCreated, "2 of 3 JobSets and 1 of 3 Created conditions seen: context canceled"},
	} {
		tr := newTracker(3, tc.want)
		at := time.Now()
		tr.seen(jobName(0), false, at)
		tr.seen(jobName(2), false, at)
		tr.seen(jobName(2), true, at)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := tr.wait(ctx)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("want %v: wait = %v, want %q", tc.want, err, tc.msg)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("want %v: wait = %v, which is not context.Canceled", tc.want, err)
		}
	}
}

func TestTrackerCountsEachTrainJobOnce(t *testing.T) {
	tr := newTracker(2, jobSetsAndCreated)
	first := time.Now()
	tr.seen(jobName(0), false, first)
	tr.seen(jobName(0), false, first.Add(time.Second)) // an update, or a relist
	tr.seen("other-job", false, first)
	tr.seen(jobName(2), false, first) // beyond n
	tr.seen(jobName(0), true, first)
	tr.seen(jobName(0), true, first.Add(time.Second))
	if tr.jobSets != 1 || tr.createdSeen() != 1 {
		t.Errorf("%d JobSets and %d Created conditions counted, want 1 and 1", tr.jobSets, tr.createdSeen())
	}
	if !tr.jobSet[0].Equal(first) {
		t.Errorf("JobSet first seen at %v, want %v (the first time)", tr.jobSet[0], first)
	}
}

func TestTrackerLatenciesWithoutEveryCreated(t *testing.T) {
	sent := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	since := []time.Time{sent, sent}
	tr := newTracker(2, jobSetsCreatedIfSet)
	tr.seen(jobName(0), false, sent.Add(1*time.Second))
	tr.seen(jobName(1), false, sent.Add(2*time.Second))
	tr.seen(jobName(0), true, sent.Add(3*time.Second))

	// One Created of two: the latencies of the fast half would look like
	// the whole row's, so there are none; the makespan ends at the last
	// JobSet.
	jobSet, created := tr.latencies(since)
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, jobSet); diff != "" {
		t.Errorf("JobSet latencies (-want +got):\n%s", diff)
	}
	if created != nil {
		t.Errorf("Created latencies = %v with one Created condition of two, want none", created)
	}
	if got, want := tr.last(), sent.Add(2*time.Second); !got.Equal(want) {
		t.Errorf("last = %v, want the last JobSet %v", got, want)
	}

	tr.seen(jobName(1), true, sent.Add(4*time.Second))
	_, created = tr.latencies(since)
	if diff := cmp.Diff([]time.Duration{3 * time.Second, 4 * time.Second}, created); diff != "" {
		t.Errorf("Created latencies (-want +got):\n%s", diff)
	}
	if got, want := tr.last(), sent.Add(4*time.Second); !got.Equal(want) {
		t.Errorf("last = %v, want the last Created condition %v", got, want)
	}
}

func TestCreatedCell(t *testing.T) {
	all := []time.Duration{time.Second, 2 * time.Second}
	for _, tc := range []struct {
		name string
		r    result
		want string
	}{
		{"every Created seen", result{n: 2, procs: 1, created: all, createdSeen: 2}, "1.00 / 2.00 / 2.00"},
		{"the floor", result{n: 2}, "–"},
		{"a controller that sets no Created", result{n: 2, procs: 1}, "n/a"},
		{"a controller that set some", result{n: 2, procs: 1, createdSeen: 1}, "n/a (1 of 2)"},
	} {
		if got := createdCell(tc.r, pcts); got != tc.want {
			t.Errorf("%s: createdCell = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRowsWaitForCreatedOnlyFromTrainforge(t *testing.T) {
	o := &options{rows: "floor,design-floor,in-process,external,kubeflow", compare: compareFlags{"kubeflow=/tmp/manager"}}
	rows, err := o.rowSpecs()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]doneWhen{}
	for _, r := range rows {
		got[r.name] = r.doneWhen()
	}
	want := map[string]doneWhen{"floor": jobSetsOnly, "design-floor": jobSetsAndCreated, "in-process": jobSetsAndCreated, "external": jobSetsAndCreated, "kubeflow": jobSetsCreatedIfSet}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("doneWhen by row (-want +got):\n%s", diff)
	}
}

func TestRowSpecsReady(t *testing.T) {
	o := &options{
		rows:    "in-process,kubeflow,other",
		compare: compareFlags{"kubeflow=/tmp/manager", "other=/tmp/other"},
		ready:   compareFlags{"kubeflow=http://127.0.0.1:18081/readyz"},
	}
	rows, err := o.rowSpecs()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r.name] = r.ready
	}
	if diff := cmp.Diff(map[string]string{"in-process": "", "kubeflow": "http://127.0.0.1:18081/readyz", "other": ""}, got); diff != "" {
		t.Errorf("readiness URL by row (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"nope=http://127.0.0.1:1/readyz", "kubeflow=", "http://127.0.0.1:1/readyz"} {
		o.ready = compareFlags{bad}
		if _, err := o.rowSpecs(); err == nil {
			t.Errorf("-ready %q was accepted", bad)
		}
	}
}

func TestMedianAndSpread(t *testing.T) {
	s := time.Second
	if got := median([]time.Duration{3 * s, 1 * s, 2 * s}); got != 2*s {
		t.Errorf("median of 3 = %v", got)
	}
	if got := median([]time.Duration{4 * s, 1 * s, 2 * s, 3 * s}); got != 2500*time.Millisecond {
		t.Errorf("median of 4 = %v", got)
	}
	if got := spread([]time.Duration{3 * s, 1 * s, 2 * s}, secs); got != "2.00 (1.00–3.00)" {
		t.Errorf("spread = %q", got)
	}
	if got := spread(nil, secs); got != "–" {
		t.Errorf("spread of none = %q", got)
	}
}

// Each row is compared with the floors of its own round, and the medians'
// ratio is of medians, with the range of the per-round ratios.
func TestAgainstFloorsOfTheSameRound(t *testing.T) {
	s := time.Second
	results := []result{
		{name: "design-floor", kind: rowDesignFloor, round: 1, makespan: 2 * s},
		{name: "in-process", kind: rowTrainforge, round: 1, makespan: 4 * s},
		{name: "design-floor", kind: rowDesignFloor, round: 2, makespan: 4 * s},
		{name: "in-process", kind: rowTrainforge, round: 2, makespan: 6 * s},
		{name: "design-floor", kind: rowDesignFloor, round: 3, err: errors.New("broken")},
		{name: "in-process", kind: rowTrainforge, round: 3, makespan: 5 * s},
	}
	againstFloors(results)
	var got []time.Duration
	for _, r := range results {
		got = append(got, r.designFloor)
	}
	if diff := cmp.Diff([]time.Duration{2 * s, 2 * s, 4 * s, 4 * s, 0, 0}, got); diff != "" {
		t.Errorf("design floors (-want +got):\n%s", diff)
	}
	var inProcess []result
	for _, r := range results {
		if r.name == "in-process" {
			inProcess = append(inProcess, r)
		}
	}
	// Rounds 1 and 2 only (round 3 has no design floor): medians 5 s
	// against 3 s; per round 2.00× and 1.50×.
	if got := ratioSpread(inProcess, func(r result) time.Duration { return r.designFloor }); got != "1.67× (1.50–2.00×)" {
		t.Errorf("ratioSpread = %q", got)
	}
}

// TestWasmRowConfig checks the wasm row's configuration: every built-in
// a wasm plugin of the module, with its checksum and the cache directory,
// as the controller decodes and validates it.
func TestWasmRowConfig(t *testing.T) {
	o := &options{rows: "wasm", wasmModule: "/bin/wasm/trainforge-builtin-plugin.wasm", wasmSHA256: strings.Repeat("ab", 32), out: "/out"}
	rows, err := o.rowSpecs()
	if err != nil || len(rows) != 1 || !rows[0].wasm || rows[0].kind != rowTrainforge {
		t.Fatalf("rowSpecs = %+v, %v", rows, err)
	}
	cfg, err := configv1alpha1.Decode([]byte(o.trainforgeConfig(rows[0], "127.0.0.1:1")))
	if err != nil {
		t.Fatal(err)
	}
	configv1alpha1.SetDefaults(cfg)
	if errs := configv1alpha1.Validate(cfg, func(string) bool { return true }); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	var names []string
	for _, p := range cfg.Plugins {
		names = append(names, p.Name)
		if p.Wasm == nil || p.Wasm.Module != o.wasmModule || p.Wasm.SHA256 != o.wasmSHA256 || len(p.Wasm.Args) != 1 || p.Wasm.Args[0] != p.Name {
			t.Errorf("plugin %s: wasm %+v, want the module, its checksum and args [%s]", p.Name, p.Wasm, p.Name)
		}
	}
	if got := strings.Join(names, ","); got != "PlainML,Torch,JobSet,Coscheduling" {
		t.Errorf("plugins %s", got)
	}
	if cfg.PluginHost.WasmCacheDir != "/out/wasm-cache" {
		t.Errorf("pluginHost.wasmCacheDir %q, want /out/wasm-cache", cfg.PluginHost.WasmCacheDir)
	}

	// -wasm-cache-dir: a directory that outlives -out, which -instructions
	// refuses.
	o.wasmCache = "/cache/wasm"
	if cfg, err = configv1alpha1.Decode([]byte(o.trainforgeConfig(rows[0], "127.0.0.1:1"))); err != nil {
		t.Fatal(err)
	}
	if cfg.PluginHost.WasmCacheDir != "/cache/wasm" {
		t.Errorf("with -wasm-cache-dir, pluginHost.wasmCacheDir %q, want /cache/wasm", cfg.PluginHost.WasmCacheDir)
	}
	if _, err := parseFlags([]string{"-instructions", "-wasm-cache-dir", "/cache/wasm"}); err == nil || !strings.Contains(err.Error(), "-wasm-cache-dir with -instructions") {
		t.Errorf("-instructions with -wasm-cache-dir: %v, want an error naming both", err)
	}
}

// A run whose rows failed says why each did, not only where the logs are:
// a test's -out is deleted when it ends.
func TestRowsFailed(t *testing.T) {
	results := []result{
		{label: "floor"},
		{label: "in-process", err: errors.New("the controller exited: exit status 2; the end of its log, /out/in-process/controller.log:\npanic: boom")},
		{label: "external", err: errors.New("waiting for the controller to go idle: context deadline exceeded")},
	}
	want := "row in-process failed: the controller exited: exit status 2; the end of its log, /out/in-process/controller.log:\npanic: boom\n" +
		"row external failed: waiting for the controller to go idle: context deadline exceeded\n" +
		"(the rows' logs are in /out)"
	if diff := cmp.Diff(want, fmt.Sprint(rowsFailed(results, "/out"))); diff != "" {
		t.Errorf("rowsFailed (-want +got):\n%s", diff)
	}
	if err := rowsFailed(results[:1], "/out"); err != nil {
		t.Errorf("rowsFailed of rows that did not fail = %v", err)
	}
}
