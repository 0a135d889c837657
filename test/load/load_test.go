package main

import (
	"github.com/trainforge/trainforge/test/load/harness"

	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
