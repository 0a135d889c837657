package procnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// A container is the agent's state of one container of a pod.
type container struct {
	spec     *corev1.Container
	init     bool
	restarts int32
	proc     *process
	state    corev1.ContainerState
	last     corev1.ContainerState
	// backoff is the delay of the next restart that comes within it of
	// the last failure (lastFailure), as the kubelet's back-off keeps it:
	// zero before the first failure.
	backoff     time.Duration
	lastFailure time.Time
	// restartAt is when a container waiting to start again starts; zero
	// when none waits.
	restartAt time.Time
	// done: exited, and not to be started again.
	done bool
}

// logPath is the log of the container's run n (its restart count then).
func (w *podWorker) logPath(name string, n int32) string {
	return filepath.Join(w.dir, "logs", name, strconv.Itoa(int(n))+".log")
}

// A podWorker plays the kubelet for one pod, from its binding to its
// deletion, in one goroutine: its containers' exits, the pod's updates
// and its restarts' back-off timers are the events of its loop.
type podWorker struct {
	node *nodeAgent
	dir  string

	mu  sync.Mutex
	pod *corev1.Pod // the latest seen
	// containers are the init containers, then the containers. Only the
	// worker's loop changes them, holding stateMu; the log server reads
	// them holding it.
	containers []*container
	stateMu    sync.Mutex

	kick  chan struct{}
	exits chan *container
	// gone is closed when the pod is no longer on the node: deleted from
	// the API server, or the node lost; lost says which.
	gone     chan struct{}
	goneOnce sync.Once
	lost     bool
	finished chan struct{}

	podIP    string
	volumes  map[string]string
	hosts    string
	initDone bool
	phase    corev1.PodPhase
	started  metav1.Time
	message  string
}

func newPodWorker(n *nodeAgent, pod *corev1.Pod) *podWorker {
	w := &podWorker{
		node: n, dir: filepath.Join(n.agent.cfg.Dir, "pods", string(pod.UID)), pod: pod,
		kick: make(chan struct{}, 1), exits: make(chan *container, 16),
		gone: make(chan struct{}), finished: make(chan struct{}), phase: corev1.PodPending,
	}
	for i := range pod.Spec.InitContainers {
		w.containers = append(w.containers, &container{spec: &pod.Spec.InitContainers[i], init: true})
	}
	for i := range pod.Spec.Containers {
		w.containers = append(w.containers, &container{spec: &pod.Spec.Containers[i]})
	}
	for _, c := range w.containers {
		c.state.Waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
	}
	return w
}

// update hands the worker the pod as the API server has it now.
func (w *podWorker) update(pod *corev1.Pod) {
	w.mu.Lock()
	w.pod = pod
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// remove tells the worker the pod is gone; lost when its node is.
func (w *podWorker) remove(lost bool) {
	w.goneOnce.Do(func() {
		w.mu.Lock()
		w.lost = lost
		w.mu.Unlock()
		close(w.gone)
	})
}

func (w *podWorker) current() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod
}

func (w *podWorker) logf(format string, args ...any) {
	pod := w.current()
	w.node.agent.logf("node %s: pod %s/%s: %s", w.node.name, pod.Namespace, pod.Name, fmt.Sprintf(format, args...))
}

// run is the worker's loop.
func (w *podWorker) run(ctx context.Context) {
	defer close(w.finished)
	defer w.cleanup()
	if !w.prepare(ctx) {
		w.terminate(ctx)
		return
	}
	w.stateMu.Lock()
	w.startNext(ctx)
	w.stateMu.Unlock()
	w.writeStatus(ctx)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		w.resetTimer(timer)
		select {
		case <-ctx.Done():
			w.stopAll(2 * time.Second)
			return
		case <-w.gone:
			w.terminate(ctx)
			return
		case c := <-w.exits:
			w.stateMu.Lock()
			w.exited(ctx, c)
			w.stateMu.Unlock()
			w.writeStatus(ctx)
		case <-timer.C:
			w.stateMu.Lock()
			w.restartDue(ctx)
			w.stateMu.Unlock()
			w.writeStatus(ctx)
		case <-w.kick:
			w.endedElsewhere(ctx)
		}
		if w.current().DeletionTimestamp != nil {
			w.terminate(ctx)
			return
		}
	}
}

