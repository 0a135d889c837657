package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The demo brings the elastic job one fault of each kind: a preemption, a
// lost node at minNodes (2) and a resize 2 → 3, with a process node for
// every pod it will have run on: its two first, the lost one's
// replacement and the resize's.
func TestElasticPlanBringsOneFaultOfEachKindWithANodeForEachPod(t *testing.T) {
	var kinds []faultKind
	size := int32(2) // torch-elastic.yaml's numNodes
	for i, f := range elasticPlan {
		kinds = append(kinds, f.kind)
		if f.at != size {
			t.Errorf("fault %d expects the job at %d nodes; it is at %d then", i, f.at, size)
		}
		if f.kind == resize {
			size = f.to
		}
		if f.after < 50 {
			t.Errorf("fault %d comes %d steps after the one before: too few to see the job train between them", i, f.after)
		}
	}
	if diff := cmp.Diff([]faultKind{preemption, nodeLost, resize}, kinds); diff != "" {
		t.Errorf("the plan's faults (-want +got):\n%s", diff)
	}
	nodes := int32(2) // the job's first pods
	for _, f := range elasticPlan {
		switch f.kind {
		case nodeLost:
			nodes++ // the replacement: the lost node does not come back
		case resize:
			nodes += max(f.to-f.at, 0)
		}
	}
	if elasticProcessNodes < nodes {
		t.Errorf("the demo's cluster has %d process nodes; its elastic job runs on %d", elasticProcessNodes, nodes)
	}
}

// Each fault comes once rank 0 has reported its plan's steps at the size
// it expects, counted from the first report after the fault before it:
// never on a report of the run before that fault (the same world size
// after a preemption, the old size after a resize).
func TestElasticDemoBringsEachFaultAfterStepsSinceTheLastOne(t *testing.T) {
	e := &elasticDemo{applied: true}
	start := time.Date(2026, 12, 4, 16, 0, 0, 0, time.UTC)
	now := start
	report := func(world, step int, wait time.Duration) (faultKind, bool) {
		now = now.Add(wait)
		f, due := e.due(world, step, now)
		return f.kind, due
	}
	step := 3
	var did []faultKind
	for i, f := range elasticPlan {
		at := int(f.at)
		if _, due := report(at, step, time.Second); due {
			t.Fatalf("fault %d due on the first report after the one before", i)
		}
		first := step
		step = first + f.after - 1
		if _, due := report(at, step, 10*time.Second); due {
			t.Fatalf("fault %d due at step %d, %d steps after %d", i, step, f.after-1, first)
		}
		step++
		kind, due := report(at, step, time.Second)
		if !due {
			t.Fatalf("fault %d not due at step %d, %d steps after %d", i, step, f.after, first)
		}
		did = append(did, kind)
		e.faultDone("done", f.at, now)
		// The same second as the fault: a report of the run before it,
		// which must not start the next count at its step.
		if _, due := report(at, step+500, 0); due {
			t.Fatalf("after fault %d, a report as old as the fault made the next one due", i)
		}
		if i+1 < len(elasticPlan) && elasticPlan[i+1].at != f.at {
			if _, due := report(at, step+500, time.Second); due {
				t.Fatalf("after fault %d, a report of the size before it made the next one due", i)
			}
		}
		step -= 2 // resumed from its last checkpoint
	}
	if diff := cmp.Diff([]faultKind{preemption, nodeLost, resize}, did); diff != "" {
		t.Errorf("faults done (-want +got):\n%s", diff)
	}
	if _, due := report(2, step+1000, time.Minute); due {
		t.Error("a fault due after the plan's last")
	}
}

// The view names each fault of the plan as done, under way or to come.
func TestElasticDemoLineNamesEachFault(t *testing.T) {
	e := &elasticDemo{applied: true}
	line := e.String()
	if n := strings.Count(line, "to come: "); n != len(elasticPlan) {
		t.Errorf("before the first fault, %d faults to come in %q, want %d", n, line, len(elasticPlan))
	}
	for _, want := range []string{"1 to come: preemption", "2 to come: a node lost", "3 to come: resize 2 → 3"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q does not say %q", line, want)
		}
	}
	e.suspended, e.suspendedStep = time.Now().Add(-3*time.Second), 131
	if line := e.String(); !strings.Contains(line, "1 under way: preempted at step 131, suspended for 3s") {
		t.Errorf("line while suspended %q does not say the preemption is under way", line)
	}
	e.suspended = time.Time{}
	e.faultDone("preempted at step 131, resumed after 6s", 2, time.Now())
	e.faultDone("process-node-2 lost at step 462", 2, time.Now())
	line = e.String()
	for _, want := range []string{"1 done: preempted at step 131, resumed after 6s", "2 done: process-node-2 lost at step 462", "3 to come: resize 2 → 3"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q does not say %q", line, want)
		}
	}
}

// The node lost is that of the running pod of the highest index on a
// process node, never the first pod's: it hosts the rendezvous.
func TestPodToLoseSparesTheRendezvousHost(t *testing.T) {
	pod := func(name, index, node string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: index}},
			Spec:       corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase},
		}
	}
	nodes := []string{"process-node-1", "process-node-2", "process-node-3"}
	terminating := pod("p2-old", "2", "process-node-3", corev1.PodRunning)
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	pods := []corev1.Pod{
		pod("p0", "0", "process-node-1", corev1.PodRunning),
		pod("p1", "1", "process-node-2", corev1.PodRunning),
		terminating,
		pod("p2", "2", "", corev1.PodPending),
		pod("p3", "3", "process-node-3", corev1.PodFailed),
	}
	if p, ok := podToLose(pods, nodes); !ok || p.Name != "p1" {
		t.Errorf("podToLose = %s, %t, want p1", p.Name, ok)
	}
	if p, ok := podToLose(pods[:1], nodes); ok {
		t.Errorf("podToLose of the rendezvous host alone = %s, want none", p.Name)
	}
	if p, ok := podToLose(pods[:2], nodes[:1]); ok {
		t.Errorf("podToLose of a pod on a node that is not a process node = %s, want none", p.Name)
	}
}

// Each fault's line says how long after it rank 0 first reported at the
// size that follows it: not a report of the group before it.
func TestElasticDemoSaysWhenTheJobTrainsAgainAfterAFault(t *testing.T) {
	e := &elasticDemo{applied: true}
	at := time.Date(2026, 12, 4, 16, 0, 0, 500_000_000, time.UTC)
	e.faultDone("resized 2 → 3 at step 262", 3, at)
	e.trainingAgain(3, at.Add(-time.Second))  // before the resize
	e.trainingAgain(2, at.Add(3*time.Second)) // the old group, still training
	if e.done[0] != "resized 2 → 3 at step 262" {
		t.Errorf("after reports of the group before the resize, the line says %q", e.done[0])
	}
	e.trainingAgain(3, at.Add(11*time.Second+500*time.Millisecond))
	e.trainingAgain(3, at.Add(20*time.Second))
	if want := "resized 2 → 3 at step 262, training again 12s later"; e.done[0] != want {
		t.Errorf("the line says %q, want %q", e.done[0], want)
	}
}
