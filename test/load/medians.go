package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// median returns the median of d (the mean of the middle two for an even
// count), or 0 for none.
func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread formats the median of d and its range, as "4.52 (4.10–5.03)".
func spread(d []time.Duration, format func(time.Duration) string) string {
	if len(d) == 0 {
		return "–"
	}
	if len(d) == 1 {
		return format(d[0])
	}
	return fmt.Sprintf("%s (%s–%s)", format(median(d)), format(slices.Min(d)), format(slices.Max(d)))
}

// ratioSpread is the ratio of the medians of rows and of floors, and the
// range of the per-round ratios (each row against its own round's floor).
func ratioSpread(rows []result, floorOf func(result) time.Duration) string {
	var mine, floors []time.Duration
	var perRound []float64
	for _, r := range rows {
		f := floorOf(r)
		if f <= 0 {
			continue
		}
		mine = append(mine, r.makespan)
		floors = append(floors, f)
		perRound = append(perRound, r.makespan.Seconds()/f.Seconds())
	}
	if len(mine) == 0 {
		return "–"
	}
	s := ratio(median(mine), median(floors))
	if len(perRound) > 1 {
		s += fmt.Sprintf(" (%.2f–%.2f×)", slices.Min(perRound), slices.Max(perRound))
	}
	return s
}

// printMedians prints, per row name, the medians over the rounds and
// their ranges. The ratios are of medians; the range in brackets is that of
// the rows against the floors of their own rounds. instr adds the
// instructions column, over the rounds that have the figure.
func printMedians(w io.Writer, results []result, mode string, instr bool) {
	var names []string
	byName := map[string][]result{}
	failed := map[string]int{}
	for _, r := range results {
		if _, ok := byName[r.name]; !ok {
			names = append(names, r.name)
			byName[r.name] = nil
		}
		if r.err != nil {
			failed[r.name]++
			continue
		}
		byName[r.name] = append(byName[r.name], r)
	}
	first := "makespan s"
	if mode != "burst" {
		first = "all JobSets after start s"
	}
	fmt.Fprintln(w, "Medians over the interleaved rounds (min–max); ratios are of medians, the range in brackets that of each row against the floors of its own round:")
	fmt.Fprintln(w)
	printHeader(w, columns(instr,
		[]string{"row", "rounds", first, "× design floor", "× floor", "to JobSet p99 s", "to Created p99 s", "CPU ms/job"},
		"M instructions/job",
		"peak RSS MiB", "API server + etcd CPU s", "writes/job"))
	for _, name := range names {
		rows := byName[name]
		runs := fmt.Sprintf("%d", len(rows))
		if failed[name] > 0 {
			runs += fmt.Sprintf(" (%d failed)", failed[name])
		}
		var makespan, jobSetP99, createdP99, cpuPerJob, instrPerJob, rss, server, writes []time.Duration
		noSummary := 0 // rounds whose instructions figure is missing
		for _, r := range rows {
			makespan = append(makespan, r.makespan)
			jobSetP99 = append(jobSetP99, percentile(r.jobSet, 99))
			if len(r.created) == r.n {
				createdP99 = append(createdP99, percentile(r.created, 99))
			}
			if r.procs > 0 {
				cpuPerJob = append(cpuPerJob, r.cpu/time.Duration(r.n))
				// Bytes, instructions and writes ride in Durations
				// to share the median's code; they are formatted
				// back below.
				rss = append(rss, time.Duration(r.peakRSS))
			}
			if perJob, ok := r.instr.perJob(r.n); ok {
				instrPerJob = append(instrPerJob, time.Duration(perJob))
			} else if r.instr != nil {
				noSummary++
			}
			server = append(server, r.serverCPU)
			writes = append(writes, time.Duration(r.req.writes()*1000/r.n))
		}
		instrCell := spread(instrPerJob, func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/1e6) })
		if noSummary > 0 {
			instrCell += fmt.Sprintf(" (%d with no cachegrind summary)", noSummary)
		}
		printCells(w, columns(instr,
			[]string{name, runs, spread(makespan, secs),
				ratioSpread(rows, func(r result) time.Duration { return r.designFloor }),
				ratioSpread(rows, func(r result) time.Duration { return r.floor }),
				spread(jobSetP99, secs), spread(createdP99, secs),
				spread(cpuPerJob, func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) })},
			instrCell,
			spread(rss, func(d time.Duration) string { return mib(int64(d)) }),
			spread(server, secs),
			spread(writes, func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/1000) })))
	}
}
