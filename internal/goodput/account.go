// Package goodput keeps each TrainJob's goodput account (status.goodput):
// where the time since its creation went, training whose progress was kept
// or time lost by cause.
//
// The account is kept from the TrainJob's own records only, each with the
// time it happened: the Running, Suspended, Complete and Failed conditions,
// restarts.lastTime, nodes.lastResizeTime, and the lastUpdatedTime of the
// progress, the time of the checkpoints and of the run starts its training
// code reports. So
// the figures do not depend on when the controller looks, only on what it
// sees: a controller restarted in the middle of a job goes on from the
// account in the status. What cannot be seen is not guessed: a job whose
// code never reports progress has no account.
//
// Time is counted in whole seconds, as the records give it, so that
// elapsed = productive + every loss, exactly.
package goodput

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// facts are the records of a TrainJob the account reads. A zero time is a
// record that does not exist.
type facts struct {
	created    time.Time
	progress   time.Time // trainerStatus.lastUpdatedTime: the last report
	checkpoint time.Time // lastCheckpoint.time
	runStart   time.Time // lastRunStart.time
	restarts   int32
	restartAt  time.Time
	resizeAt   time.Time
	suspended  bool
	// suspendedAt is when the Suspended condition last changed: turned
	// True while suspended, False once resumed.
	suspendedAt time.Time
	runningAt   time.Time // Running turned True, while it is True
	finishedAt  time.Time
}

func factsOf(job *trainer.TrainJob) facts {
	st := &job.Status
	f := facts{created: job.CreationTimestamp.Time}
	if st.TrainerStatus != nil {
		f.progress = st.TrainerStatus.LastUpdatedTime.Time
	}
	if st.LastCheckpoint != nil {
		f.checkpoint = st.LastCheckpoint.Time.Time
	}
	if st.LastRunStart != nil {
		f.runStart = st.LastRunStart.Time.Time
	}
	if st.Restarts != nil {
		f.restarts = st.Restarts.Count
		if st.Restarts.LastTime != nil {
			f.restartAt = st.Restarts.LastTime.Time
		}
	}
	if st.Nodes != nil && st.Nodes.LastResizeTime != nil {
		f.resizeAt = st.Nodes.LastResizeTime.Time
	}
	if c := meta.FindStatusCondition(st.Conditions, trainer.TrainJobSuspended); c != nil {
		f.suspended = c.Status == metav1.ConditionTrue
		f.suspendedAt = c.LastTransitionTime.Time
	}
	if c := meta.FindStatusCondition(st.Conditions, trainer.TrainJobRunning); c != nil && c.Status == metav1.ConditionTrue {
		f.runningAt = c.LastTransitionTime.Time
	}
	for _, t := range []string{trainer.TrainJobComplete, trainer.TrainJobFailed} {
		if c := meta.FindStatusCondition(st.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
			f.finishedAt = c.LastTransitionTime.Time
		}
	}
	return f
}

// notAfter moves to now every record said to be later: a report's time
// is the training code's clock, which may run ahead of the controller's.
func (f facts) notAfter(now time.Time) facts {
	for _, t := range []*time.Time{&f.progress, &f.checkpoint, &f.runStart, &f.restartAt, &f.resizeAt, &f.suspendedAt, &f.runningAt, &f.finishedAt} {
		if t.After(now) {
			*t = now
		}
	}
	return f
}

// Account returns the TrainJob's goodput account brought up to now from
// its records, and whether it differs from the one in its status in more
// than a later updateTime. A state that lasts has its figures brought up
// to now once refresh has passed since they were; a finished account no
// longer changes. It returns nil for a job whose code has not reported
// progress.
func Account(job *trainer.TrainJob, now time.Time, refresh time.Duration) (*trainer.GoodputStatus, bool) {
	now = now.Truncate(time.Second)
	f := factsOf(job).notAfter(now)
	var a account
	if job.Status.Goodput == nil {
		if f.progress.IsZero() {
			return nil, false
		}
		a = open(f)
	} else {
		a = account{g: *job.Status.Goodput.DeepCopy(), created: f.created}
		if a.g.State == trainer.GoodputFinished {
			return job.Status.Goodput, false
		}
	}
	changed := a.advance(f, now) || job.Status.Goodput == nil
	if !changed && now.Sub(a.g.UpdateTime.Time) >= refresh {
		a.closeAt(now)
		changed = true
	}
	if !changed {
		return job.Status.Goodput, false
	}
	a.g.Percent = percent(a.g.ProductiveSeconds, a.g.ElapsedSeconds)
	return &a.g, true
}

