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
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// tracker watches the namespace and records when each TrainJob's JobSet
// and its Created condition were first seen.
type tracker struct {
	mu      sync.Mutex
	n       int
	jobSet  []time.Time
	created []time.Time
	// jobSets and createds count the non-zero entries.
	jobSets, createds int
	// needCreated: done also waits for every Created condition.
	needCreated bool
	done        chan struct{}
	closed      bool
}

// startTracker starts the watches and waits for their caches.
func startTracker(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, n int, needCreated bool) (*tracker, error) {
	t := &tracker{n: n, jobSet: make([]time.Time, n), created: make([]time.Time, n), needCreated: needCreated, done: make(chan struct{})}
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
			t.seen(o.GetName(), false)
		}
	}}); err != nil {
		return nil, err
	}
	if needCreated {
		tjInf, err := c.GetInformer(ctx, &trainer.TrainJob{})
		if err != nil {
			return nil, err
		}
		onJob := func(obj any) {
			if j, ok := obj.(*trainer.TrainJob); ok && meta.IsStatusConditionTrue(j.Status.Conditions, trainer.TrainJobCreated) {
				t.seen(j.Name, true)
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

func (t *tracker) seen(name string, created bool) {
	i, err := strconv.Atoi(strings.TrimPrefix(name, "sweep-"))
	if err != nil || i < 0 || i >= t.n {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case created && t.created[i].IsZero():
		t.created[i] = now
		t.createds++
	case !created && t.jobSet[i].IsZero():
		t.jobSet[i] = now
		t.jobSets++
	}
	if !t.closed && t.jobSets == t.n && (!t.needCreated || t.createds == t.n) {
		t.closed = true
		close(t.done)
	}
}

// wait returns when every TrainJob has what it needs, or with ctx's error
// and how far it got.
func (t *tracker) wait(ctx context.Context) error {
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		defer t.mu.Unlock()
		return fmt.Errorf("%d of %d JobSets and %d of %d Created conditions seen: %w", t.jobSets, t.n, t.createds, t.n, ctx.Err())
	}
}

// last returns the latest time anything was seen.
func (t *tracker) last() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var last time.Time
	for i := range t.n {
		for _, at := range []time.Time{t.jobSet[i], t.created[i]} {
			if at.After(last) {
				last = at
			}
		}
	}
	return last
}

// latencies returns, per TrainJob, the time from since[i] to when its
// JobSet, and its Created condition, were seen.
func (t *tracker) latencies(since []time.Time) (jobSet, created []time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.n {
		if !t.jobSet[i].IsZero() {
			jobSet = append(jobSet, t.jobSet[i].Sub(since[i]))
		}
		if !t.created[i].IsZero() {
			created = append(created, t.created[i].Sub(since[i]))
		}
	}
	return jobSet, created
}
