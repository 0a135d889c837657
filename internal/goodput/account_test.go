package goodput

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

var t0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func mt(s int) metav1.Time { return metav1.NewTime(at(s)) }

// timeline is a TrainJob whose records are changed as a job's would be,
// and whose account is brought up to date after each change, as the
// goodput controller does on each update of the TrainJob.
type timeline struct {
	t   *testing.T
	job *trainer.TrainJob
}

func newTimeline(t *testing.T) *timeline {
	job := &trainer.TrainJob{}
	job.CreationTimestamp = mt(0)
	return &timeline{t: t, job: job}
}

func (tl *timeline) condition(typ string, status metav1.ConditionStatus, s int) {
	conds := tl.job.Status.Conditions
	for i := range conds {
		if conds[i].Type == typ {
			if conds[i].Status != status {
				conds[i].Status, conds[i].LastTransitionTime = status, mt(s)
			}
			return
		}
	}
	tl.job.Status.Conditions = append(conds, metav1.Condition{Type: typ, Status: status, LastTransitionTime: mt(s)})
}

func (tl *timeline) running(s int)  { tl.condition(trainer.TrainJobRunning, metav1.ConditionTrue, s) }
func (tl *timeline) pending(s int)  { tl.condition(trainer.TrainJobRunning, metav1.ConditionFalse, s) }
func (tl *timeline) suspend(s int)  { tl.condition(trainer.TrainJobSuspended, metav1.ConditionTrue, s) }
func (tl *timeline) resume(s int)   { tl.condition(trainer.TrainJobSuspended, metav1.ConditionFalse, s) }
func (tl *timeline) complete(s int) { tl.condition(trainer.TrainJobComplete, metav1.ConditionTrue, s) }
func (tl *timeline) progress(s int) {
	tl.job.Status.TrainerStatus = &trainer.TrainerStatus{LastUpdatedTime: mt(s)}
}
func (tl *timeline) checkpoint(s int) {
	tl.job.Status.LastCheckpoint = &trainer.CheckpointStatus{Step: int64(s), Time: mt(s)}
}

func (tl *timeline) runStart(s int) {
	tl.job.Status.LastRunStart = &trainer.RunStartStatus{Time: mt(s)}
}

func (tl *timeline) restart(s int) {
	r := tl.job.Status.Restarts
	if r == nil {
		r = &trainer.RestartStatus{}
	}
	r.Count++
	r.LastTime = ptr.To(mt(s))
	tl.job.Status.Restarts = r
}

func (tl *timeline) resize(s int) {
	tl.job.Status.Nodes = &trainer.NodesStatus{LastResizeTime: ptr.To(mt(s))}
}

// look brings the account up to date at s, as the controller would, and
// stores it in the status when it changed.
func (tl *timeline) look(s int) *trainer.GoodputStatus {
	tl.t.Helper()
	g, changed := Account(tl.job, at(s), time.Minute)
	if changed {
		tl.job.Status.Goodput = g
	}
	if g != nil {
		lost := g.Lost.WaitingSeconds + g.Lost.StartUpSeconds + g.Lost.RestartSeconds + g.Lost.ResizeSeconds + g.Lost.RedoneSeconds
		if g.ProductiveSeconds+lost != g.ElapsedSeconds {
			tl.t.Fatalf("at %d s: productive %d + lost %d != elapsed %d: %+v", s, g.ProductiveSeconds, lost, g.ElapsedSeconds, g)
		}
		if g.ProductiveSeconds < 0 {
			tl.t.Fatalf("at %d s: productive %d < 0", s, g.ProductiveSeconds)
		}
	}
	return g
}

type figures struct {
	State                                                  trainer.GoodputState
	Elapsed, Productive, Waiting, StartUp, Restart, Resize int64
	Redone                                                 int64
	Percent                                                int32
}

func figuresOf(g *trainer.GoodputStatus) figures {
	return figures{
		State: g.State, Elapsed: g.ElapsedSeconds, Productive: g.ProductiveSeconds,
		Waiting: g.Lost.WaitingSeconds, StartUp: g.Lost.StartUpSeconds, Restart: g.Lost.RestartSeconds,
		Resize: g.Lost.ResizeSeconds, Redone: g.Lost.RedoneSeconds, Percent: g.Percent,
	}
}

