package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// result is what one row measured.
type result struct {
	// name is the row's name in -rows; label the table's (with its round
	// when there are several).
	name, label string
	kind        rowKind
	round       int
	n           int
	err         error
	// floor and designFloor are the makespans of the same round's floor
	// and design-floor rows, when they ran and did not fail.
	floor, designFloor time.Duration
	// makespan is from the first create to the last JobSet or Created
	// condition seen (restart mode: from the controller's start).
	makespan time.Duration
	// created is empty unless every TrainJob's Created condition was
	// seen; createdSeen counts them (another controller may set none).
	jobSet, created   []time.Duration
	createdSeen       int
	cpu               time.Duration
	serverCPU         time.Duration
	peakRSS           int64
	procs             int
	req               requests
	loadBefore, after string
	// Restart mode, the second start with every TrainJob up to date.
	settle    time.Duration
	settleReq requests
	settleCPU time.Duration
	// settleWindow is when the second start ran, to count its requests.
	settleWindow [2]time.Time
	// instr is what cachegrind counted (-instructions; nil for the
	// floors and without it).
	instr *instructions
}

// percentile returns the p-th percentile (0 < p <= 100), nearest rank.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	k := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(k, 0), len(s)-1)]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func pcts(d []time.Duration) string {
	if len(d) == 0 {
		return "–"
	}
	return secs(percentile(d, 50)) + " / " + secs(percentile(d, 90)) + " / " + secs(percentile(d, 99))
}

func mib(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }

func ratio(d, floor time.Duration) string {
	if floor <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", d.Seconds()/floor.Seconds())
}

// againstFloors gives each result the makespans of its round's floor and
// design floor: a row is compared with the floors run beside it, not with
// those of another round, minutes away on a machine whose speed drifts.
func againstFloors(results []result) {
	floors := map[int]time.Duration{}
	designs := map[int]time.Duration{}
	for _, r := range results {
		if r.err != nil {
			continue
		}
		switch r.kind {
		case rowFloor:
			floors[r.round] = r.makespan
		case rowDesignFloor:
			designs[r.round] = r.makespan
		}
	}
	for i := range results {
		results[i].floor = floors[results[i].round]
		results[i].designFloor = designs[results[i].round]
	}
}

// createdCell is a row's 'to Created' cell: the floor has no controller
// (–), and a controller that did not set the condition on every TrainJob
// (another operator, through -compare) gets n/a, with how many it set.
func createdCell(r result, format func([]time.Duration) string) string {
	switch {
	case len(r.created) == r.n:
		return format(r.created)
	case r.procs == 0:
		return "–"
	case r.createdSeen == 0:
		return "n/a"
	default:
		return fmt.Sprintf("n/a (%d of %d)", r.createdSeen, r.n)
	}
}

func p99(d []time.Duration) string { return secs(percentile(d, 99)) }

// columns joins a table row's cells before and after the instructions
// column, with cell in it when instr (-instructions): the column is only in
// the tables of a run that counts instructions.
func columns(instr bool, before []string, cell string, after ...string) []string {
	out := slices.Clone(before)
	if instr {
		out = append(out, cell)
	}
	return append(out, after...)
}

// printHeader prints a table's header: the row's name left-aligned, the
// figures right-aligned.
func printHeader(w io.Writer, names []string) {
	printCells(w, names)
	align := slices.Repeat([]string{"--:"}, len(names))
	align[0] = "---"
	fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
}

