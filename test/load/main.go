package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/go-logr/logr"

	"github.com/trainforge/trainforge/internal/operator"
)

// options are the command-line flags.
type options struct {
	n, clients         int
	mode, runtime      string
	controller, plugin string
	rows               string
	compare            compareFlags
	configExtra        string
	out                string
	timeout            time.Duration
	profile            bool
	kubeconfigEnv      bool
	profileSeconds     int
	repoRoot           string
}

// compareFlags are the -compare NAME=COMMAND flags.
type compareFlags []string

func (c *compareFlags) String() string     { return strings.Join(*c, ", ") }
func (c *compareFlags) Set(v string) error { *c = append(*c, v); return nil }

func main() {
	ctrllog.SetLogger(logr.Discard())
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.IntVar(&o.n, "n", 500, "Number of TrainJobs.")
	fs.IntVar(&o.clients, "clients", 8, "Concurrent clients that create the TrainJobs (and the floor's objects).")
	fs.StringVar(&o.mode, "mode", "burst", "burst: the TrainJobs are created while the controller runs. restart: they are created while no controller runs, then the controller starts; then it is restarted with every TrainJob up to date.")
	fs.StringVar(&o.runtime, "runtime", runtimeTorch, "The runtime: torch (4 nodes, a JobSet per TrainJob) or coscheduling (the same with a PodGroup per TrainJob).")
	fs.StringVar(&o.controller, "controller", "bin/trainforge-controller", "The trainforge-controller binary.")
	fs.StringVar(&o.plugin, "plugin", "bin/trainforge-builtin-plugin", "The trainforge-builtin-plugin binary, for the external row.")
	fs.StringVar(&o.rows, "rows", "floor,in-process,external", "The rows to run, in order, comma separated: floor, in-process, external and the names of -compare.")
	fs.Var(&o.compare, "compare", "NAME=COMMAND: another controller to measure in the same table (repeatable; add NAME to -rows). COMMAND runs under bash; {kubeconfig} in it is replaced by the kubeconfig of the user it must run as, which $KUBECONFIG also names.")
	fs.StringVar(&o.configExtra, "config-extra", "", "YAML appended to the Trainforge rows' configuration file (for example \"controller:\\n  workers: 8\").")
	fs.StringVar(&o.out, "out", "", "Directory for the logs, audit logs, profiles and the table (default: a new temporary directory).")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "Give up a row after this long.")
	fs.BoolVar(&o.profile, "profile", false, "Take CPU and heap profiles of the Trainforge rows (through --pprof-bind-address) into -out.")
	fs.BoolVar(&o.kubeconfigEnv, "kubeconfig-env", false, "Give the Trainforge rows their kubeconfig through $KUBECONFIG instead of --kubeconfig.")
	fs.IntVar(&o.profileSeconds, "profile-seconds", 10, "Length of the CPU profile, from the start of the burst.")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if o.n < 1 || o.clients < 1 {
		return nil, errors.New("-n and -clients must be at least 1")
	}
	if o.mode != "burst" && o.mode != "restart" {
		return nil, fmt.Errorf("-mode %q: must be burst or restart", o.mode)
	}
	if o.runtime != runtimeTorch && o.runtime != runtimeCoscheduling {
		return nil, fmt.Errorf("-runtime %q: must be %s or %s", o.runtime, runtimeTorch, runtimeCoscheduling)
	}
	return o, nil
}