func (tl *timeline) want(s int, want figures) {
	tl.t.Helper()
	g := tl.look(s)
	if g == nil {
		tl.t.Fatalf("at %d s: no account, want %+v", s, want)
	}
	if diff := cmp.Diff(want, figuresOf(g)); diff != "" {
		tl.t.Errorf("at %d s (-want +got):\n%s", s, diff)
	}
}

func TestNoProgressNoAccount(t *testing.T) {
	tl := newTimeline(t)
	tl.running(20)
	tl.restart(100)
	tl.complete(300)
	if g := tl.look(400); g != nil {
		t.Fatalf("a job that never reported progress has an account: %+v", g)
	}
}

func TestFirstProgressSplitsWaitingAndStartUp(t *testing.T) {
	tl := newTimeline(t)
	tl.running(20)
	tl.look(30)
	tl.progress(50)
	tl.want(50, figures{State: trainer.GoodputTraining, Elapsed: 50, Waiting: 20, StartUp: 30})
	// Within the refresh interval the status is left as it is...
	if _, changed := Account(tl.job, at(100), time.Minute); changed {
		t.Errorf("the account changed 50 s into training, with nothing new and a refresh of a minute")
	}
	// ...and after it the figures are brought up to date.
	tl.want(111, figures{State: trainer.GoodputTraining, Elapsed: 111, Productive: 61, Waiting: 20, StartUp: 30, Percent: 54})
}

func TestRestartRedoesTheWorkAfterTheLastCheckpoint(t *testing.T) {
	tl := newTimeline(t)
	tl.running(10)
	tl.progress(20)
	tl.look(20)
	tl.checkpoint(80)
	tl.look(80)
	tl.restart(100)
	tl.pending(100)
	// The figures are as of the restart: what follows is unknown yet.
	tl.want(101, figures{State: trainer.GoodputRestarting, Elapsed: 100, Productive: 80, Waiting: 10, StartUp: 10, Percent: 80})
	// The pods run again: no change of state for the account.
	tl.running(110)
	tl.want(110, figures{State: trainer.GoodputRestarting, Elapsed: 100, Productive: 80, Waiting: 10, StartUp: 10, Percent: 80})
	tl.progress(115)
	// The run was 20..100; checkpointed at 80: 20 s redone.
	tl.want(115, figures{State: trainer.GoodputTraining, Elapsed: 115, Productive: 60, Waiting: 10, StartUp: 10, Restart: 15, Redone: 20, Percent: 52})
	tl.complete(200)
	tl.want(200, figures{State: trainer.GoodputFinished, Elapsed: 200, Productive: 145, Waiting: 10, StartUp: 10, Restart: 15, Redone: 20, Percent: 72})
	// A finished account does not change.
	tl.want(5000, figures{State: trainer.GoodputFinished, Elapsed: 200, Productive: 145, Waiting: 10, StartUp: 10, Restart: 15, Redone: 20, Percent: 72})
}

func TestWithoutCheckpointsARestartRedoesTheWholeRun(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.progress(10)
	tl.look(10)
	tl.restart(70)
	tl.look(70)
	tl.progress(80)
	tl.want(80, figures{State: trainer.GoodputTraining, Elapsed: 80, StartUp: 10, Restart: 10, Redone: 60})
}

func TestACheckpointBeforeTheRunSavesNothingOfIt(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.progress(10)
	tl.look(10)
	tl.checkpoint(30)
	tl.restart(50)
	tl.look(50)
	tl.progress(60)
	tl.look(60) // run 10..50, kept until 30: 20 s redone
	tl.restart(90)
	tl.look(90)
	tl.progress(100)
	// Run 60..90 restarted from the checkpoint of 30: all of it redone.
	tl.want(100, figures{State: trainer.GoodputTraining, Elapsed: 100, Productive: 20, StartUp: 10, Restart: 20, Redone: 50, Percent: 20})
}

func TestSuspensionWithAGraceCheckpointLosesOnlyTheWait(t *testing.T) {
	tl := newTimeline(t)
	tl.running(5)
	tl.progress(10)
	tl.look(10)
	tl.suspend(100)
	tl.want(100, figures{State: trainer.GoodputSuspended, Elapsed: 100, Productive: 90, Waiting: 5, StartUp: 5, Percent: 90})
	// The trainer checkpoints in its grace period, after the suspension.
	tl.checkpoint(103)
	tl.look(103)
	tl.resume(160)
	tl.want(160, figures{State: trainer.GoodputRestarting, Elapsed: 160, Productive: 90, Waiting: 65, StartUp: 5, Percent: 56})
	tl.progress(170)
	tl.want(170, figures{State: trainer.GoodputTraining, Elapsed: 170, Productive: 90, Waiting: 65, StartUp: 5, Restart: 10, Percent: 52})
}