// endedElsewhere stops the containers of a pod that the control plane
// made Failed or Succeeded (a kubelet stops what runs of a terminal pod).
func (w *podWorker) endedElsewhere(ctx context.Context) {
	phase := w.current().Status.Phase
	if phase != corev1.PodFailed && phase != corev1.PodSucceeded || w.phase == phase {
		return
	}
	running := false
	for _, c := range w.containers {
		running = running || c.proc != nil || !c.restartAt.IsZero()
	}
	w.phase = phase
	if !running {
		return
	}
	w.logf("made %s by the control plane: stopping its containers", phase)
	w.stateMu.Lock()
	for _, c := range w.containers {
		c.restartAt = time.Time{}
	}
	w.stateMu.Unlock()
	w.stopAll(w.gracePeriod())
	w.writeStatus(ctx)
}

// gracePeriod is how long the pod's processes have between SIGTERM and
// SIGKILL: its deletion's grace period, else its spec's, else 30s.
func (w *podWorker) gracePeriod() time.Duration {
	pod := w.current()
	if pod.DeletionGracePeriodSeconds != nil {
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}

// prepare gives the pod its address, hosts file and volumes, trying again
// while what they need is missing (a ConfigMap not yet made), as the
// kubelet does; false when the pod went away meanwhile.
func (w *podWorker) prepare(ctx context.Context) bool {
	a := w.node.agent
	for {
		err := w.prepareOnce(ctx)
		if err == nil {
			return true
		}
		w.logf("setting up: %v", err)
		w.message = err.Error()
		w.stateMu.Lock()
		for _, c := range w.containers {
			c.state.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating", Message: err.Error()}
		}
		w.stateMu.Unlock()
		w.writeStatus(ctx)
		select {
		case <-ctx.Done():
			return false
		case <-w.gone:
			return false
		case <-w.kick:
			if w.current().DeletionTimestamp != nil {
				return false
			}
		case <-time.After(a.cfg.RetryInterval):
		}
	}
}

func (w *podWorker) prepareOnce(ctx context.Context) error {
	a := w.node.agent
	pod := w.current()
	if w.podIP == "" {
		if err := a.reserveJobSet(ctx, pod); err != nil {
			return err
		}
		ip, err := a.addrs.podIP(pod)
		if err != nil {
			return err
		}
		w.podIP = ip.String()
		w.started = metav1.Now()
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return err
	}
	w.hosts = filepath.Join(w.dir, "etc-hosts")
	if err := a.addrs.writeHosts(pod, w.hosts); err != nil {
		return err
	}
	vols, err := materializeVolumes(ctx, a, a, w.withStatus(pod), w.node.nodeObject(), filepath.Join(w.dir, "volumes"))
	if err != nil {
		return err
	}
	w.volumes = vols
	w.message = ""
	return nil
}

// withStatus is the pod with the addresses the agent gave it, for what
// fieldRefs read of its status.
func (w *podWorker) withStatus(pod *corev1.Pod) *corev1.Pod {
	p := pod.DeepCopy()
	p.Status.PodIP, p.Status.PodIPs = w.podIP, []corev1.PodIP{{IP: w.podIP}}
	p.Status.HostIP, p.Status.HostIPs = w.node.ip, []corev1.HostIP{{IP: w.node.ip}}
	return p
}

// startNext starts the next init container, or, once all have
// succeeded, every container.
func (w *podWorker) startNext(ctx context.Context) {
	for _, c := range w.containers {
		if !c.init {
			break
		}
		if !c.done {
			if c.proc == nil && c.restartAt.IsZero() {
				w.start(ctx, c)
			}
			return
		}
	}
	w.initDone = true
	for _, c := range w.containers {
		if !c.init && c.proc == nil && !c.done && c.restartAt.IsZero() {
			w.start(ctx, c)
		}
	}
	w.phase = corev1.PodRunning
}

// start runs a container; what fails to start waits to be tried again.
func (w *podWorker) start(ctx context.Context, c *container) {
	a := w.node.agent
	pod := w.withStatus(w.current())
	env, err := containerEnv(ctx, a, pod, c.spec, w.node.nodeObject(), a.serviceEnv)
	if err != nil {
		w.startFailed(c, "CreateContainerConfigError", err)
		return
	}
	lookup := map[string]string{}
	vars := append([]string{}, a.containerEnv...)
	vars = append(vars, "HOSTNAME="+podHostname(pod))
	for k, v := range a.serviceEnv {
		vars = append(vars, k+"="+v)
	}
	for _, e := range env {
		lookup[e.Name] = e.Value
		vars = append(vars, e.Name+"="+e.Value)
	}
	var argv []string
	for _, s := range append(append([]string{}, c.spec.Command...), c.spec.Args...) {
		argv = append(argv, expand(s, mapLookup(lookup, a.serviceEnv)))
	}
	mounts, err := containerMounts(c.spec, w.volumes, w.hosts)
	if err != nil {
		w.startFailed(c, "CreateContainerConfigError", err)
		return
	}
	dir := c.spec.WorkingDir
	if dir == "" {
		// What an image's WORKDIR would be: a directory of the pod's, not
		// the host's.
		dir = filepath.Join(w.dir, "workdir")
	}
	p, err := startProcess(processSpec{
		argv: argv, env: vars, dir: dir, hostname: podHostname(pod), mounts: mounts,
		log: w.logPath(c.spec.Name, c.restarts),
	}, a.mountBin, a.cfg.Spawn)
	if err != nil {
		w.startFailed(c, "RunContainerError", err)
		return
	}
	if a.cfg.Watch != nil {
		a.cfg.Watch(p.pgid())
	}
	c.proc = p
	c.restartAt = time.Time{}
	c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(p.started)}}
	w.logf("container %s started (pid %d, run %d)", c.spec.Name, p.pgid(), c.restarts)
	go func() {
		<-p.done
		// A container ends with its main process: what it left in its
		// group goes too, as a runtime ends a container's cgroup.
		p.signal(9)
		w.exits <- c
	}()
}

