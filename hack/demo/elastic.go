package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// The elastic real job of examples/realjobs: applied once torch-ddp has
// finished, since the process nodes share this machine's network and both
// jobs' rendezvous listen on port 29500, then resized while it trains.
var (
	elasticRuntime = "examples/realjobs/torch-elastic-runtime.yaml"
	elasticJob     = "examples/realjobs/torch-elastic.yaml"
)

const elasticJobName = "torch-elastic"

// elasticPlan is what the demo does to the elastic job: each resize comes
// once rank 0 has reported `after` steps at the size before it (its
// world_size metric), so that the view shows it train at every size.
var elasticPlan = []elasticResize{{from: 2, to: 3, after: 100}, {from: 3, to: 2, after: 150}}

type elasticResize struct {
	from, to int32
	after    int
}

// elasticDemo applies the elastic job when its time comes and resizes it
// by its scale subresource, as `kubectl scale trainjob/torch-elastic
// --replicas=N` does.
type elasticDemo struct {
	c       *simcluster.Cluster
	repo    string
	applied bool
	// next is the index in elasticPlan of the resize to come; sinceStep
	// is the step the size before it was first reported at.
	next, sinceStep int
	sinceSeen       bool
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
	if e.next >= len(elasticPlan) {
		return nil
	}
	job := &trainer.TrainJob{}
	if err := e.c.Client.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: elasticJobName}, job); err != nil {
		return nil
	}
	if !meta.IsStatusConditionTrue(job.Status.Conditions, trainer.TrainJobRunning) {
		return nil
	}
	world, step, ok := elasticProgress(job.Status.TrainerStatus)
	if !ok {
		return nil
	}
	r, due := e.due(world, step)
	if !due {
		return nil
	}
	if err := scale(ctx, e.c.Client, job, r.to); err != nil {
		return fmt.Errorf("resizing TrainJob %s/%s to %d nodes: %w", job.Namespace, job.Name, r.to, err)
	}
	e.done = append(e.done, fmt.Sprintf("%d → %d at step %d", r.from, r.to, step))
	e.next++
	e.sinceSeen = false
	return nil
}

// due says whether the next resize of the plan is due, now that rank 0
// reported step at world size world.
func (e *elasticDemo) due(world, step int) (elasticResize, bool) {
	if e.next >= len(elasticPlan) {
		return elasticResize{}, false
	}
	r := elasticPlan[e.next]
	if world != int(r.from) {
		return r, false
	}
	if !e.sinceSeen {
		e.sinceStep, e.sinceSeen = step, true
	}
	return r, step >= e.sinceStep+r.after
}

// String is the view's line about what the demo does to the elastic job.
func (e *elasticDemo) String() string {
	if !e.applied {
		return fmt.Sprintf("%s comes once %s has finished (both listen on port 29500 of this machine)", elasticJobName, realJobName)
	}
	s := "the demo resizes it (kubectl scale trainjob/" + elasticJobName + " --replicas=N): "
	for i, r := range elasticPlan {
		if i > 0 {
			s += "; "
		}
		if i < len(e.done) {
			s += e.done[i]
		} else {
			s += fmt.Sprintf("%d → %d %d steps after it trains at %d", r.from, r.to, r.after, r.from)
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

func scale(ctx context.Context, c client.Client, job *trainer.TrainJob, replicas int32) error {
	s := &autoscalingv1.Scale{}
	if err := c.SubResource("scale").Get(ctx, job, s); err != nil {
		return err
	}
	s.Spec.Replicas = replicas
	return c.SubResource("scale").Update(ctx, job, client.WithSubResourceBody(s))
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
