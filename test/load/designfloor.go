package main

import (
	"github.com/trainforge/trainforge/test/load/harness"

	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The design floor is what no TrainJob controller can beat on the same API
// server: the harness makes, per TrainJob, exactly the writes any such
// controller must make, and nothing else. The TrainJob is created by the
// submitters (as in every row); then writers acting as a controller's
// workers, which watch the TrainJobs as a controller does, create its
// built objects (the same JobSet the built-ins build, owned by the
// TrainJob) and make one status update that sets the Created condition.
// There is no plugin call, no server-side apply, no Event, no runtime
// snapshot in the status: whatever a controller spends beyond this row is
// the price of what it does beyond the minimum.

// designFloorRow is the row's name in -rows and in the table.
const designFloorRow = "design-floor"

// designFloorMessage is the Created condition's message the writers set.
const designFloorMessage = "JobSet created by the load harness's design floor"

// designWriters are the design floor's stand-in for a controller: an
// informer on the TrainJobs, a work queue and `workers` goroutines that
// make the writes.
type designWriters struct {
	c       client.Client
	cache   cache.Cache
	queue   workqueue.TypedRateLimitingInterface[int]
	objs    [][]*unstructured.Unstructured
	n       int
	workers int

	mu       sync.Mutex
	firstErr error
	wg       sync.WaitGroup
}

// startDesignWriters starts the writers' informer (the controller user's
// list and watch of TrainJobs) and waits until it is synced, as a
// controller waits for its caches; then it starts the workers. Stop ends
// them.
func startDesignWriters(ctx context.Context, cl *harness.Cluster, scheme *runtime.Scheme, objs [][]*unstructured.Unstructured, workers int) (*designWriters, error) {
	c, err := client.New(cl.ControllerConfig, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	// Discovery of the kinds it writes happens before the clock starts,
	// as for a controller.
	if err := c.List(ctx, &jobsetv1alpha2.JobSetList{}, client.InNamespace(namespace), client.Limit(1)); err != nil {
		return nil, err
	}
	ca, err := cache.New(cl.ControllerConfig, cache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	w := &designWriters{
		c: c, cache: ca, objs: objs, n: len(objs), workers: workers,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[int]()),
	}
	inf, err := ca.GetInformer(ctx, &trainer.TrainJob{})
	if err != nil {
		return nil, err
	}
	enqueue := func(obj any) {
		if j, ok := obj.(*trainer.TrainJob); ok && !meta.IsStatusConditionTrue(j.Status.Conditions, trainer.TrainJobCreated) {
			if i, ok := w.index(j.Name); ok {
				w.queue.Add(i)
			}
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	go func() { _ = ca.Start(ctx) }()
	if !ca.WaitForCacheSync(ctx) {
		return nil, errors.New("design floor: the writers' TrainJob informer did not sync")
	}
	for range workers {
		w.wg.Go(func() { w.work(ctx) })
	}
	return w, nil
}

// index returns the sweep index of a TrainJob's name.
func (w *designWriters) index(name string) (int, bool) {
	i, err := strconv.Atoi(strings.TrimPrefix(name, "sweep-"))
	return i, err == nil && i >= 0 && i < w.n && name == jobName(i)
}

func (w *designWriters) work(ctx context.Context) {
	for {
		i, shutdown := w.queue.Get()
		if shutdown {
			return
		}
		retry, err := w.write(ctx, i)
		switch {
		case err != nil && ctx.Err() == nil:
			w.mu.Lock()
			if w.firstErr == nil {
				w.firstErr = fmt.Errorf("design floor: TrainJob %s: %w", jobName(i), err)
			}
			w.mu.Unlock()
			w.queue.Forget(i)
		case retry:
			w.queue.AddRateLimited(i)
		default:
			w.queue.Forget(i)
		}
		w.queue.Done(i)
	}
}

// write makes the i-th TrainJob's writes: its built objects' creates, then
// one status update with Created. retry says the TrainJob changed under
// it (a conflict): it is tried again from the cache, as a controller would.
func (w *designWriters) write(ctx context.Context, i int) (retry bool, err error) {
	job := &trainer.TrainJob{}
	if err := w.cache.Get(ctx, types.NamespacedName{Namespace: namespace, Name: jobName(i)}, job); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	if meta.IsStatusConditionTrue(job.Status.Conditions, trainer.TrainJobCreated) {
		return false, nil
	}
	for _, built := range w.objs[i] {
		o := built.DeepCopy()
		// The built objects were made for a TrainJob of the same name
		// whose UID was not known yet: they are owned by the real one.
		refs := o.GetOwnerReferences()
		for k := range refs {
			if refs[k].Kind == trainer.TrainJobKind && refs[k].Name == job.Name {
				refs[k].UID = job.UID
			}
		}
		o.SetOwnerReferences(refs)
		if err := w.c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, fmt.Errorf("creating %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	meta.SetStatusCondition(&job.Status.Conditions, metav1.Condition{
		Type: trainer.TrainJobCreated, Status: metav1.ConditionTrue,
		Reason: trainer.TrainJobJobsCreatedReason, Message: designFloorMessage,
	})
	if err := w.c.Status().Update(ctx, job); err != nil {
		if apierrors.IsConflict(err) {
			return true, nil
		}
		return false, fmt.Errorf("updating the status: %w", err)
	}
	return false, nil
}

// stop ends the workers and returns the first write that failed.
func (w *designWriters) stop() error {
	w.queue.ShutDown()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstErr
}

// err returns the first write that failed so far.
func (w *designWriters) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstErr
}

// waitOrFail waits for the tracker, and stops early when a write failed
// (the tracker would wait for it until the timeout).
func (w *designWriters) waitOrFail(ctx context.Context, t *tracker) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if w.err() != nil {
					cancel()
					return
				}
			}
		}
	}()
	err := t.wait(ctx)
	if werr := w.err(); werr != nil {
		return werr
	}
	return err
}