func TestAProgressReportWhileSuspendedIsNoNewRun(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.progress(10)
	tl.look(10)
	tl.suspend(100)
	tl.look(100)
	tl.progress(102) // the last report of the run, in its grace period
	tl.want(102, figures{State: trainer.GoodputSuspended, Elapsed: 100, Productive: 90, StartUp: 10, Percent: 90})
}

func TestResizeIsItsOwnLoss(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.progress(10)
	tl.look(10)
	tl.checkpoint(50)
	tl.resize(60)
	tl.want(60, figures{State: trainer.GoodputResizing, Elapsed: 60, Productive: 50, StartUp: 10, Percent: 83})
	tl.progress(75)
	tl.want(75, figures{State: trainer.GoodputTraining, Elapsed: 75, Productive: 40, StartUp: 10, Resize: 15, Redone: 10, Percent: 53})
}

func TestChangesSeenTogetherAreTakenInTheOrderTheyHappened(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.progress(10)
	tl.look(10)
	// The controller looks again only once the job has restarted,
	// trained again and completed.
	tl.checkpoint(40)
	tl.restart(50)
	tl.progress(58)
	tl.complete(90)
	tl.want(95, figures{State: trainer.GoodputFinished, Elapsed: 90, Productive: 62, StartUp: 10, Restart: 8, Redone: 10, Percent: 68})
}

func TestRestartsBeforeTheFirstReportArePartOfStartingUp(t *testing.T) {
	tl := newTimeline(t)
	tl.running(5)
	tl.restart(20)
	tl.running(30) // Running turned False and True again after the restart
	tl.job.Status.Conditions[0].LastTransitionTime = mt(30)
	tl.progress(40)
	tl.want(40, figures{State: trainer.GoodputTraining, Elapsed: 40, Waiting: 30, StartUp: 10})
	tl.want(101, figures{State: trainer.GoodputTraining, Elapsed: 101, Productive: 61, Waiting: 30, StartUp: 10, Percent: 60})
}

func TestSuspendedAndResumedBetweenTwoLooks(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.progress(10)
	tl.look(10)
	tl.suspend(40)
	tl.resume(50)
	tl.look(55)
	tl.progress(60)
	// When the suspension began is no longer known: the run is taken to
	// have ended at the resumption.
	tl.want(60, figures{State: trainer.GoodputTraining, Elapsed: 60, StartUp: 10, Restart: 10, Redone: 40})
}

func TestLiveBringsTheFiguresToNowWithoutChangingTheStatus(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.progress(10)
	g := tl.look(10)
	live := Live(g, at(0), at(40))
	if diff := cmp.Diff(figures{State: trainer.GoodputTraining, Elapsed: 40, Productive: 30, StartUp: 10, Percent: 75}, figuresOf(&live)); diff != "" {
		t.Errorf("Live (-want +got):\n%s", diff)
	}
	if g.ElapsedSeconds != 10 {
		t.Errorf("Live changed the account it was given: elapsed %d", g.ElapsedSeconds)
	}
}

func TestReportsDatedOutsideTheJobsLifeAreBroughtWithinIt(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.progress(-3600) // the training code's clock an hour behind
	tl.want(10, figures{State: trainer.GoodputTraining})
	tl.want(100, figures{State: trainer.GoodputTraining, Elapsed: 100, Productive: 100, Percent: 100})
	tl.restart(150)
	tl.progress(10_000) // and now far ahead
	tl.want(160, figures{State: trainer.GoodputTraining, Elapsed: 160, Restart: 10, Redone: 150})
}

