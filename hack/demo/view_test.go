package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/steplog"
)

func TestClipCountsOnlyVisibleCharacters(t *testing.T) {
	colored := "\x1b[1mabc\x1b[0m def"
	cases := []struct {
		in    string
		width int
		want  string
	}{
		{"abcdef", 0, "abcdef"},
		{"abcdef", 6, "abcdef"},
		{"abcdef", 4, "abcd\x1b[0m"},
		{colored, 7, colored},
		{colored, 4, "\x1b[1mabc\x1b[0m \x1b[0m"},
		{"→ é", 2, "→ \x1b[0m"},
	}
	for _, tc := range cases {
		if got := clip(tc.in, tc.width); got != tc.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func TestSchedulerSaysTheFirstSentenceReadably(t *testing.T) {
	pod := corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/8 nodes are available: resource gap: map[nvidia.com/gpu:{{8 0} {<nil>}  DecimalSI}]. no new claims to deallocate, preemption: 0/8 nodes are available.",
	}}}}
	early := corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/8 nodes are available: pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 3. preemption: no",
	}}}}
	want := "0/8 nodes are available: resource gap: 8 nvidia.com/gpu"
	if got := schedulerSays([]corev1.Pod{{}, early, pod}); got != want {
		t.Errorf("schedulerSays = %q, want %q", got, want)
	}
	if got := schedulerSays([]corev1.Pod{early}); !strings.Contains(got, "sibling") {
		t.Errorf("schedulerSays with only an early message = %q, want that message", got)
	}
}

func TestPodSummary(t *testing.T) {
	pod := func(phase corev1.PodPhase, node string) corev1.Pod {
		return corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	}
	pods := []corev1.Pod{
		pod(corev1.PodRunning, "n1"), pod(corev1.PodRunning, "n2"), pod(corev1.PodRunning, "n1"),
		pod(corev1.PodPending, ""), pod(corev1.PodSucceeded, "n3"),
	}
	summary, nodes := podSummary(pods)
	if want := "3 Running, 1 Pending (unscheduled), 1 Succeeded"; summary != want {
		t.Errorf("summary %q, want %q", summary, want)
	}
	if diff := cmp.Diff([]string{"n1", "n2"}, nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	var many []corev1.Pod
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		many = append(many, pod(corev1.PodRunning, n))
	}
	if _, nodes := podSummary(many); !cmp.Equal(nodes, []string{"a", "b", "c", "d", "2 more"}) {
		t.Errorf("nodes of six = %q, want four named and 2 more", nodes)
	}
}

func TestJobsStatusShowsTheCountsThatAreNotZero(t *testing.T) {
	got := jobsStatus([]trainer.JobStatus{
		{Name: "node", Active: ptr.To[int32](1), Ready: ptr.To[int32](1), Succeeded: ptr.To[int32](0)},
		{Name: "launcher"},
	})
	if want := "node: 1 active, 1 ready; launcher: none"; got != want {
		t.Errorf("jobsStatus = %q, want %q", got, want)
	}
}

func TestHistoryRecordsEachNewState(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := history{}
	for i, state := range []string{"-", "Created", "Created", "Running", "Running", "Complete"} {
		h.record(&snapshot{at: created.Add(time.Duration(i) * 5 * time.Second), jobs: []jobView{
			{namespace: "default", name: "j", created: created, state: state},
		}})
	}
	if got, want := h.of(jobView{namespace: "default", name: "j"}), "Created → Running at 15s → Complete at 25s"; got != want {
		t.Errorf("history %q, want %q", got, want)
	}
}

func TestFitRowsKeepsAFrameWithinTheTerminal(t *testing.T) {
	frame := "1\n2\n3\n4\n5\n"
	if got := fitRows(frame, 10); got != frame {
		t.Errorf("a frame that fits was changed: %q", got)
	}
	if got, want := fitRows(frame, 4), "1\n2\n(3 more lines: make the terminal taller)\n"; got != want {
		t.Errorf("fitRows(5 lines, 4 rows) = %q, want %q", got, want)
	}
}

func TestProgressLine(t *testing.T) {
	if got := progressLine(nil); got != "" {
		t.Errorf("progressLine(nil) = %q, want nothing before the first report", got)
	}
	ts := &trainer.TrainerStatus{
		ProgressPercentage: ptr.To[int32](45), EstimatedRemainingSeconds: ptr.To[int32](180),
		Metrics: []trainer.Metric{{Name: "loss", Value: "0.25"}, {Name: "step", Value: "9"}},
	}
	want := "█████████░░░░░░░░░░░ 45% · 3m0s left · loss 0.25, step 9"
	if got := progressLine(ts); got != want {
		t.Errorf("progressLine = %q, want %q", got, want)
	}
}

