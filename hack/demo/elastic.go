package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
	"github.com/trainforge/trainforge/internal/trainjobscale"
)

// The elastic real job of examples/realjobs: applied once torch-ddp has
// finished, since the process nodes share this machine's network and both
// jobs' rendezvous listen on port 29500, then resized while it trains.
var (
	elasticRuntime = "examples/realjobs/torch-elastic-runtime.yaml"
	elasticJob     = "examples/realjobs/torch-elastic.yaml"
)

const elasticJobName = "torch-elastic"

// elasticCheckpoints is the hostPath of the elastic runtime's checkpoints
// volume: every process node runs on this machine, so the demo reads
// there what rank 0 wrote, wherever it ran.
const elasticCheckpoints = "/tmp/trainforge-elastic-checkpoints"

// elasticStepLog is where the elastic TrainJob of that UID keeps its step
// log: the runtime's --step-log, in the TrainJob's checkpoint directory
// (/checkpoints/$(PET_RDZV_ID), the TrainJob's UID).
func elasticStepLog(uid types.UID) string {
	return filepath.Join(elasticCheckpoints, string(uid), "steps.log")
}

// elasticPlan is what the demo does to the elastic job while it trains:
// the three kinds of fault, one of each. Each comes once rank 0 has
// reported `after` steps at world size `at` since the fault before it took
// effect, so that the view shows the job train between faults. The node
// is lost at minNodes, where the job cannot train on without it and waits
// for its replacement pod; the replacement takes a process node the job
// did not use, and the resize the last one (a lost process node does not
// come back, as a dead machine would not): hence elasticProcessNodes.
var elasticPlan = []elasticFault{
	{kind: preemption, at: 2, after: 300},
	{kind: nodeLost, at: 2, after: 300},
	{kind: resize, at: 2, to: 3, after: 300},
}

// elasticProcessNodes is how many process nodes the demo's cluster has:
// the job's two, one for the lost node's replacement and one for the
// resize to three.
const elasticProcessNodes = 4

type faultKind int

const (
	// resize is kubectl scale trainjob/NAME --replicas=N: the scale
	// subresource.
	resize faultKind = iota
	// preemption is what Kueue does to a workload it preempts: the
	// TrainJob suspended, its pods gone with their grace to checkpoint,
	// and later resumed.
	preemption
	// nodeLost is a machine that dies under one of the job's pods: no
	// grace, no checkpoint.
	nodeLost
)

type elasticFault struct {
	kind faultKind
	// at is the world size the job trains at before the fault, to the
	// size a resize gives it.
	at, to int32
	after  int
}

// String says what the fault is, before it comes.
func (f elasticFault) String() string {
	what := ""
	switch f.kind {
	case resize:
		what = fmt.Sprintf("resize %d → %d", f.at, f.to)
	case preemption:
		what = "preemption (suspended and resumed, as Kueue does)"
	case nodeLost:
		what = "a node lost (its processes killed, its kubelet gone)"
	}
	return fmt.Sprintf("%s, %d steps after it trains at %d", what, f.after, f.at)
}

// preemptionWait is how long at most a preempted job stays suspended
// waiting for its pods to go before the demo resumes it.
const preemptionWait = 30 * time.Second

// elasticDemo applies the elastic job when its time comes and brings it
// the faults of elasticPlan.
type elasticDemo struct {
	c       *simcluster.Cluster
	repo    string
	applied bool
	// next is the index in elasticPlan of the fault to come; sinceStep
	// is the step rank 0 first reported at the size it expects after
	// lastFault (reports not newer than lastFault are from before it).
	next, sinceStep int
	sinceSeen       bool
	lastFault       time.Time
	// againWorld is the world size the job is to train at after the last
	// fault, until rank 0 first reports at it; 0 then.
	againWorld int
	// suspended is when the demo suspended the job for a preemption not
	// yet over, and at the step it did.
	suspended     time.Time
	suspendedStep int
	// done says what the demo did, for the view.
	done []string
}

func (e *elasticDemo) step(ctx context.Context) error {
	if !e.applied {
		if !reached(ctx, e.c.Client, realJobName, trainer.TrainJobComplete, trainer.TrainJobFailed) {
			return nil
		}
		if _, err := simcluster.ApplyFiles(ctx, e.c.Client, demoNamespace,
			filepath.Join(e.repo, elasticRuntime), filepath.Join(e.repo, elasticJob)); err != nil {
			return err
		}
		e.applied = true
		return nil
	}
	if e.next >= len(elasticPlan) && e.againWorld == 0 {
		return nil
	}
	job := &trainer.TrainJob{}
	if err := e.c.Client.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: elasticJobName}, job); err != nil {
		return nil
	}
	if !e.suspended.IsZero() {
		return e.resume(ctx, job)
	}
	world, step, ok := elasticProgress(job.Status.TrainerStatus)
	if !ok {
		return nil
	}
	reported := job.Status.TrainerStatus.LastUpdatedTime.Time
	e.trainingAgain(world, reported)
	if !meta.IsStatusConditionTrue(job.Status.Conditions, trainer.TrainJobRunning) {
		return nil
	}
	f, due := e.due(world, step, reported)
	if !due {
		return nil
	}
	switch f.kind {
	case resize:
		if err := trainjobscale.Set(ctx, e.c.Client, client.ObjectKeyFromObject(job), f.to); err != nil {
			return fmt.Errorf("resizing TrainJob %s/%s to %d nodes: %w", job.Namespace, job.Name, f.to, err)
		}
		e.faultDone(fmt.Sprintf("resized %d → %d at step %d", f.at, f.to, step), f.to, time.Now())
	case preemption:
		if err := suspend(ctx, e.c.Client, job, true); err != nil {
			return fmt.Errorf("suspending TrainJob %s/%s: %w", job.Namespace, job.Name, err)
		}
		e.suspended, e.suspendedStep = time.Now(), step
	case nodeLost:
		node, err := loseNodeOf(ctx, e.c, job)
		if err != nil {
			return fmt.Errorf("losing a node of TrainJob %s/%s: %w", job.Namespace, job.Name, err)
		}
		if node == "" {
			return nil // no pod to lose yet: the next look tries again
		}
		e.faultDone(fmt.Sprintf("%s lost at step %d", node, step), f.at, time.Now())
	}
	return nil
}

