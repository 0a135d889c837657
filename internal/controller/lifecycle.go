package controller

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/internal/runtimeref"
)

// The metrics of the TrainJob lifecycle. Their label sets are bounded by
// the number of runtimes (runtime_kind, runtime) and of condition reasons
// (reason), never by the number of TrainJobs: a per-TrainJob series is
// only served with metrics.perTrainJob (trainforge_trainjob_state).

// Label names of the lifecycle metrics.
const (
	labelState       = "state"
	labelRuntimeKind = "runtime_kind"
	labelRuntime     = "runtime"
	labelReason      = "reason"
	labelResult      = "result"
	labelCounted     = "counts_toward_max"
	labelNamespace   = "namespace"
	labelTrainJob    = "trainjob"
)

// The states of trainforge_trainjobs: the State column's value, except
// that a TrainJob whose objects are not created yet (its runtime is
// missing, a plugin failed, or it has not been reconciled yet) is Pending
// rather than Created.
const (
	StatePending   = "Pending"
	StateCreated   = trainer.TrainJobCreated
	StateRunning   = trainer.TrainJobRunning
	StateSuspended = trainer.TrainJobSuspended
	StateComplete  = trainer.TrainJobComplete
	StateFailed    = trainer.TrainJobFailed
)

// States lists every state of trainforge_trainjobs, each served for every
// runtime that has a TrainJob, at 0 when none is in it, so that a rate or
// an alert over a state has a series to read.
var States = []string{StatePending, StateCreated, StateRunning, StateSuspended, StateComplete, StateFailed}

var (
	runtimeLabels = []string{labelRuntimeKind, labelRuntime}

	creationToCreated = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "trainforge_trainjob_creation_to_created_seconds",
		Help: "Time from a TrainJob's creation to its objects being created (Created turned True), per runtime.",
		// Creation timestamps keep whole seconds.
		Buckets: []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
	}, runtimeLabels)
	creationToRunning = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "trainforge_trainjob_creation_to_running_seconds",
		Help:    "Time from a TrainJob's creation to its pods running (Running turned True) the first time, per runtime: queueing and scheduling included.",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400},
	}, runtimeLabels)
	runDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "trainforge_trainjob_run_duration_seconds",
		Help:    "Time a TrainJob ran before it finished, from when its pods last started running (Running turned True) to Complete or Failed, per runtime and result (Complete, Failed).",
		Buckets: []float64{10, 30, 60, 300, 600, 1800, 3600, 10800, 21600, 43200, 86400, 172800, 604800},
	}, append(runtimeLabels, labelResult))
	completions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trainforge_trainjob_completions_total",
		Help: "TrainJobs that completed (Complete turned True), per runtime.",
	}, runtimeLabels)
	failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trainforge_trainjob_failures_total",
		Help: "TrainJobs that failed (Failed turned True), per runtime and reason of the Failed condition.",
	}, append(runtimeLabels, labelReason))
	restarts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trainforge_trainjob_restarts_total",
		Help: "Restarts of TrainJobs (the growth of status.restarts.count), per runtime, and whether they spent the restart budget (status.restarts.countedTowardsMax).",
	}, append(runtimeLabels, labelCounted))

	trainJobsDesc = prometheus.NewDesc("trainforge_trainjobs",
		"TrainJobs in each state, per runtime, as the controller's cache holds them.",
		[]string{labelState, labelRuntimeKind, labelRuntime}, nil)
	trainJobStateDesc = prometheus.NewDesc("trainforge_trainjob_state",
		"1 for the state each TrainJob is in; served only with the configuration's metrics.perTrainJob, as it has one series per TrainJob.",
		[]string{labelNamespace, labelTrainJob, labelRuntimeKind, labelRuntime, labelState}, nil)
)

// lifecycleMetrics are the lifecycle metrics that the reconciler updates;
// the state gauges (trainJobCollector) are registered by SetupWithManager,
// which has the cache they are read from.
var lifecycleMetrics = []prometheus.Collector{creationToCreated, creationToRunning, runDuration, completions, failures, restarts}

// stateOf returns the state of a TrainJob for trainforge_trainjobs.
func stateOf(job *trainer.TrainJob) string {
	for _, t := range stateConditions {
		if meta.IsStatusConditionTrue(job.Status.Conditions, t) {
			return t
		}
	}
	if meta.IsStatusConditionTrue(job.Status.Conditions, trainer.TrainJobCreated) {
		return StateCreated
	}
	return StatePending
}

// trainJobCollector serves trainforge_trainjobs (and, when perTrainJob,
// trainforge_trainjob_state) from the TrainJobs in the cache at each
// scrape, so the counts cannot drift from what the cluster holds, and a
// deleted TrainJob's series go with it.
type trainJobCollector struct {
	reader      client.Reader
	perTrainJob bool
}

func (c *trainJobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- trainJobsDesc
	if c.perTrainJob {
		ch <- trainJobStateDesc
	}
}

type runtimeKey struct{ kind, name string }

