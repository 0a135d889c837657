package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
	"github.com/trainforge/trainforge/hack/steplog"
	"github.com/trainforge/trainforge/internal/goodput"
)

type viewOptions struct {
	refresh time.Duration
	// plain prints whole frames, one after the other, when they changed,
	// at most every plainEvery, for a log file or a pipe.
	plain      bool
	plainEvery time.Duration
	// progress is the reporter playing a training container, or nil.
	progress *progressReporter
	// realJobNote says why the real job is not there, and how to get it.
	realJobNote string
	// elastic applies and resizes the elastic real job, or is nil.
	elastic *elasticDemo
}

// watch shows the cluster until ctx ends, and applies the gang example when
// its time comes.
func watch(ctx context.Context, out io.Writer, c *simcluster.Cluster, repo string, o viewOptions) error {
	gang := &gangApplier{c: c, file: repo + "/" + gangExample}
	h := history{}
	var lastFrame string
	var lastPrint time.Time
	t := time.NewTicker(o.refresh)
	defer t.Stop()
	for {
		if err := gang.step(ctx); err != nil && ctx.Err() == nil {
			return err
		}
		if o.elastic != nil {
			if err := o.elastic.step(ctx); err != nil && ctx.Err() == nil {
				return err
			}
		}
		if err := c.Exited(); err != nil {
			return err
		}
		// A failed read (an API server that is busy) is not worth stopping
		// the demo for: the next tick tries again.
		s, err := takeSnapshot(ctx, c.Client)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			h.record(s)
			cols, rows := termSize(o.plain)
			frame := render(s, &h, c, !o.plain, cols)
			if o.progress != nil {
				frame += clip("Progress: "+o.progress.String(), cols) + "\n"
			}
			if o.elastic != nil {
				frame += clip("Elastic: "+o.elastic.String(), cols) + "\n"
			}
			if o.realJobNote != "" {
				frame += clip("Real job: "+o.realJobNote, cols) + "\n"
			}
			switch {
			case !o.plain:
				frame = fitRows(frame, rows)
				// Home, the frame with every line cleared to its end, and
				// the rest of the screen cleared: no flicker, no scrolling.
				fmt.Fprint(out, "\x1b[H"+strings.ReplaceAll(frame, "\n", "\x1b[K\n")+"\x1b[J")
			case withoutClock(frame) != lastFrame && time.Since(lastPrint) >= o.plainEvery:
				fmt.Fprintf(out, "\n----- %s -----\n%s", s.at.Format("15:04:05"), frame)
				lastFrame, lastPrint = withoutClock(frame), time.Now()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// history remembers the states each TrainJob was seen in, and when.
type history map[string][]seen

type seen struct {
	state string
	after time.Duration // since the TrainJob's creation
}

func (h history) record(s *snapshot) {
	for _, j := range s.jobs {
		key := j.namespace + "/" + j.name
		states := h[key]
		if j.state == "-" || (len(states) > 0 && states[len(states)-1].state == j.state) {
			continue
		}
		h[key] = append(states, seen{state: j.state, after: s.at.Sub(j.created).Truncate(time.Second)})
	}
}

func (h history) of(j jobView) string {
	var parts []string
	for i, s := range h[j.namespace+"/"+j.name] {
		if i == 0 {
			parts = append(parts, s.state)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s at %s", s.state, s.after))
	}
	return strings.Join(parts, " → ")
}

// render draws one frame: the jobs of examples/jobs in full, the seed
// examples on a line each.
func render(s *snapshot, h *history, c *simcluster.Cluster, color bool, width int) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		b.WriteString(clip(fmt.Sprintf(format, args...), width) + "\n")
	}
	paint := func(code, text string) string {
		if !color {
			return text
		}
		return "\x1b[" + code + "m" + text + "\x1b[0m"
	}
	line("%s · cluster %s: %d/%d nodes Ready (%d process nodes), GPUs in use %d/%d · %s · Ctrl-C stops it",
		paint("1", "Trainforge demo"), clusterName, s.readyNodes, s.nodes, len(s.processNodes), s.gpusUsed, s.gpusTotal, s.at.Format("15:04:05"))
	line("kubectl: export KUBECONFIG=%s", c.Kubeconfig)
	line("plugins: %s", pluginModes())
	line("")
	line("%-32s %-9s  %-24s %s", "TRAINJOB", "STATE", "RUNTIME", "STATES SEEN (since created)")
	for _, j := range s.jobs {
		line("%s %s  %-24s %s", paint("1", fmt.Sprintf("%-32s", j.namespace+"/"+j.name)),
			paint(stateColor(j.state), fmt.Sprintf("%-9s", j.state)), j.runtime, h.of(j))
		if j.why != "" {
			line("    why      %s", paint("31", j.why))
		}
		pods, nodes := podSummary(j.pods)
		if len(nodes) > 0 {
			pods += " on " + strings.Join(nodes, ", ")
		}
		if j.namespace != demoNamespace {
			// A seed example: what ran it and its pods, in one line.
			if j.plugins != "" {
				line("    %s ⇒ %s · pods: %s", j.plugins, strings.Join(j.objects, ", "), cmp.Or(pods, "none yet"))
			}
			continue
		}
		if j.plugins != "" {
			line("    plugins  %s ⇒ %s", j.plugins, strings.Join(j.objects, ", "))
		}
		if pods != "" {
			if js := jobsStatus(j.jobsStatus); js != "" {
				pods += " · jobsStatus " + js
			}
			line("    pods     %s", pods)
		}
		if len(j.env) > 0 {
			line("    env      %s", strings.Join(j.env, " "))
		}
		if n := nodesLine(j.nodes, s.at); n != "" {
			line("    nodes    %s", paint("35", n))
		}
		if r := j.restarts; r != nil {
			line("    restarts %s", paint("33", fmt.Sprintf("%d (%d counted towards maxRestarts), last: %s", r.Count, r.CountedTowardsMax, r.LastReason)))
		}
		if p := progressLine(j.progress); p != "" {
			line("    progress %s", paint("36", p))
		}
		if g := goodputLine(j.goodput, j.created, s.at); g != "" {
			line("    goodput  %s", paint("32", g))
		}
		if c := stepLogLine(j.goodput, j.stepLog); c != "" {
			line("    checked  %s", c)
		}
		if logs := logsHint(j.pods, s.processNodes); logs != "" {
			line("    logs     %s", logs)
		}
		if pg := j.podGroup; pg != nil {
			need := quantity(pg.Spec.MinResources, simcluster.GPUResource)
			line("    gang     PodGroup %s: minMember %d, minResources %s GPUs; %d of %d GPUs free",
				pg.Name, pg.Spec.MinMember, need, s.gpusTotal-s.gpusUsed, s.gpusTotal)
			if unscheduled := countUnscheduled(j.pods); unscheduled > 0 && j.state == trainer.TrainJobCreated {
				why := fmt.Sprintf("%d pods unscheduled until %s GPUs are free at once", unscheduled, need)
				if msg := schedulerSays(j.pods); msg != "" {
					why += "; the scheduler says: " + msg
				}
				line("    waiting  %s", paint("33", why))
			}
		}
	}
	line("")
	if len(s.processNodes) > 0 {
		line("Process nodes, whose pods run as real processes on this machine: %s", strings.Join(slices.Sorted(maps.Keys(s.processNodes)), ", "))
	}
	line("Try: kubectl get trainjobs -A · kubectl get pods -A -o wide · kubectl describe podgroup gang-gpu · kubectl get trainjob torch-gpu -o yaml")
	line("Logs: %s, and kwok's components: %s", c.Logs, c.KwokLogs)
	return b.String()
}

// progressLine is "45% · 3m0s left · loss 0.25, step 9", what the training
// code last reported into status.trainerStatus, or "" before it reports.
func progressLine(ts *trainer.TrainerStatus) string {
	if ts == nil {
		return ""
	}
	var parts []string
	if p := ts.ProgressPercentage; p != nil {
		bar := strings.Repeat("█", int(*p)/5) + strings.Repeat("░", 20-int(*p)/5)
		parts = append(parts, fmt.Sprintf("%s %d%%", bar, *p))
	}
	if s := ts.EstimatedRemainingSeconds; s != nil {
		parts = append(parts, (time.Duration(*s)*time.Second).String()+" left")
	}
	var metrics []string
	for _, m := range ts.Metrics {
		metrics = append(metrics, m.Name+" "+m.Value)
	}
	if len(metrics) > 0 {
		parts = append(parts, strings.Join(metrics, ", "))
	}
	return strings.Join(parts, " · ")
}

// goodputLine is "92% of 5m0s · lost: start-up 12s, restart 6s, redone 3s ·
// restarting since 4s", the TrainJob's goodput account brought up to at, or
// "" while it has none (its code has not reported progress).
func goodputLine(g *trainer.GoodputStatus, created, at time.Time) string {
	if g == nil {
		return ""
	}
	live := goodput.Live(g, created, at)
	line := fmt.Sprintf("%d%% of %s", live.Percent, time.Duration(live.ElapsedSeconds)*time.Second)
	var lost []string
	for _, l := range []struct {
		cause   string
		seconds int64
	}{{"waiting", live.Lost.WaitingSeconds}, {"start-up", live.Lost.StartUpSeconds}, {"restart", live.Lost.RestartSeconds}, {"resize", live.Lost.ResizeSeconds}, {"redone", live.Lost.RedoneSeconds}} {
		if l.seconds > 0 {
			lost = append(lost, fmt.Sprintf("%s %s", l.cause, time.Duration(l.seconds)*time.Second))
		}
	}
	if len(lost) > 0 {
		line += " · lost: " + strings.Join(lost, ", ")
	}
	if live.State != trainer.GoodputTraining && live.State != trainer.GoodputFinished {
		line += fmt.Sprintf(" · %s since %s", strings.ToLower(string(live.State)), at.Sub(live.Since.Time).Truncate(time.Second))
	}
	return line
}

// stepLogLine sets a finished job's goodput account beside the same
// figure computed from the script's own step log: "the script's step log:
// 73.1% kept (195.2s of 267s), 7 steps done twice · the account: 74.2%,
// 1.1 points apart". It is "" until the account is closed.
func stepLogLine(g *trainer.GoodputStatus, runs []steplog.Run) string {
	if g == nil || g.State != trainer.GoodputFinished || len(runs) == 0 || g.ElapsedSeconds == 0 {
		return ""
	}
	elapsed := float64(g.ElapsedSeconds)
	kept := steplog.KeptSeconds(runs)
	fromLog := 100 * kept / elapsed
	account := 100 * float64(g.ProductiveSeconds) / elapsed
	n := len(steplog.RedoneSteps(runs))
	redone := fmt.Sprintf("%d steps done twice", n)
	switch n {
	case 0:
		redone = "no step done twice"
	case 1:
		redone = "1 step done twice"
	}
	return fmt.Sprintf("the script's step log: %.1f%% kept (%.1fs of %ds), %s · the account: %.1f%%, %.1f points apart",
		fromLog, kept, g.ElapsedSeconds, redone, account, math.Abs(account-fromLog))
}

// logsHint is the kubectl command that follows the training's output, for
// a job whose first trainer pod runs on a process node (a real process,
// whose log the node's agent serves as a kubelet does), or "".
func logsHint(pods []corev1.Pod, processNodes map[string]bool) string {
	for _, p := range pods {
		if processNodes[p.Spec.NodeName] && p.Annotations[batchv1.JobCompletionIndexAnnotation] == "0" && p.DeletionTimestamp == nil {
			return fmt.Sprintf("kubectl logs -f %s (rank 0: its loss; -c node, --previous after a restart in place)", p.Name)
		}
	}
	return ""
}

// jobsStatus is "node: 1 ready, 1 active" for each replicatedJob, with
// only the counts that are not zero.
func jobsStatus(list []trainer.JobStatus) string {
	var parts []string
	for _, js := range list {
		var counts []string
		for _, c := range []struct {
			name string
			n    *int32
		}{{"active", js.Active}, {"ready", js.Ready}, {"succeeded", js.Succeeded}, {"failed", js.Failed}, {"suspended", js.Suspended}} {
			if c.n != nil && *c.n > 0 {
				counts = append(counts, fmt.Sprintf("%d %s", *c.n, c.name))
			}
		}
		if len(counts) == 0 {
			counts = []string{"none"}
		}
		parts = append(parts, js.Name+": "+strings.Join(counts, ", "))
	}
	return strings.Join(parts, "; ")
}

func stateColor(state string) string {
	switch state {
	case trainer.TrainJobRunning:
		return "36" // cyan
	case trainer.TrainJobComplete:
		return "32" // green
	case trainer.TrainJobFailed:
		return "31" // red
	case trainer.TrainJobSuspended:
		return "35" // magenta
	default:
		return "33" // yellow
	}
}

// clip cuts a line to width, counting only what is visible: escape
// sequences take no room, and a cut line resets the colour.
func clip(s string, width int) string {
	if width <= 0 {
		return s
	}
	visible, inEscape := 0, false
	for i, r := range s {
		switch {
		case inEscape:
			inEscape = !(r >= '@' && r <= '~' && r != '[')
		case r == '\x1b':
			inEscape = true
		default:
			visible++
			if visible > width {
				return s[:i] + "\x1b[0m"
			}
		}
	}
	return s
}

// withoutClock is a frame without its first line, whose clock changes
// every second.
func withoutClock(frame string) string {
	_, rest, _ := strings.Cut(frame, "\n")
	return rest
}

// termSize is the terminal's width and height, or none for plain output.
func termSize(plain bool) (cols, rows int) {
	if plain {
		return 0, 0
	}
	ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0
	}
	return int(ws.Col), int(ws.Row)
}

// fitRows cuts a frame taller than the terminal, which would scroll at
// every redraw, and says so on its last line.
func fitRows(frame string, rows int) string {
	lines := strings.Split(strings.TrimSuffix(frame, "\n"), "\n")
	// The last row stays free: a line written there would scroll.
	if rows <= 2 || len(lines) <= rows-1 {
		return frame
	}
	keep := rows - 2
	return strings.Join(lines[:keep], "\n") + fmt.Sprintf("\n(%d more lines: make the terminal taller)\n", len(lines)-keep)
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
