package steplog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A log of three runs: a failure after step 4 (checkpoint at 2), a
// SIGTERM after step 5 (checkpointed there), and the last run.
const threeRuns = `start 100.000 0
step 101.000 1
step 102.000 2
step 103.000 3
step 104.000 4
start 110.000 2
step 111.000 3
step 112.000 4
step 113.000 5
sigterm 113.500 5
start 120.000 5
step 121.000 6
step 122.000 7
`

func TestParse(t *testing.T) {
	runs, err := Parse(strings.NewReader(threeRuns))
	if err != nil {
		t.Fatal(err)
	}
	want := []Run{
		{From: 0, Steps: []int{1, 2, 3, 4}, Times: []float64{101, 102, 103, 104}},
		{From: 2, Steps: []int{3, 4, 5}, Times: []float64{111, 112, 113}, SIGTERM: true},
		{From: 5, Steps: []int{6, 7}, Times: []float64{121, 122}},
	}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	// Run 1 keeps steps 1..2 (101 → 102: 1 s), run 2 all of its own
	// (111 → 113: 2 s), run 3 (121 → 122: 1 s).
	if got := KeptSeconds(runs); got != 4 {
		t.Errorf("KeptSeconds = %v, want 4", got)
	}
	if diff := cmp.Diff([]int{3, 4}, RedoneSteps(runs)); diff != "" {
		t.Errorf("RedoneSteps (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ log, want string }{
		{"step 1.0 1\n", `line 1 "step 1.0 1": a step before any start`},
		{"start 1.0 0\nstep x 1\n", `line 2 "step x 1": the time`},
		{"start 1.0 0\nstep 2.0 one\n", `line 2 "step 2.0 one": the step`},
		{"start 1.0 0\nstop 2.0 1\n", `the event is "stop"; want start, step or sigterm`},
		{"start 1.0\n", `line 1 "start 1.0": want EVENT TIME STEP`},
	} {
		_, err := Parse(strings.NewReader(tc.log))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.log, err, tc.want)
		}
	}
}