func run(args []string, stdout io.Writer) error {
	o, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if o.repoRoot, err = repoRoot(); err != nil {
		return err
	}
	for _, p := range []*string{&o.controller, &o.plugin} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	if o.out == "" {
		if o.out, err = os.MkdirTemp("", "trainforge-load-"); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	rows, err := o.rowSpecs()
	if err != nil {
		return err
	}
	crds, err := crdPaths(o.repoRoot)
	if err != nil {
		return err
	}
	scheme, err := operator.NewScheme()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "load: %s mode, %d TrainJobs, runtime %s, %d clients; logs in %s\n", o.mode, o.n, o.runtime, o.clients, o.out)

	var results []result
	var floor time.Duration
	for _, row := range rows {
		fmt.Fprintf(os.Stderr, "load: row %s...\n", row.name)
		ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
		r := o.runRow(ctx, row, crds, scheme)
		cancel()
		if r.err != nil {
			fmt.Fprintf(os.Stderr, "load: row %s failed: %v\n", row.name, r.err)
		} else {
			fmt.Fprintf(os.Stderr, "load: row %s: %s s, %s CPU s, %d requests\n", row.name, secs(r.makespan), secs(r.cpu), r.req.total)
		}
		if row.kind == rowFloor && r.err == nil {
			floor = r.makespan
		}
		results = append(results, r)
	}

	var table strings.Builder
	fmt.Fprintf(&table, "%s mode, %d TrainJobs on the %s runtime, %d concurrent clients.\n\n", o.mode, o.n, o.runtime, o.clients)
	if o.mode == "burst" {
		printBurst(&table, results, floor)
	} else {
		printRestart(&table, results, floor)
	}
	fmt.Fprintf(&table, "\n%s\n", machine())
	fmt.Fprint(stdout, table.String())
	_ = os.WriteFile(filepath.Join(o.out, "table.md"), []byte(table.String()), 0o644)
	for _, r := range results {
		if r.err != nil {
			return fmt.Errorf("row %s failed (its log is in %s)", r.name, o.out)
		}
	}
	return nil
}

// repoRoot is the module's root: the harness reads the CRDs there.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "config", "crd", "bases")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("run the harness inside the repository (no config/crd/bases above %s)", dir)
		}
	}
}

type rowKind int

const (
	rowFloor rowKind = iota
	rowTrainforge
	rowCommand
)

// rowSpec says how one row runs its controller.
type rowSpec struct {
	name     string
	kind     rowKind
	external bool   // rowTrainforge: every built-in out of process
	command  string // rowCommand
}

func (o *options) rowSpecs() ([]rowSpec, error) {
	commands := map[string]string{}
	for _, c := range o.compare {
		name, cmd, ok := strings.Cut(c, "=")
		if !ok || name == "" || cmd == "" {
			return nil, fmt.Errorf("-compare %q: want NAME=COMMAND", c)
		}
		commands[name] = cmd
	}
	var out []rowSpec
	for _, name := range strings.Split(o.rows, ",") {
		switch name = strings.TrimSpace(name); name {
		case "":
		case "floor":
			out = append(out, rowSpec{name: name, kind: rowFloor})
		case "in-process":
			out = append(out, rowSpec{name: name, kind: rowTrainforge})
		case "external":
			out = append(out, rowSpec{name: name, kind: rowTrainforge, external: true})
		default:
			cmd, ok := commands[name]
			if !ok {
				return nil, fmt.Errorf("-rows: %q is neither floor, in-process, external nor the name of a -compare", name)
			}
			out = append(out, rowSpec{name: name, kind: rowCommand, command: cmd})
		}
	}
	return out, nil
}

// runRow runs one row on a fresh API server.
func (o *options) runRow(ctx context.Context, row rowSpec, crds []string, scheme *runtime.Scheme) result {
	r := result{name: row.name, n: o.n, loadBefore: loadAvg()}
	dir := filepath.Join(o.out, row.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.err = err
		return r
	}
	cl, err := startCluster(dir, crds)
	if err != nil {
		r.err = err
		return r
	}
	// The harness's own watches end before the API server stops, which
	// otherwise waits for them.
	ctx, cancel := context.WithCancel(ctx)
	stopped := false
	stopCluster := func() {
		cancel()
		if !stopped {
			cl.stop()
			stopped = true
		}
	}
	defer stopCluster()
	admin, err := client.New(cl.admin, client.Options{Scheme: scheme})
	if err != nil {
		r.err = err
		return r
	}
	rt := clusterRuntime(o.runtime)
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		r.err = err
		return r
	}
	if err := admin.Create(ctx, rt.DeepCopy()); err != nil {
		r.err = err
		return r
	}

	var window [2]time.Time
	switch {
	case row.kind == rowFloor:
		window, err = o.floor(ctx, cl, scheme, &r)
	case o.mode == "burst":
		window, err = o.burst(ctx, row, dir, cl, admin, scheme, rt.Name, &r)
	default:
		window, err = o.restart(ctx, row, dir, cl, admin, scheme, rt.Name, &r)
	}
	r.after = loadAvg()
	if err != nil {
		r.err = err
		return r
	}
	stopCluster() // flushes the audit log
	if r.req, err = readAudit(cl.auditLog, controllerUser, window[0], window[1]); err != nil {
		r.err = err
	}
	if !r.settleWindow[0].IsZero() {
		if r.settleReq, err = readAudit(cl.auditLog, controllerUser, r.settleWindow[0], r.settleWindow[1]); err != nil {
			r.err = err
		}
	}
	return r
}