// resume ends a preemption once the job's pods have gone (their grace to
// checkpoint spent), or after preemptionWait.
func (e *elasticDemo) resume(ctx context.Context, job *trainer.TrainJob) error {
	pods := &corev1.PodList{}
	if err := e.c.Client.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: job.Name}); err != nil {
		return nil
	}
	if len(pods.Items) > 0 && time.Since(e.suspended) < preemptionWait {
		return nil
	}
	if err := suspend(ctx, e.c.Client, job, false); err != nil {
		return fmt.Errorf("resuming TrainJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	e.faultDone(fmt.Sprintf("preempted at step %d, resumed after %s", e.suspendedStep, time.Since(e.suspended).Round(time.Second)),
		elasticPlan[e.next].at, time.Now())
	e.suspended = time.Time{}
	return nil
}

// faultDone records a fault of the plan as done at time at, after which
// the job is to train at world size world: the next fault counts its
// steps from the reports after it.
func (e *elasticDemo) faultDone(what string, world int32, at time.Time) {
	e.done = append(e.done, what)
	e.next++
	e.sinceSeen = false
	e.lastFault = at
	e.againWorld = int(world)
}

// trainingAgain adds to the last fault's line how long after it rank 0
// first reported progress at the size that follows it: the time the fault
// cost beside the work redone, as the job's own reports show it (the
// goodput account sees no disruption when a node is lost and the
// survivors re-form the group without a restart of the TrainJob).
func (e *elasticDemo) trainingAgain(world int, reported time.Time) {
	if e.againWorld == 0 || world != e.againWorld || !reported.After(e.lastFault) {
		return
	}
	e.done[len(e.done)-1] += fmt.Sprintf(", training again %s later", reported.Sub(e.lastFault).Round(time.Second))
	e.againWorld = 0
}

// due says whether the next fault of the plan is due, now that rank 0
// reported step at world size world, at time reported.
func (e *elasticDemo) due(world, step int, reported time.Time) (elasticFault, bool) {
	if e.next >= len(elasticPlan) {
		return elasticFault{}, false
	}
	f := elasticPlan[e.next]
	// A report of the run before the last fault (its time is to the
	// second, so one of the same second is taken as before it) would
	// count steps the job has not yet trained again.
	if world != int(f.at) || !reported.After(e.lastFault) {
		return f, false
	}
	if !e.sinceSeen {
		e.sinceStep, e.sinceSeen = step, true
	}
	return f, step >= e.sinceStep+f.after
}

// String is the view's line about what the demo does to the elastic job.
func (e *elasticDemo) String() string {
	if !e.applied {
		return fmt.Sprintf("%s comes once %s has finished (both listen on port 29500 of this machine)", elasticJobName, realJobName)
	}
	s := "the demo's faults while it trains: "
	for i, f := range elasticPlan {
		if i > 0 {
			s += "; "
		}
		switch {
		case i < len(e.done):
			s += fmt.Sprintf("%d done: %s", i+1, e.done[i])
		case i == e.next && !e.suspended.IsZero():
			s += fmt.Sprintf("%d under way: preempted at step %d, suspended for %s, until its pods have gone", i+1, e.suspendedStep, time.Since(e.suspended).Round(time.Second))
		default:
			s += fmt.Sprintf("%d to come: %s", i+1, f)
		}
	}
	return s
}

// elasticProgress is the world size and the step that rank 0 last
// reported, if it did.
func elasticProgress(ts *trainer.TrainerStatus) (world, step int, ok bool) {
	if ts == nil {
		return 0, 0, false
	}
	w, errW := strconv.Atoi(metricOf(ts.Metrics, "world_size"))
	s, errS := strconv.Atoi(metricOf(ts.Metrics, "step"))
	return w, s, errW == nil && errS == nil
}

func metricOf(metrics []trainer.Metric, name string) string {
	for _, m := range metrics {
		if m.Name == name {
			return m.Value
		}
	}
	return ""
}

// suspend sets spec.suspend, as Kueue does when it preempts a workload and
// when it admits it again.
func suspend(ctx context.Context, c client.Client, job *trainer.TrainJob, suspended bool) error {
	patch := client.MergeFrom(job.DeepCopy())
	job.Spec.Suspend = ptr.To(suspended)
	return c.Patch(ctx, job, patch)
}

// nodesLine is "2 (2:3) · resized 12s ago", the size of an elastic job's
// workload, or "" for a job that cannot be resized.
func nodesLine(n *trainer.NodesStatus, now time.Time) string {
	if n == nil || n.Range == "" {
		return ""
	}
	s := fmt.Sprintf("%d (%s)", n.Current, n.Range)
	if t := n.LastResizeTime; t != nil {
		s += " · resized " + now.Sub(t.Time).Round(time.Second).String() + " ago"
	}
	return s
}