func (w *podWorker) startFailed(c *container, reason string, err error) {
	w.logf("container %s: %s: %v", c.spec.Name, reason, err)
	c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: err.Error()}}
	c.restartAt = time.Now().Add(w.node.agent.cfg.RetryInterval)
}

// exited records a container's exit and acts on it as the restart policy
// says.
func (w *podWorker) exited(ctx context.Context, c *container) {
	p := c.proc
	c.proc = nil
	c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: p.exitCode, Reason: terminatedReason(p.exitCode),
		StartedAt: metav1.NewTime(p.started), FinishedAt: metav1.NewTime(p.finished),
		ContainerID: containerID(p),
	}}
	w.logf("container %s exited with %d", c.spec.Name, p.exitCode)
	policy := w.current().Spec.RestartPolicy
	if c.init && p.exitCode == 0 {
		c.done = true
		w.startNext(ctx)
		return
	}
	if (c.init && policy == corev1.RestartPolicyNever) || (!c.init && !containerRestarts(policy, c.spec, p.exitCode)) {
		c.done = true
		if c.init {
			w.phase = corev1.PodFailed
			return
		}
		w.checkTerminal()
		return
	}
	delay := c.nextRestart(p.finished, w.node.agent.cfg.RestartBackoff)
	c.restartAt = p.finished.Add(delay)
	c.last = c.state
	c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason:  "CrashLoopBackOff",
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay, c.spec.Name, w.current().Name),
	}}
}

// checkTerminal makes the pod Succeeded or Failed once none of its
// containers runs or will run again.
func (w *podWorker) checkTerminal() {
	var codes []int32
	for _, c := range w.containers {
		if c.init {
			continue
		}
		if !c.done {
			return
		}
		codes = append(codes, c.state.Terminated.ExitCode)
	}
	w.phase = terminalPhase(codes)
}

func containerID(p *process) string { return fmt.Sprintf("procnode://%d", p.pgid()) }

// restartDue starts the containers whose back-off is over.
func (w *podWorker) restartDue(ctx context.Context) {
	now := time.Now()
	for _, c := range w.containers {
		if c.restartAt.IsZero() || c.restartAt.After(now) {
			continue
		}
		if c.state.Waiting != nil && c.state.Waiting.Reason == "CrashLoopBackOff" {
			c.restarts++
		}
		c.restartAt = time.Time{}
		w.start(ctx, c)
	}
	if !w.initDone {
		w.startNext(ctx)
	}
}

func (w *podWorker) resetTimer(t *time.Timer) {
	next := time.Now().Add(time.Hour)
	for _, c := range w.containers {
		if !c.restartAt.IsZero() && c.restartAt.Before(next) {
			next = c.restartAt
		}
	}
	t.Reset(time.Until(next))
}

// stopAll stops every running container: SIGTERM, SIGKILL after grace.
func (w *podWorker) stopAll(grace time.Duration) {
	var wg sync.WaitGroup
	for _, c := range w.containers {
		if c.proc == nil {
			continue
		}
		wg.Add(1)
		go func(p *process) {
			defer wg.Done()
			p.stop(grace)
		}(c.proc)
	}
	wg.Wait()
	for _, c := range w.containers {
		if c.proc == nil {
			continue
		}
		// The exit the watcher goroutine reports.
		<-w.exits
	}
	w.stateMu.Lock()
	defer w.stateMu.Unlock()
	for _, c := range w.containers {
		if p := c.proc; p != nil {
			c.proc = nil
			c.done = true
			c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: p.exitCode, Reason: terminatedReason(p.exitCode),
				StartedAt: metav1.NewTime(p.started), FinishedAt: metav1.NewTime(p.finished),
				ContainerID: containerID(p),
			}}
		}
	}
}

