package main

import (
	"github.com/trainforge/trainforge/test/load/harness"

	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/internal/shellquote"
)

// floor creates the objects the built-ins would build, directly.
func (o *options) floor(ctx context.Context, dir string, cl *harness.Cluster, scheme *runtime.Scheme, r *result) ([2]time.Time, error) {
	objs, err := floorObjects(ctx, clusterRuntime(o.runtime), o.n)
	if err != nil {
		return [2]time.Time{}, err
	}
	c, err := client.New(cl.ControllerConfig, client.Options{Scheme: scheme})
	if err != nil {
		return [2]time.Time{}, err
	}
	// Discovery happens before the clock starts, as for a controller.
	if err := c.List(ctx, &jobsetv1alpha2.JobSetList{}, client.InNamespace(namespace)); err != nil {
		return [2]time.Time{}, err
	}
	t, err := startTracker(ctx, cl.Admin, scheme, o.n, jobSetsOnly)
	if err != nil {
		return [2]time.Time{}, err
	}
	sent := make([]time.Time, o.n)
	serverBase := cl.ServerCPU()
	start := time.Now()
	profDone := o.startProfile(nil, cl, dir)
	defer func() { <-profDone }()
	if err := createFloor(ctx, c, objs, o.clients, sent); err != nil {
		return [2]time.Time{}, err
	}
	done := time.Now()
	if err := t.wait(ctx); err != nil {
		return [2]time.Time{}, err
	}
	last := t.last()
	if done.After(last) {
		last = done
	}
	r.makespan = last.Sub(start)
	r.jobSet, _ = t.latencies(sent)
	r.serverCPU = cl.ServerCPU() - serverBase
	return [2]time.Time{start, time.Now()}, nil
}

// startController starts a row's controller, its log in the start's file
// in dir, and with wait waits until it is ready. With -instructions it runs
// under cachegrind, counting into the start's out file in dir.
func (o *options) startController(ctx context.Context, row rowSpec, dir string, run controllerStart, cl *harness.Cluster, wait bool) (*harness.Process, error) {
	var argv, env []string
	var probe, pprofAddr string
	var valgrind []string
	if o.instructions {
		valgrind = valgrindArgs(filepath.Join(dir, run.cachegrindOut()))
	}
	switch row.kind {
	case rowTrainforge:
		addr, err := harness.FreeAddr()
		if err != nil {
			return nil, err
		}
		cfg := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(cfg, []byte(o.trainforgeConfig(row, addr)), 0o644); err != nil {
			return nil, err
		}
		argv = []string{o.controller, "--config", cfg, "--enable-webhooks=false"}
		if o.kubeconfigEnv {
			env = []string{"KUBECONFIG=" + cl.Kubeconfig}
		} else {
			argv = append(argv, "--kubeconfig", cl.Kubeconfig)
		}
		if o.profile {
			if pprofAddr, err = harness.FreeAddr(); err != nil {
				return nil, err
			}
			argv = append(argv, "--pprof-bind-address", pprofAddr)
		}
		probe = "http://" + addr + "/readyz"
		argv = append(valgrind, argv...)
	case rowCommand:
		prefix := "exec "
		for _, w := range valgrind {
			prefix += shellquote.Quote(w) + " "
		}
		argv = []string{"bash", "-c", prefix + strings.ReplaceAll(row.command, "{kubeconfig}", cl.Kubeconfig)}
		env = []string{"KUBECONFIG=" + cl.Kubeconfig}
		probe = row.ready
	}
	if o.instructions {
		// GODEBUG=cpu.rdtscp=off: else Go's runtime executes RDTSCP,
		// which valgrind 3.19 cannot decode (valgrindGODEBUG).
		env = valgrindEnv(env)
	}
	p, err := harness.StartProcess(argv, env, filepath.Join(dir, run.logName()), probe)
	if err != nil {
		return nil, err
	}
	p.Pprof = pprofAddr
	if o.instructions {
		p.StopGrace = wrappedStopGrace
	}
	if wait {
		if err := p.WaitReady(ctx); err != nil {
			p.Stop()
			return nil, err
		}
	}
	return p, nil
}