// Live returns a copy of an account brought up to now as if nothing had
// happened since its updateTime: what a scrape reports between two
// updates of the status.
func Live(g *trainer.GoodputStatus, created, now time.Time) trainer.GoodputStatus {
	a := account{g: *g.DeepCopy(), created: created}
	if a.g.State != trainer.GoodputFinished {
		a.closeAt(now.Truncate(time.Second))
	}
	a.g.Percent = percent(a.g.ProductiveSeconds, a.g.ElapsedSeconds)
	return a.g
}

func percent(productive, elapsed int64) int32 {
	if elapsed <= 0 {
		return 0
	}
	return int32(min(productive*100/elapsed, 100))
}

type account struct {
	g       trainer.GoodputStatus
	created time.Time
}

// open starts the account at the first progress report it sees: the time
// before it is lost, to waiting until the pods ran, then to start-up.
func open(f facts) account {
	// A report dated before the job existed (a clock behind) counts from
	// its creation.
	first := latest(f.progress, f.created)
	started := first
	if !f.runningAt.IsZero() && !f.runningAt.After(first) {
		started = f.runningAt
	}
	started = latest(started, f.created)
	a := account{created: f.created, g: trainer.GoodputStatus{
		State:      trainer.GoodputTraining,
		Since:      metav1.NewTime(first),
		UpdateTime: metav1.NewTime(first),
	}}
	a.g.Lost.WaitingSeconds = seconds(started.Sub(f.created))
	a.g.Lost.StartUpSeconds = seconds(first.Sub(started))
	a.g.ElapsedSeconds = seconds(first.Sub(f.created))
	// Restarts and resizes up to the first report are part of starting
	// up; those after it are disruptions advance finds.
	a.g.Restarts = f.restarts
	if f.restarts > 0 && f.restartAt.After(first) {
		a.g.Restarts--
	}
	if !f.resizeAt.IsZero() && !f.resizeAt.After(first) {
		a.g.ResizeTime = &metav1.Time{Time: f.resizeAt}
	}
	if !f.runStart.IsZero() && !f.runStart.After(first) {
		a.g.RunStartTime = &metav1.Time{Time: f.runStart}
	}
	return a
}

// event is a change of state the records show, at the time they give.
type event struct {
	at time.Time
	to trainer.GoodputState
}

// runStarted is the event of a run start the training code reported: a
// disruption if it comes while the job trains.
const runStarted trainer.GoodputState = "runStarted"

// advance applies, in the order they happened, the changes of state the
// records show since the account was last brought up to date, and
// reports whether there was any.
func (a *account) advance(f facts, now time.Time) bool {
	var evs []event
	at := func(t time.Time) time.Time {
		if t.IsZero() {
			return now
		}
		return t
	}
	g := &a.g
	if f.restarts > g.Restarts {
		evs = append(evs, event{at(f.restartAt), trainer.GoodputRestarting})
		g.Restarts = f.restarts
	}
	if !f.resizeAt.IsZero() && (g.ResizeTime == nil || f.resizeAt.After(g.ResizeTime.Time)) {
		evs = append(evs, event{f.resizeAt, trainer.GoodputResizing})
		g.ResizeTime = &metav1.Time{Time: f.resizeAt}
	}
	var run time.Time // a run start not counted yet
	if !f.runStart.IsZero() && (g.RunStartTime == nil || f.runStart.After(g.RunStartTime.Time)) {
		run = f.runStart
		evs = append(evs, event{runEnd(f, run), runStarted})
	}
	switch {
	case f.suspended && g.State != trainer.GoodputSuspended:
		evs = append(evs, event{at(f.suspendedAt), trainer.GoodputSuspended})
	case !f.suspended && g.State == trainer.GoodputSuspended:
		// Resumed: the job restarts, from its last checkpoint.
		evs = append(evs, event{at(f.suspendedAt), trainer.GoodputRestarting})
	case !f.suspended && !f.suspendedAt.IsZero() && f.suspendedAt.After(g.UpdateTime.Time) && g.State == trainer.GoodputTraining:
		// Suspended and resumed between two looks: when it was
		// suspended is not recorded any more; the run ended no later
		// than the resumption.
		evs = append(evs, event{f.suspendedAt, trainer.GoodputRestarting})
	}
	if !f.progress.IsZero() {
		// Taken when it comes after a disruption, in the loop below.
		evs = append(evs, event{f.progress, trainer.GoodputTraining})
	}
	if !f.finishedAt.IsZero() {
		evs = append(evs, event{f.finishedAt, trainer.GoodputFinished})
	}
	slices.SortStableFunc(evs, func(x, y event) int { return x.at.Compare(y.at) })

	changed := false
	for _, ev := range evs {
		switch ev.to {
		case trainer.GoodputFinished:
			a.training(f, ev.at, trainer.GoodputFinished)
			return true
		case trainer.GoodputTraining:
			// A report after a restart, a resumption or a resize is the
			// first of a new run; while suspended, or while training, a
			// report changes nothing.
			if (g.State == trainer.GoodputRestarting || g.State == trainer.GoodputResizing) && ev.at.After(g.Since.Time) {
				a.training(f, ev.at, trainer.GoodputTraining)
				changed = true
			}
		case runStarted:
			// A run that starts while the job trains is a restart that
			// no other record shows (an elastic job's group re-formed
			// after a node was lost, workers restarted in place), or the
			// end of a resize whose first report came from the group of
			// before. A run start after a disruption the records show
			// is part of it.
			prev := g.RunStartTime
			g.RunStartTime = &metav1.Time{Time: run}
			changed = true
			if g.State == trainer.GoodputTraining && run.After(g.Since.Time) {
				cause := trainer.GoodputRestarting
				if g.ResizeTime != nil && (prev == nil || g.ResizeTime.After(prev.Time)) {
					cause = trainer.GoodputResizing
				}
				a.disrupt(ev.at, cause)
			}
		default:
			a.disrupt(ev.at, ev.to)
			changed = true
		}
	}
	return changed
}