// floor creates the objects the built-ins would build, directly.
func (o *options) floor(ctx context.Context, cl *cluster, scheme *runtime.Scheme, r *result) ([2]time.Time, error) {
	objs, err := floorObjects(ctx, clusterRuntime(o.runtime), o.n)
	if err != nil {
		return [2]time.Time{}, err
	}
	c, err := client.New(cl.controllerConfig, client.Options{Scheme: scheme})
	if err != nil {
		return [2]time.Time{}, err
	}
	// Discovery happens before the clock starts, as for a controller.
	if err := c.List(ctx, &jobsetv1alpha2.JobSetList{}, client.InNamespace(namespace)); err != nil {
		return [2]time.Time{}, err
	}
	t, err := startTracker(ctx, cl.admin, scheme, o.n, false)
	if err != nil {
		return [2]time.Time{}, err
	}
	sent := make([]time.Time, o.n)
	serverBase := cl.serverCPU()
	start := time.Now()
	profDone := o.startProfile(nil, cl, filepath.Join(o.out, "floor"))
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
	r.serverCPU = cl.serverCPU() - serverBase
	return [2]time.Time{start, time.Now()}, nil
}

// startController starts a row's controller and waits until it is ready.
func (o *options) startController(ctx context.Context, row rowSpec, dir, logName string, cl *cluster, wait bool) (*process, error) {
	var argv, env []string
	var probe, pprofAddr string
	switch row.kind {
	case rowTrainforge:
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		cfg := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(cfg, []byte(o.trainforgeConfig(row, addr)), 0o644); err != nil {
			return nil, err
		}
		argv = []string{o.controller, "--config", cfg, "--enable-webhooks=false"}
		if o.kubeconfigEnv {
			env = []string{"KUBECONFIG=" + cl.kubeconfig}
		} else {
			argv = append(argv, "--kubeconfig", cl.kubeconfig)
		}
		if o.profile {
			if pprofAddr, err = freeAddr(); err != nil {
				return nil, err
			}
			argv = append(argv, "--pprof-bind-address", pprofAddr)
		}
		probe = "http://" + addr + "/readyz"
	case rowCommand:
		argv = []string{"bash", "-c", "exec " + strings.ReplaceAll(row.command, "{kubeconfig}", cl.kubeconfig)}
		env = []string{"KUBECONFIG=" + cl.kubeconfig}
	}
	p, err := startProcess(argv, env, filepath.Join(dir, logName), probe)
	if err != nil {
		return nil, err
	}
	p.pprof = pprofAddr
	if wait {
		if err := p.waitReady(ctx); err != nil {
			p.stop()
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
		}
	}
	fmt.Fprintf(&b, "metrics:\n  bindAddress: \"0\"\nhealth:\n  healthProbeBindAddress: %q\n", probeAddr)
	if o.configExtra != "" {
		b.WriteString(o.configExtra + "\n")
	}
	return b.String()
}