// trainforgeConfig is the configuration file of a Trainforge row.
func (o *options) trainforgeConfig(row rowSpec, probeAddr string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.trainforge.dev/v1alpha1\nkind: Configuration\n")
	if row.external {
		b.WriteString("plugins:\n")
		for _, name := range []string{"PlainML", "Torch", "JobSet", "Coscheduling"} {
			fmt.Fprintf(&b, "- name: %s\n  external:\n    command: %s\n    args: [%s]\n", name, o.plugin, name)
			b.WriteString(o.pluginTimeouts())
		}
	}
	if row.wasm {
		// The wasm entries' defaults (4 instances of 128Mi each), and a
		// memory budget that holds all of them (the default holds fewer),
		// so that the row measures the host with every instance it may
		// run; the four share one compiled module, whose machine code the
		// rounds after the first read from the cache directory.
		b.WriteString("plugins:\n")
		names := []string{"PlainML", "Torch", "JobSet", "Coscheduling"}
		for _, name := range names {
			fmt.Fprintf(&b, "- name: %s\n  wasm:\n    module: %s\n    sha256: %s\n    args: [%s]\n", name, o.wasmModule, o.wasmSHA256, name)
			b.WriteString(o.pluginTimeouts())
		}
		budget := configv1alpha1.DefaultWasmMemoryLimit.DeepCopy()
		budget.Mul(int64(len(names)) * int64(configv1alpha1.DefaultWasmMaxInstances))
		fmt.Fprintf(&b, "pluginHost:\n  wasmCacheDir: %s\n  wasmMemoryBudget: %s\n", o.wasmCacheDir(), budget.String())
	}
	fmt.Fprintf(&b, "metrics:\n  bindAddress: \"0\"\nhealth:\n  healthProbeBindAddress: %q\n", probeAddr)
	if o.configExtra != "" {
		b.WriteString(o.configExtra + "\n")
	}
	return b.String()
}

// pluginTimeouts are the lines of a plugin entry's (external or wasm)
// timeouts: the defaults (start 10s, call 2s), except with -instructions.
// Under valgrind the controller runs many times slower and one thread at a
// time; at the defaults, calls of the wasm row ran out of their 2 s, so the
// count would be of timeouts, new instances and retries, not of the work.
func (o *options) pluginTimeouts() string {
	if !o.instructions {
		return ""
	}
	return "    startTimeout: 5m\n    callTimeout: 1m\n"
}

// wasmCacheDir is where the wasm row's controllers keep the module's
// machine code, for the rounds after the first: -wasm-cache-dir, or a
// directory in -out.
func (o *options) wasmCacheDir() string {
	if o.wasmCache != "" {
		return o.wasmCache
	}
	return filepath.Join(o.out, "wasm-cache")
}

// burst creates the TrainJobs while the controller runs.
func (o *options) burst(ctx context.Context, row rowSpec, dir string, cl *harness.Cluster, admin client.Client, scheme *runtime.Scheme, rtName string, r *result) ([2]time.Time, error) {
	instr, err := o.startupInstructions(ctx, row, dir, cl)
	if err != nil {
		return [2]time.Time{}, err
	}
	p, err := o.startController(ctx, row, dir, measuredStart, cl, true)
	if err != nil {
		return [2]time.Time{}, err
	}
	defer p.Stop()
	t, err := startTracker(ctx, cl.Admin, scheme, o.n, row.doneWhen())
	if err != nil {
		return [2]time.Time{}, err
	}
	base := harness.TreeUsage(p.PID())
	serverBase := cl.ServerCPU()
	sent := make([]time.Time, o.n)
	start := time.Now()
	profDone := o.startProfile(p, cl, dir)
	if err := createTrainJobs(ctx, admin, rtName, o.n, o.clients, sent); err != nil {
		return [2]time.Time{}, err
	}
	if err := t.wait(ctx); err != nil {
		return [2]time.Time{}, err
	}
	if _, err := p.WaitIdle(ctx); err != nil {
		return [2]time.Time{}, err
	}
	end := time.Now()
	// Once the controller is idle, a Created condition that a -compare
	// row's controller sets after the JobSet has been seen too.
	r.makespan = t.last().Sub(start)
	r.jobSet, r.created = t.latencies(sent)
	r.createdSeen = t.createdSeen()
	u := harness.TreeUsage(p.PID())
	r.cpu, r.peakRSS, r.procs = u.CPU-base.CPU, u.PeakRSS, u.Procs
	r.serverCPU = cl.ServerCPU() - serverBase
	<-profDone
	o.heapProfile(p, dir)
	p.Stop() // cachegrind writes its count as the process exits
	instr.finish(r, dir, false)
	return [2]time.Time{start, end}, nil
}