func printCells(w io.Writer, cells []string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

// printBurst prints the burst table; instr adds the instructions column.
func printBurst(w io.Writer, results []result, instr bool) {
	printHeader(w, columns(instr,
		[]string{"row", "makespan s", "jobs/s", "× floor", "× design floor", "to JobSet p50 / p90 / p99 s", "to Created p50 / p90 / p99 s", "CPU s", "CPU ms/job"},
		"M instructions/job",
		"peak RSS MiB", "API server + etcd CPU s", "requests/job", "writes/job", "conflicts", "load 1m before → after"))
	for _, r := range results {
		if r.err != nil {
			fmt.Fprintf(w, "| %s | failed: %s |\n", r.label, oneLine(r.err))
			continue
		}
		cpu, perJobCPU, rss := "–", "–", "–"
		if r.procs > 0 {
			cpu = secs(r.cpu)
			perJobCPU = fmt.Sprintf("%.2f", float64(r.cpu.Microseconds())/1000/float64(r.n))
			rss = mib(r.peakRSS)
			if r.procs > 1 {
				rss += fmt.Sprintf(" (%d procs)", r.procs)
			}
		}
		printCells(w, columns(instr,
			[]string{r.label, secs(r.makespan), fmt.Sprintf("%.0f", float64(r.n)/r.makespan.Seconds()), ratio(r.makespan, r.floor), ratio(r.makespan, r.designFloor),
				pcts(r.jobSet), createdCell(r, pcts), cpu, perJobCPU},
			instructionsCell(r),
			rss, secs(r.serverCPU), fmt.Sprintf("%.2f", float64(r.req.total)/float64(r.n)), fmt.Sprintf("%.2f", float64(r.req.writes())/float64(r.n)),
			fmt.Sprint(r.req.conflicts), r.loadBefore+" → "+r.after))
	}
	printRequests(w, results, func(r result) requests { return r.req })
}

// printRestart prints the restart table; instr adds the instructions
// column.
func printRestart(w io.Writer, results []result, instr bool) {
	printHeader(w, columns(instr,
		[]string{"row", "all JobSets after start s", "× floor", "× design floor", "to Created p99 s", "CPU s", "CPU ms/job"},
		"M instructions/job",
		"peak RSS MiB", "API server + etcd CPU s", "requests/job", "conflicts", "restarted up to date: idle after s", "its writes", "its CPU s", "load 1m before → after"))
	for _, r := range results {
		if r.err != nil {
			fmt.Fprintf(w, "| %s | failed: %s |\n", r.label, oneLine(r.err))
			continue
		}
		cpu, perJobCPU, rss, settle, settleWrites, settleCPU := "–", "–", "–", "–", "–", "–"
		if r.procs > 0 {
			cpu = secs(r.cpu)
			perJobCPU = fmt.Sprintf("%.2f", float64(r.cpu.Microseconds())/1000/float64(r.n))
			rss = mib(r.peakRSS)
			if r.procs > 1 {
				rss += fmt.Sprintf(" (%d procs)", r.procs)
			}
			settle, settleWrites, settleCPU = secs(r.settle), fmt.Sprint(r.settleReq.writes()), secs(r.settleCPU)
		}
		printCells(w, columns(instr,
			[]string{r.label, secs(r.makespan), ratio(r.makespan, r.floor), ratio(r.makespan, r.designFloor), createdCell(r, p99), cpu, perJobCPU},
			instructionsCell(r),
			rss, secs(r.serverCPU), fmt.Sprintf("%.2f", float64(r.req.total)/float64(r.n)), fmt.Sprint(r.req.conflicts),
			settle, settleWrites, settleCPU, r.loadBefore+" → "+r.after))
	}
	printRequests(w, results, func(r result) requests { return r.req })
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Requests of the restart with every TrainJob up to date (totals, not per TrainJob):")
	fmt.Fprintln(w)
	for _, r := range results {
		if r.err == nil && r.procs > 0 {
			fmt.Fprintf(w, "- %s: %s\n", r.label, perJob(r.settleReq.byResource, 1))
		}
	}
}

func printRequests(w io.Writer, results []result, req func(result) requests) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Requests per TrainJob by verb and resource, counted in the API server's audit log:")
	fmt.Fprintln(w)
	for _, r := range results {
		if r.err == nil {
			fmt.Fprintf(w, "- %s: %s\n", r.label, perJob(req(r).byResource, r.n))
		}
	}
}

// machine describes the machine in one line.
func machine() string {
	model := "?"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := "?"
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(strings.SplitN(string(data), "\n", 2)[0], "MemTotal: %d kB", &kb)
		mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
	}
	kernel := "?"
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(data))
	}
	commit := "?"
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("machine: %s, %d CPUs, %s, Linux %s, %s; %s; commit %s",
		model, runtime.NumCPU(), mem, kernel, runtime.Version(), time.Now().UTC().Format(time.RFC3339), commit)
}

func oneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ReplaceAll(s, "|", "/")
}
