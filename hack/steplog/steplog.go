// Package steplog reads the step log of examples/realjobs/train_ddp.py
// (--step-log): rank 0's own record of each start, step and SIGTERM, with
// its wall-clock time. It is what the goodput account of a TrainJob is
// checked against, by the e2e suite and by make demo: the script's log
// knows to the millisecond which steps ran and which ran twice, the
// account knows only what the script reported.
package steplog

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Run is one start of the script: the step it resumed from, the steps
// it ended and when (seconds since the epoch), and whether it stopped on
// SIGTERM.
type Run struct {
	From    int
	Steps   []int
	Times   []float64
	SIGTERM bool
}

// Read parses the step log at path.
func Read(path string) ([]Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	runs, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return runs, nil
}

// Parse reads a step log: lines of "start|step|sigterm TIME STEP".
func Parse(r io.Reader) ([]Run, error) {
	var runs []Run
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d %q: want EVENT TIME STEP", n, line)
		}
		t, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: the time: %w", n, line, err)
		}
		step, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("line %d %q: the step: %w", n, line, err)
		}
		if f[0] != "start" && len(runs) == 0 {
			return nil, fmt.Errorf("line %d %q: a %s before any start", n, line, f[0])
		}
		switch f[0] {
		case "start":
			runs = append(runs, Run{From: step})
		case "step":
			r := &runs[len(runs)-1]
			r.Steps, r.Times = append(r.Steps, step), append(r.Times, t)
		case "sigterm":
			runs[len(runs)-1].SIGTERM = true
		default:
			return nil, fmt.Errorf("line %d %q: the event is %q; want start, step or sigterm", n, line, f[0])
		}
	}
	return runs, sc.Err()
}

// KeptSeconds is the training time whose progress was kept: in each run,
// from its first step to the last step the next run did not do again
// (the next run resumes after its checkpoint). The time between two runs,
// and a run's steps done again by the next, are not kept.
func KeptSeconds(runs []Run) float64 {
	kept := 0.0
	for i, r := range runs {
		if len(r.Steps) == 0 {
			continue
		}
		last := len(r.Steps) - 1
		if i+1 < len(runs) {
			for last > 0 && r.Steps[last] > runs[i+1].From {
				last--
			}
		}
		kept += r.Times[last] - r.Times[0]
	}
	return kept
}

// RedoneSteps are the steps done more than once, in the order they were
// done again.
func RedoneSteps(runs []Run) []int {
	seen := map[int]int{}
	var again []int
	for _, r := range runs {
		for _, s := range r.Steps {
			seen[s]++
			if seen[s] == 2 {
				again = append(again, s)
			}
		}
	}
	return again
}