// restart creates the TrainJobs with no controller running, starts it and
// waits for every JobSet; then restarts it with everything up to date.
func (o *options) restart(ctx context.Context, row rowSpec, dir string, cl *harness.Cluster, admin client.Client, scheme *runtime.Scheme, rtName string, r *result) ([2]time.Time, error) {
	instr, err := o.startupInstructions(ctx, row, dir, cl)
	if err != nil {
		return [2]time.Time{}, err
	}
	t, err := startTracker(ctx, cl.Admin, scheme, o.n, row.doneWhen())
	if err != nil {
		return [2]time.Time{}, err
	}
	sent := make([]time.Time, o.n)
	if err := createTrainJobs(ctx, admin, rtName, o.n, o.clients, sent); err != nil {
		return [2]time.Time{}, err
	}
	serverBase := cl.ServerCPU()
	start := time.Now()
	for i := range sent {
		sent[i] = start
	}
	p, err := o.startController(ctx, row, dir, measuredStart, cl, false)
	if err != nil {
		return [2]time.Time{}, err
	}
	profDone := o.startProfile(p, cl, dir)
	if err := t.wait(ctx); err != nil {
		p.Stop()
		return [2]time.Time{}, err
	}
	if _, err := p.WaitIdle(ctx); err != nil {
		p.Stop()
		return [2]time.Time{}, err
	}
	end := time.Now()
	r.makespan = t.last().Sub(start)
	r.jobSet, r.created = t.latencies(sent)
	r.createdSeen = t.createdSeen()
	u := harness.TreeUsage(p.PID())
	r.cpu, r.peakRSS, r.procs = u.CPU, u.PeakRSS, u.Procs
	r.serverCPU = cl.ServerCPU() - serverBase
	<-profDone
	o.heapProfile(p, dir)
	p.Stop()

	// Everything is up to date: a new controller should only read.
	start2 := time.Now()
	p2, err := o.startController(ctx, row, dir, restartedStart, cl, false)
	if err != nil {
		return [2]time.Time{}, err
	}
	if err := p2.WaitReady(ctx); err != nil {
		p2.Stop()
		return [2]time.Time{}, err
	}
	idle, err := p2.WaitIdle(ctx)
	if err != nil {
		p2.Stop()
		return [2]time.Time{}, err
	}
	r.settle = idle.Sub(start2)
	r.settleCPU = harness.TreeUsage(p2.PID()).CPU
	p2.Stop()
	r.settleWindow = [2]time.Time{start2, time.Now()}
	instr.finish(r, dir, true)
	return [2]time.Time{start, end}, nil
}

// startProfile takes CPU profiles of a Trainforge row's controller and of
// the API server from now on, when -profile is set. The channel closes when
// both are saved.
func (o *options) startProfile(p *harness.Process, cl *harness.Cluster, dir string) <-chan struct{} {
	done := make(chan struct{})
	if !o.profile {
		close(done)
		return done
	}
	var wg sync.WaitGroup
	if p != nil && p.Pprof != "" {
		wg.Go(func() {
			saveURL(http.DefaultClient, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.Pprof, o.profileSeconds), filepath.Join(dir, "cpu.pprof"))
		})
	}
	if hc, err := rest.HTTPClientFor(cl.Admin); err == nil {
		wg.Go(func() {
			saveURL(hc, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(cl.Admin.Host, "/"), o.profileSeconds), filepath.Join(dir, "apiserver-cpu.pprof"))
		})
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

func (o *options) heapProfile(p *harness.Process, dir string) {
	if o.profile && p.Pprof != "" {
		saveURL(http.DefaultClient, "http://"+p.Pprof+"/debug/pprof/heap", filepath.Join(dir, "heap.pprof"))
	}
}

// saveURL saves what url answers into path. A controller that has just
// been started (restart mode) may not listen yet: connecting is retried for
// a few seconds.
func saveURL(hc *http.Client, url, path string) {
	var resp *http.Response
	var err error
	for range 50 {
		if resp, err = hc.Get(url); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load: profile:", err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "load: profile %s: %s\n", url, resp.Status)
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load: profile:", err)
		return
	}
	defer f.Close()
	_, _ = io.Copy(f, resp.Body)
}