func TestARunStartWhileTrainingIsARestartNoOtherRecordShows(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.runStart(5)
	tl.progress(10)
	tl.want(10, figures{State: trainer.GoodputTraining, Elapsed: 10, StartUp: 10})
	tl.checkpoint(40)
	tl.look(40)
	tl.progress(48)
	tl.look(48)
	// The node of one pod is lost at about 50: its survivors wait, re-form
	// their group and start a run from the checkpoint of 40; no restart
	// is recorded (the elastic job's Job replaces the pod).
	tl.runStart(65)
	// The run ended at its last report: it trained 10..48, 8 s of it
	// after the checkpoint.
	tl.want(65, figures{State: trainer.GoodputRestarting, Elapsed: 48, Productive: 38, StartUp: 10, Percent: 79})
	tl.progress(70)
	tl.want(70, figures{State: trainer.GoodputTraining, Elapsed: 70, Productive: 30, StartUp: 10, Restart: 22, Redone: 8, Percent: 42})
	// The same start, seen again, changes nothing.
	tl.progress(72)
	if _, changed := Account(tl.job, at(75), time.Minute); changed {
		t.Errorf("the run start already counted was counted again")
	}
}

func TestARunStartSeenWithItsFirstReportEndsTheRunAtItsLastRecord(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.progress(10)
	tl.look(10)
	tl.progress(45)
	tl.checkpoint(47) // the last record of the run, after its last report
	// The controller looks again only after the new run reported.
	tl.runStart(60)
	tl.progress(66)
	tl.want(66, figures{State: trainer.GoodputTraining, Elapsed: 66, Productive: 37, StartUp: 10, Restart: 19, Percent: 56})
}

// Training code that sends a run start with the first report of the run,
// in one post, gives both the same second, since they are recorded in
// whole seconds: that report is the new run's, not the last of the run
// before. The run before ends at its last record before the start (make
// demo's node lost, counted before as 16 s of training redone).
func TestARunStartInTheSameSecondAsItsFirstReport(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.progress(10)
	tl.look(10)
	tl.progress(44)
	tl.checkpoint(45)
	tl.look(45)
	// The node is lost at about 46; the survivors start again at 61 from
	// the checkpoint of 45, and post the start with their first report.
	tl.runStart(61)
	tl.progress(61)
	tl.want(61, figures{State: trainer.GoodputTraining, Elapsed: 61, Productive: 35, StartUp: 10, Restart: 16, Percent: 57})
	tl.progress(70)
	tl.want(70, figures{State: trainer.GoodputTraining, Elapsed: 61, Productive: 35, StartUp: 10, Restart: 16, Percent: 57})
}

func TestARunStartAfterARecordedDisruptionIsPartOfIt(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.runStart(2)
	tl.progress(10)
	tl.look(10)
	tl.checkpoint(40)
	tl.restart(50)
	tl.look(50)
	tl.runStart(55)
	// As of the restart; the run's redone work is settled when it trains.
	tl.want(55, figures{State: trainer.GoodputRestarting, Elapsed: 50, Productive: 40, StartUp: 10, Percent: 80})
	tl.progress(60)
	tl.want(60, figures{State: trainer.GoodputTraining, Elapsed: 60, Productive: 30, StartUp: 10, Restart: 10, Redone: 10, Percent: 50})
}

// An elastic job grows: the group of before trains on until the new pod
// joins (its reports end the resize), then every worker starts again in a
// group of the new size: that run start ends the resize, not a restart.
func TestARunStartAfterAResizeFinishesTheResize(t *testing.T) {
	tl := newTimeline(t)
	tl.running(0)
	tl.runStart(5)
	tl.progress(10)
	tl.look(10)
	tl.checkpoint(45)
	tl.resize(50)
	tl.look(50)
	tl.progress(52) // the group of two, still training
	tl.look(52)
	tl.checkpoint(58) // stopped for the new group: a checkpoint in the grace
	tl.look(58)
	tl.runStart(60)
	tl.look(60)
	tl.progress(64)
	// Resizing 50..52 and 58..64; the work after the checkpoint of 45
	// redone; the run 52..58 checkpointed at its end.
	tl.want(64, figures{State: trainer.GoodputTraining, Elapsed: 64, Productive: 41, StartUp: 10, Resize: 8, Redone: 5, Percent: 64})
	// A later run start while training, with no resize since the last
	// one counted, is a restart.
	tl.checkpoint(80)
	tl.progress(84)
	tl.look(84)
	tl.runStart(90)
	tl.look(90)
	tl.progress(92)
	tl.want(92, figures{State: trainer.GoodputTraining, Elapsed: 92, Productive: 57, StartUp: 10, Resize: 8, Restart: 8, Redone: 9, Percent: 61})
}