// burst creates the TrainJobs while the controller runs.
func (o *options) burst(ctx context.Context, row rowSpec, dir string, cl *cluster, admin client.Client, scheme *runtime.Scheme, rtName string, r *result) ([2]time.Time, error) {
	p, err := o.startController(ctx, row, dir, "controller.log", cl, true)
	if err != nil {
		return [2]time.Time{}, err
	}
	defer p.stop()
	t, err := startTracker(ctx, cl.admin, scheme, o.n, true)
	if err != nil {
		return [2]time.Time{}, err
	}
	base := treeUsage(p.pid())
	serverBase := cl.serverCPU()
	sent := make([]time.Time, o.n)
	start := time.Now()
	profDone := o.startProfile(p, cl, dir)
	if err := createTrainJobs(ctx, admin, rtName, o.n, o.clients, sent); err != nil {
		return [2]time.Time{}, err
	}
	if err := t.wait(ctx); err != nil {
		return [2]time.Time{}, err
	}
	r.makespan = t.last().Sub(start)
	r.jobSet, r.created = t.latencies(sent)
	if _, err := p.waitIdle(ctx); err != nil {
		return [2]time.Time{}, err
	}
	end := time.Now()
	u := treeUsage(p.pid())
	r.cpu, r.peakRSS, r.procs = u.cpu-base.cpu, u.peakRSS, u.procs
	r.serverCPU = cl.serverCPU() - serverBase
	<-profDone
	o.heapProfile(p, dir)
	return [2]time.Time{start, end}, nil
}

// restart creates the TrainJobs with no controller running, starts it and
// waits for every JobSet; then restarts it with everything up to date.
func (o *options) restart(ctx context.Context, row rowSpec, dir string, cl *cluster, admin client.Client, scheme *runtime.Scheme, rtName string, r *result) ([2]time.Time, error) {
	t, err := startTracker(ctx, cl.admin, scheme, o.n, true)
	if err != nil {
		return [2]time.Time{}, err
	}
	sent := make([]time.Time, o.n)
	if err := createTrainJobs(ctx, admin, rtName, o.n, o.clients, sent); err != nil {
		return [2]time.Time{}, err
	}
	serverBase := cl.serverCPU()
	start := time.Now()
	for i := range sent {
		sent[i] = start
	}
	p, err := o.startController(ctx, row, dir, "controller.log", cl, false)
	if err != nil {
		return [2]time.Time{}, err
	}
	profDone := o.startProfile(p, cl, dir)
	if err := t.wait(ctx); err != nil {
		p.stop()
		return [2]time.Time{}, err
	}
	r.makespan = t.last().Sub(start)
	r.jobSet, r.created = t.latencies(sent)
	if _, err := p.waitIdle(ctx); err != nil {
		p.stop()
		return [2]time.Time{}, err
	}
	end := time.Now()
	u := treeUsage(p.pid())
	r.cpu, r.peakRSS, r.procs = u.cpu, u.peakRSS, u.procs
	r.serverCPU = cl.serverCPU() - serverBase
	<-profDone
	o.heapProfile(p, dir)
	p.stop()

	// Everything is up to date: a new controller should only read.
	start2 := time.Now()
	p2, err := o.startController(ctx, row, dir, "controller-restarted.log", cl, false)
	if err != nil {
		return [2]time.Time{}, err
	}
	if err := p2.waitReady(ctx); err != nil {
		p2.stop()
		return [2]time.Time{}, err
	}
	idle, err := p2.waitIdle(ctx)
	if err != nil {
		p2.stop()
		return [2]time.Time{}, err
	}
	r.settle = idle.Sub(start2)
	r.settleCPU = treeUsage(p2.pid()).cpu
	p2.stop()
	r.settleWindow = [2]time.Time{start2, time.Now()}
	return [2]time.Time{start, end}, nil
}

// startProfile takes CPU profiles of a Trainforge row's controller and of
// the API server from now on, when -profile is set. The channel closes when
// both are saved.
func (o *options) startProfile(p *process, cl *cluster, dir string) <-chan struct{} {
	done := make(chan struct{})
	if !o.profile {
		close(done)
		return done
	}
	var wg sync.WaitGroup
	if p != nil && p.pprof != "" {
		wg.Go(func() {
			saveURL(http.DefaultClient, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.pprof, o.profileSeconds), filepath.Join(dir, "cpu.pprof"))
		})
	}
	if hc, err := rest.HTTPClientFor(cl.admin); err == nil {
		wg.Go(func() {
			saveURL(hc, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(cl.admin.Host, "/"), o.profileSeconds), filepath.Join(dir, "apiserver-cpu.pprof"))
		})
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

func (o *options) heapProfile(p *process, dir string) {
	if o.profile && p.pprof != "" {
		saveURL(http.DefaultClient, "http://"+p.pprof+"/debug/pprof/heap", filepath.Join(dir, "heap.pprof"))
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