// terminate ends the pod: its processes stopped within its grace period,
// then, as a kubelet does, its final status written and the pod deleted
// for good. A pod already gone from the API server, or on a lost node,
// only has its processes killed.
func (w *podWorker) terminate(ctx context.Context) {
	pod := w.current()
	select {
	case <-w.gone:
		w.mu.Lock()
		lost := w.lost
		w.mu.Unlock()
		grace := 2 * time.Second
		if lost {
			grace = 0
		}
		w.stopAll(grace)
		return
	default:
	}
	grace := w.gracePeriod()
	w.logf("deleting: stopping its containers (grace %s)", grace)
	w.stopAll(grace)
	if w.phase != corev1.PodSucceeded && w.phase != corev1.PodFailed {
		w.stateMu.Lock()
		var codes []int32
		for _, c := range w.containers {
			if c.init {
				continue
			}
			if c.state.Terminated == nil {
				c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: "ContainerStatusUnknown",
					Message: "The container could not be located when the pod was terminated",
				}}
			}
			codes = append(codes, c.state.Terminated.ExitCode)
		}
		w.stateMu.Unlock()
		w.phase = terminalPhase(codes)
	}
	w.writeStatus(ctx)
	if pod.DeletionTimestamp == nil {
		return
	}
	uid := pod.UID
	err := w.node.agent.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64), Preconditions: &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		w.logf("deleting: %v", err)
	}
}

// cleanup removes the pod's files: its volumes, hosts file and logs.
func (w *podWorker) cleanup() {
	w.node.agent.addrs.forget(w.current())
	_ = os.RemoveAll(w.dir)
}

// writeStatus writes the pod's status as the worker knows it.
func (w *podWorker) writeStatus(ctx context.Context) {
	pods := w.node.agent.client.CoreV1().Pods(w.current().Namespace)
	name := w.current().Name
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.UID != w.current().UID {
			return nil
		}
		w.fillStatus(&pod.Status)
		_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		w.logf("writing its status: %v", err)
	}
}

func (w *podWorker) fillStatus(s *corev1.PodStatus) {
	now := metav1.Now()
	// A terminal phase is final, whoever wrote it.
	if s.Phase != corev1.PodSucceeded && s.Phase != corev1.PodFailed {
		s.Phase = w.phase
	}
	if w.podIP != "" {
		s.PodIP, s.PodIPs = w.podIP, []corev1.PodIP{{IP: w.podIP}}
		s.StartTime = &w.started
	}
	s.HostIP, s.HostIPs = w.node.ip, []corev1.HostIP{{IP: w.node.ip}}
	s.Message = w.message
	s.InitContainerStatuses, s.ContainerStatuses = nil, nil
	allRunning := true
	for _, c := range w.containers {
		running := c.state.Running != nil
		cs := corev1.ContainerStatus{
			Name: c.spec.Name, Image: c.spec.Image, ImageID: "", State: c.state, LastTerminationState: c.last,
			RestartCount: c.restarts, Started: &running,
		}
		if c.proc != nil {
			cs.ContainerID = containerID(c.proc)
		} else if c.state.Terminated != nil {
			cs.ContainerID = c.state.Terminated.ContainerID
		}
		if c.init {
			cs.Ready = c.done && c.state.Terminated != nil && c.state.Terminated.ExitCode == 0
			s.InitContainerStatuses = append(s.InitContainerStatuses, cs)
			continue
		}
		cs.Ready = running
		allRunning = allRunning && running
		s.ContainerStatuses = append(s.ContainerStatuses, cs)
	}
	ready := allRunning && w.initDone && s.Phase == corev1.PodRunning
	reason := ""
	if !ready {
		reason = "ContainersNotReady"
	}
	initReason := ""
	if !w.initDone {
		initReason = "ContainersNotInitialized"
	}
	for _, c := range []corev1.PodCondition{
		{Type: corev1.PodInitialized, Status: condStatus(w.initDone), Reason: initReason},
		{Type: corev1.ContainersReady, Status: condStatus(ready), Reason: reason},
		{Type: corev1.PodReady, Status: condStatus(ready), Reason: reason},
	} {
		c.LastTransitionTime = now
		setCondition(s, c)
	}
}