func (c *trainJobCollector) Collect(ch chan<- prometheus.Metric) {
	// A cache that has not synced yet blocks a List: a scrape waits no
	// longer than Prometheus' own default timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	jobs := &trainer.TrainJobList{}
	// Read only, and a TrainJob carries its runtime's spec: no deep copy.
	if err := c.reader.List(ctx, jobs, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(trainJobsDesc, err)
		return
	}
	counts := map[runtimeKey]map[string]int{}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		rt := runtimeKey{runtimeref.Kind(job), job.Spec.RuntimeRef.Name}
		state := stateOf(job)
		if counts[rt] == nil {
			counts[rt] = map[string]int{}
		}
		counts[rt][state]++
		if c.perTrainJob {
			ch <- prometheus.MustNewConstMetric(trainJobStateDesc, prometheus.GaugeValue, 1, job.Namespace, job.Name, rt.kind, rt.name, state)
		}
	}
	for rt, byState := range counts {
		for _, state := range States {
			ch <- prometheus.MustNewConstMetric(trainJobsDesc, prometheus.GaugeValue, float64(byState[state]), state, rt.kind, rt.name)
		}
	}
}

// lifecycleSeen remembers, per TrainJob, whether its creation to Created
// and to Running have been observed, so that a TrainJob whose Created or
// Running condition turns True again (a plugin failed after it started, a
// resume, a JobSet restart) is not observed twice. It lives in memory
// only: a restarted controller finds those conditions True already, and
// observes no transition of them.
type lifecycleSeen struct {
	mu sync.Mutex
	m  map[types.UID]seenFlags
}

type seenFlags struct{ created, running bool }

// first marks what a TrainJob has reached and returns what it reached for
// the first time.
func (s *lifecycleSeen) first(uid types.UID, reached seenFlags) seenFlags {
	if reached == (seenFlags{}) {
		return seenFlags{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[types.UID]seenFlags{}
	}
	was := s.m[uid]
	s.m[uid] = seenFlags{created: was.created || reached.created, running: was.running || reached.running}
	return seenFlags{created: reached.created && !was.created, running: reached.running && !was.running}
}

func (s *lifecycleSeen) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, uid)
}

// turnedTrue reports whether condition typ is True in after and was not in
// before, and returns it.
func turnedTrue(before, after *trainer.TrainJob, typ string) (*metav1.Condition, bool) {
	c := meta.FindStatusCondition(after.Status.Conditions, typ)
	if c == nil || c.Status != metav1.ConditionTrue || meta.IsStatusConditionTrue(before.Status.Conditions, typ) {
		return nil, false
	}
	return c, true
}

// observeLifecycle updates the lifecycle metrics from the change of a
// TrainJob's status that the controller has just written.
func (r *TrainJobReconciler) observeLifecycle(before, after *trainer.TrainJob) {
	kind, name := runtimeref.Kind(after), after.Spec.RuntimeRef.Name
	created := after.CreationTimestamp.Time
	var reached seenFlags
	createdCond, createdNow := turnedTrue(before, after, trainer.TrainJobCreated)
	runningCond, runningNow := turnedTrue(before, after, trainer.TrainJobRunning)
	reached.created, reached.running = createdNow, runningNow
	first := r.lifecycle.first(after.UID, reached)
	if first.created {
		creationToCreated.WithLabelValues(kind, name).Observe(createdCond.LastTransitionTime.Sub(created).Seconds())
	}
	if first.running {
		creationToRunning.WithLabelValues(kind, name).Observe(runningCond.LastTransitionTime.Sub(created).Seconds())
	}
	for _, result := range []string{trainer.TrainJobComplete, trainer.TrainJobFailed} {
		finished, ok := turnedTrue(before, after, result)
		if !ok {
			continue
		}
		if result == trainer.TrainJobComplete {
			completions.WithLabelValues(kind, name).Inc()
		} else {
			failures.WithLabelValues(kind, name, finished.Reason).Inc()
		}
		// The Running condition before this write says since when the
		// pods ran; a TrainJob never seen running has no run time.
		if running := meta.FindStatusCondition(before.Status.Conditions, trainer.TrainJobRunning); running != nil && running.Status == metav1.ConditionTrue {
			runDuration.WithLabelValues(kind, name, result).Observe(finished.LastTransitionTime.Sub(running.LastTransitionTime.Time).Seconds())
		}
		r.lifecycle.forget(after.UID)
	}
	observeRestarts(kind, name, before.Status.Restarts, after.Status.Restarts)
}

// observeRestarts counts the restarts that a status write records: the
// growth of status.restarts.count, of which the growth of
// countedTowardsMax spent the restart budget. The status plugin that owns
// the workload reports both, whatever kind it built; the controller only
// compares two versions of the TrainJob, and the write's resourceVersion
// precondition makes before the version the write replaced, so that no
// restart is counted twice. Restarts made while no controller ran are
// counted by the first write after it starts.
func observeRestarts(kind, name string, before, after *trainer.RestartStatus) {
	if after == nil {
		return
	}
	var was trainer.RestartStatus
	if before != nil {
		was = *before
	}
	total := after.Count - was.Count
	if total <= 0 {
		return
	}
	counted := max(0, min(total, after.CountedTowardsMax-was.CountedTowardsMax))
	if counted > 0 {
		restarts.WithLabelValues(kind, name, strconv.FormatBool(true)).Add(float64(counted))
	}
	if rest := total - counted; rest > 0 {
		restarts.WithLabelValues(kind, name, strconv.FormatBool(false)).Add(float64(rest))
	}
}