// runEnd is when the run before a run start at run ended: at its last
// record before the start (a progress report, or a checkpoint, which may
// come after the last report when the run was stopped), or at the start
// when both are later (its first report is already there). A record of
// the start's own second is the new run's: code that posts the start
// with the run's first report gives both the same second, and taking
// that report for the last of the run before would count the whole
// outage as training.
func runEnd(f facts, run time.Time) time.Time {
	end := time.Time{}
	for _, t := range []time.Time{f.progress, f.checkpoint} {
		if t.Before(run) {
			end = latest(end, t)
		}
	}
	if end.IsZero() {
		return run
	}
	return end
}

// closeAt counts the time from updateTime to t into the current state.
func (a *account) closeAt(t time.Time) {
	g := &a.g
	t = latest(t, g.UpdateTime.Time)
	d := seconds(t.Sub(g.UpdateTime.Time))
	switch g.State {
	case trainer.GoodputTraining:
		g.ProductiveSeconds += d
	case trainer.GoodputSuspended:
		g.Lost.WaitingSeconds += d
	case trainer.GoodputRestarting:
		g.Lost.RestartSeconds += d
	case trainer.GoodputResizing:
		g.Lost.ResizeSeconds += d
	}
	g.UpdateTime = metav1.NewTime(t)
	g.ElapsedSeconds = seconds(t.Sub(a.created))
}

// disrupt ends the run in training (its redone work is settled when the
// job trains again) or the loss in progress, and starts a loss to cause.
func (a *account) disrupt(t time.Time, cause trainer.GoodputState) {
	g := &a.g
	a.closeAt(t)
	t = g.UpdateTime.Time
	if g.State == trainer.GoodputTraining {
		g.Unsettled = &trainer.GoodputRun{Start: g.Since, End: metav1.NewTime(t)}
	}
	g.State, g.Since = cause, metav1.NewTime(t)
}

// training starts a new run, or finishes the account, at t: the run a
// disruption ended is settled against the last checkpoint reported.
func (a *account) training(f facts, t time.Time, to trainer.GoodputState) {
	g := &a.g
	a.closeAt(t)
	t = g.UpdateTime.Time
	if run := g.Unsettled; run != nil {
		kept := run.Start.Time
		if !f.checkpoint.IsZero() && f.checkpoint.After(kept) {
			kept = earliest(f.checkpoint, run.End.Time)
		}
		redone := seconds(run.End.Sub(kept))
		g.ProductiveSeconds -= redone
		g.Lost.RedoneSeconds += redone
		g.Unsettled = nil
	}
	g.State, g.Since = to, metav1.NewTime(t)
}

func seconds(d time.Duration) int64 {
	if d < 0 {
		return 0
	}
	return int64(d / time.Second)
}

func latest(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

func earliest(a, b time.Time) time.Time {
	if a.After(b) {
		return b
	}
	return a
}