// designFloor runs the design-floor row. In burst mode the writers run
// while the TrainJobs are created; in restart mode the TrainJobs are all
// created first and the clock starts with the writers (their informer's
// sync included, as a controller's start is).
func (o *options) designFloor(ctx context.Context, dir string, cl *harness.Cluster, admin client.Client, scheme *runtime.Scheme, rtName string, r *result) ([2]time.Time, error) {
	objs, err := floorObjects(ctx, clusterRuntime(o.runtime), o.n)
	if err != nil {
		return [2]time.Time{}, err
	}
	t, err := startTracker(ctx, cl.Admin, scheme, o.n, jobSetsAndCreated)
	if err != nil {
		return [2]time.Time{}, err
	}
	sent := make([]time.Time, o.n)
	var w *designWriters
	var start time.Time
	serverBase := cl.ServerCPU()
	// The API server's profile (-profile), to set beside the other rows'.
	var profDone <-chan struct{}
	if o.mode == "burst" {
		if w, err = startDesignWriters(ctx, cl, scheme, objs, o.workers); err != nil {
			return [2]time.Time{}, err
		}
		serverBase = cl.ServerCPU()
		start = time.Now()
		profDone = o.startProfile(nil, cl, dir)
		if err := createTrainJobs(ctx, admin, rtName, o.n, o.clients, sent); err != nil {
			_ = w.stop()
			<-profDone
			return [2]time.Time{}, err
		}
	} else {
		if err := createTrainJobs(ctx, admin, rtName, o.n, o.clients, sent); err != nil {
			return [2]time.Time{}, err
		}
		serverBase = cl.ServerCPU()
		start = time.Now()
		for i := range sent {
			sent[i] = start
		}
		profDone = o.startProfile(nil, cl, dir)
		if w, err = startDesignWriters(ctx, cl, scheme, objs, o.workers); err != nil {
			<-profDone
			return [2]time.Time{}, err
		}
	}
	werr := w.waitOrFail(ctx, t)
	end := time.Now()
	<-profDone
	if serr := w.stop(); werr == nil {
		werr = serr
	}
	if werr != nil {
		return [2]time.Time{}, werr
	}
	r.makespan = t.last().Sub(start)
	r.jobSet, r.created = t.latencies(sent)
	r.createdSeen = t.createdSeen()
	r.serverCPU = cl.ServerCPU() - serverBase
	return [2]time.Time{start, end}, nil
}
