package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// doneWhen says what a row waits for before its TrainJobs count as done.
type doneWhen int

const (
	// jobSetsOnly: the floor, which creates JobSets and no TrainJob.
	jobSetsOnly doneWhen = iota
	// jobSetsCreatedIfSet: another controller (-compare), which may set no
	// Created condition (Kubeflow Trainer sets none): done when every
	// JobSet exists; Created conditions are recorded when they come.
	jobSetsCreatedIfSet
	// jobSetsAndCreated: Trainforge, which sets Created once it has
	// applied a TrainJob's objects: done when both are seen for each.
	jobSetsAndCreated
)

// tracker records when each TrainJob's JobSet and its Created condition
// were first seen, and says when the row has what it waits for.
type tracker struct {
	mu      sync.Mutex
	n       int
	want    doneWhen
	jobSet  []time.Time
	created []time.Time
	// jobSets and createds count the non-zero entries.
	jobSets, createds int
	done              chan struct{}
	closed            bool
}

func newTracker(n int, want doneWhen) *tracker {
	return &tracker{n: n, want: want, jobSet: make([]time.Time, n), created: make([]time.Time, n), done: make(chan struct{})}
}

// startTracker starts the watches and waits for their caches.
func startTracker(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, n int, want doneWhen) (*tracker, error) {
	t := newTracker(n, want)
	c, err := cache.New(cfg, cache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	js := &metav1.PartialObjectMetadata{}
	js.SetGroupVersionKind(jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet"))
	jsInf, err := c.GetInformer(ctx, js)
	if err != nil {
		return nil, err
	}
	if _, err := jsInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if o, ok := obj.(metav1.Object); ok {
			t.seen(o.GetName(), false, time.Now())
		}
	}}); err != nil {
		return nil, err
	}
	if want != jobSetsOnly {
		tjInf, err := c.GetInformer(ctx, &trainer.TrainJob{})
		if err != nil {
			return nil, err
		}
		onJob := func(obj any) {
			if j, ok := obj.(*trainer.TrainJob); ok && meta.IsStatusConditionTrue(j.Status.Conditions, trainer.TrainJobCreated) {
				t.seen(j.Name, true, time.Now())
			}
		}
		if _, err := tjInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    onJob,
			UpdateFunc: func(_, obj any) { onJob(obj) },
		}); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the harness's watches did not sync")
	}
	return t, nil
}

// watchedKinds are the kinds a TrainJob controller watches, Trainforge's
// and Kubeflow Trainer's alike.
var watchedKinds = []schema.GroupVersionKind{
	trainer.GroupVersion.WithKind(trainer.TrainJobKind),
	trainer.GroupVersion.WithKind(trainer.TrainingRuntimeKind),
	trainer.GroupVersion.WithKind(trainer.ClusterTrainingRuntimeKind),
	jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet"),
	schedulingv1alpha1.SchemeGroupVersion.WithKind("PodGroup"),
}

// warmWatchCaches lists and watches, as the admin, every kind a controller
// watches, until each watch is served, and stops. A fresh API server
// answers the first watch of a resource that nobody has read yet with 429
// (its watch cache is not ready) and the client retries a second later:
// a controller started on it would sit out that second during the burst,
// after it looked ready and idle, and every row would carry it. Each row's
// API server is warmed so before its controller starts (or, for the
// floors, before the clock does).
func warmWatchCaches(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, err := cache.New(cfg, cache.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	for _, gvk := range watchedKinds {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		if _, err := c.GetInformer(ctx, m); err != nil {
			return fmt.Errorf("warming the watch cache of %s: %w", gvk.Kind, err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("warming the watch caches of %v: not synced: %w", watchedKinds, ctx.Err())
	}
	return nil
}

// seen records, at `at`, the JobSet (created false) or the Created
// condition of the TrainJob called name; names outside the sweep are
// not the harness's and are ignored.
func (t *tracker) seen(name string, created bool, at time.Time) {
	i, err := strconv.Atoi(strings.TrimPrefix(name, "sweep-"))
	if err != nil || i < 0 || i >= t.n {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case created && t.created[i].IsZero():
		t.created[i] = at
		t.createds++
	case !created && t.jobSet[i].IsZero():
		t.jobSet[i] = at
		t.jobSets++
	}
	if !t.closed && t.jobSets == t.n && (t.want != jobSetsAndCreated || t.createds == t.n) {
		t.closed = true
		close(t.done)
	}
}

// wait returns when every TrainJob has what the row waits for, or with
// ctx's error and how far it got.
func (t *tracker) wait(ctx context.Context) error {
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		defer t.mu.Unlock()
		switch t.want {
		case jobSetsOnly:
			return fmt.Errorf("%d of %d JobSets seen: %w", t.jobSets, t.n, ctx.Err())
		case jobSetsCreatedIfSet:
			return fmt.Errorf("%d of %d JobSets seen (and %d Created conditions, which this row does not wait for): %w", t.jobSets, t.n, t.createds, ctx.Err())
		default:
			return fmt.Errorf("%d of %d JobSets and %d of %d Created conditions seen: %w", t.jobSets, t.n, t.createds, t.n, ctx.Err())
		}
	}
}

// createdSeen returns how many TrainJobs' Created conditions were seen.
func (t *tracker) createdSeen() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.createds
}

// last returns when the last TrainJob had everything it gets: its JobSet,
// and its Created condition when every TrainJob got one.
func (t *tracker) last() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var last time.Time
	for i := range t.n {
		if t.jobSet[i].After(last) {
			last = t.jobSet[i]
		}
		if t.createds == t.n && t.created[i].After(last) {
			last = t.created[i]
		}
	}
	return last
}

// latencies returns, per TrainJob, the time from since[i] to when its
// JobSet was seen, and to when its Created condition was seen; created
// is nil unless every TrainJob's was (a partial list would be the
// fastest ones only).
func (t *tracker) latencies(since []time.Time) (jobSet, created []time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.n {
		if !t.jobSet[i].IsZero() {
			jobSet = append(jobSet, t.jobSet[i].Sub(since[i]))
		}
		if t.createds == t.n {
			created = append(created, t.created[i].Sub(since[i]))
		}
	}
	return jobSet, created
}