// The view says how to follow the training's output for a job whose first
// trainer pod runs on a process node, and only then: a fake node's pod has
// no log.
func TestLogsHintNamesRankZeroOnAProcessNode(t *testing.T) {
	pod := func(name, node, index string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: index}},
			Spec:       corev1.PodSpec{NodeName: node},
		}
	}
	process := map[string]bool{"process-node-1": true, "process-node-2": true}
	real := []corev1.Pod{pod("ddp-node-0-1-abcde", "process-node-2", "1"), pod("ddp-node-0-0-fghij", "process-node-1", "0")}
	if got := logsHint(real, process); !strings.HasPrefix(got, "kubectl logs -f ddp-node-0-0-fghij ") {
		t.Errorf("logsHint of a job on process nodes = %q, want kubectl logs -f of its rank-0 pod", got)
	}
	fake := []corev1.Pod{pod("torch-gpu-node-0-0-abcde", "gpu-node-1", "0")}
	if got := logsHint(fake, process); got != "" {
		t.Errorf("logsHint of a job on fake nodes = %q, want none", got)
	}
}

func TestPluginModesSaysHowEachPluginRuns(t *testing.T) {
	got := pluginModes()
	for _, want := range []string{"in process: PlainML, Torch", "process: MPI, XGBoost", "wasm: JAX"} {
		if !strings.Contains(got, want) {
			t.Errorf("pluginModes() = %q, want it to say %q", got, want)
		}
	}
}

func TestNodesLine(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	if got := nodesLine(&trainer.NodesStatus{Current: 2}, now); got != "" {
		t.Errorf("nodesLine of a job that cannot be resized = %q, want none", got)
	}
	n := &trainer.NodesStatus{Current: 3, Range: "2:3", LastResizeTime: &metav1.Time{Time: now.Add(-12 * time.Second)}}
	if got, want := nodesLine(n, now), "3 (2:3) · resized 12s ago"; got != want {
		t.Errorf("nodesLine = %q, want %q", got, want)
	}
	ts := &trainer.TrainerStatus{Metrics: []trainer.Metric{{Name: "loss", Value: "0.1"}, {Name: "step", Value: "40"}, {Name: "world_size", Value: "3"}}}
	if w, s, ok := elasticProgress(ts); w != 3 || s != 40 || !ok {
		t.Errorf("elasticProgress = %d, %d, %t, want 3, 40, true", w, s, ok)
	}
}

func TestGoodputLine(t *testing.T) {
	created := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	if got := goodputLine(nil, created, created.Add(time.Minute)); got != "" {
		t.Errorf("goodputLine(nil) = %q, want nothing before the first report", got)
	}
	g := &trainer.GoodputStatus{
		ElapsedSeconds: 100, ProductiveSeconds: 70,
		Lost:  trainer.GoodputLoss{StartUpSeconds: 20, RedoneSeconds: 10},
		State: trainer.GoodputRestarting, Since: metav1.NewTime(created.Add(100 * time.Second)), UpdateTime: metav1.NewTime(created.Add(100 * time.Second)),
	}
	// Brought up to the frame's time: 20 s more restarting.
	want := "58% of 2m0s · lost: start-up 20s, restart 20s, redone 10s · restarting since 20s"
	if got := goodputLine(g, created, created.Add(120*time.Second)); got != want {
		t.Errorf("goodputLine = %q, want %q", got, want)
	}
}

// A finished job's account is set beside the script's own log; nothing is
// said before the account is closed or without a log.
func TestStepLogLine(t *testing.T) {
	runs := []steplog.Run{
		{From: 0, Steps: []int{1, 2, 3, 4}, Times: []float64{10, 20, 30, 40}},
		{From: 2, Steps: []int{3, 4, 5}, Times: []float64{60, 70, 80}},
	}
	// Kept: 10..20 of the first run and 60..80 of the second, 30s of 100s.
	g := &trainer.GoodputStatus{State: trainer.GoodputFinished, ElapsedSeconds: 100, ProductiveSeconds: 32}
	want := "the script's step log: 30.0% kept (30.0s of 100s), 2 steps done twice · the account: 32.0%, 2.0 points apart"
	if got := stepLogLine(g, runs); got != want {
		t.Errorf("stepLogLine = %q, want %q", got, want)
	}
	once := []steplog.Run{runs[0], {From: 3, Steps: []int{4, 5}, Times: []float64{60, 70}}}
	if got := stepLogLine(g, once); !strings.Contains(got, ", 1 step done twice ·") {
		t.Errorf("stepLogLine with one step done twice = %q, want it to say \"1 step done twice\"", got)
	}
	if got := stepLogLine(g, runs[:1]); !strings.Contains(got, ", no step done twice ·") {
		t.Errorf("stepLogLine with no step done twice = %q, want it to say \"no step done twice\"", got)
	}
	training := *g
	training.State = trainer.GoodputTraining
	for name, got := range map[string]string{
		"training":   stepLogLine(&training, runs),
		"no log":     stepLogLine(g, nil),
		"no account": stepLogLine(nil, runs),
	} {
		if got != "" {
			t.Errorf("%s: stepLogLine = %q, want none", name, got)
		}
	}
}
