package main

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/test/load/harness"

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/go-logr/logr"

	"github.com/trainforge/trainforge/internal/operator"
)

// options are the command-line flags.
type options struct {
	n, clients         int
	workers, rounds    int
	mode, runtime      string
	controller, plugin string
	wasmModule         string
	wasmSHA256         string // of wasmModule, read once when a row needs it
	wasmCache          string // -wasm-cache-dir; see wasmCacheDir
	rows               string
	compare            compareFlags
	ready              compareFlags
	configExtra        string
	out                string
	timeout            time.Duration
	profile            bool
	instructions       bool
	kubeconfigEnv      bool
	profileSeconds     int
	// afterRow, when set (by tests), is called with the admin's client
	// at the end of each row that did not fail, before its API server
	// stops, to look at what the row left.
	afterRow func(ctx context.Context, row rowSpec, admin client.Client) error
}

// compareFlags are the repeatable NAME=VALUE flags (-compare, -ready).
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
	fs.IntVar(&o.clients, "clients", 16, "Concurrent clients that create the TrainJobs (and the floor's objects).")
	fs.IntVar(&o.workers, "workers", 16, "The design floor's writers: the goroutines that, as a controller's workers, create each TrainJob's JobSet and update its status (16, as controller.workers' default).")
	fs.IntVar(&o.rounds, "rounds", 1, "Run the rows this many times, interleaved (the -rows in order, then again), and add a table of medians and spreads: the machine's speed drifts, and only rows run side by side compare.")
	fs.StringVar(&o.mode, "mode", "burst", "burst: the TrainJobs are created while the controller runs. restart: they are created while no controller runs, then the controller starts; then it is restarted with every TrainJob up to date.")
	fs.StringVar(&o.runtime, "runtime", runtimeTorch, "The runtime: torch (4 nodes, a JobSet per TrainJob) or coscheduling (the same with a PodGroup per TrainJob).")
	fs.StringVar(&o.controller, "controller", "bin/trainforge-controller", "The trainforge-controller binary.")
	fs.StringVar(&o.plugin, "plugin", "bin/trainforge-builtin-plugin", "The trainforge-builtin-plugin binary, for the external row.")
	fs.StringVar(&o.wasmModule, "wasm-module", "bin/wasm/trainforge-builtin-plugin.wasm", "trainforge-builtin-plugin built as a WebAssembly module (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared), for the wasm row.")
	fs.StringVar(&o.wasmCache, "wasm-cache-dir", "", "The wasm row's pluginHost.wasmCacheDir (default: wasm-cache in -out): a directory that outlives -out spares each new -out a compilation of the module at the first round's start, which no figure counts. Not with -instructions, which keeps the machine code that valgrind's runs look up in -out.")
	fs.StringVar(&o.rows, "rows", "floor,design-floor,in-process,external,wasm", "The rows to run, in order, comma separated: floor, design-floor, in-process, external, wasm and the names of -compare.")
	fs.Var(&o.compare, "compare", "NAME=COMMAND: another controller to measure in the same table (repeatable; add NAME to -rows). COMMAND runs under bash; {kubeconfig} in it is replaced by the kubeconfig of the user it must run as, which $KUBECONFIG also names.")
	fs.Var(&o.ready, "ready", "NAME=URL: the readiness URL of the -compare row NAME (repeatable). The row starts when the URL answers 200 and the controller has then been quiet for a second, as for the Trainforge rows; without it, when the controller has been quiet for a second after its start.")
	fs.StringVar(&o.configExtra, "config-extra", "", "YAML appended to the Trainforge rows' configuration file (for example \"controller:\\n  workers: 8\").")
	fs.StringVar(&o.out, "out", "", "Directory for the logs, audit logs, profiles and the table (default: a new temporary directory).")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "Give up a row after this long.")
	fs.BoolVar(&o.profile, "profile", false, "Take CPU and heap profiles of the Trainforge rows (through --pprof-bind-address) into -out.")
	fs.BoolVar(&o.instructions, "instructions", false, "Run every row's controller process (Trainforge rows and -compare rows) under valgrind's cachegrind and add a column of the millions of instructions it executed per TrainJob, less those of its start-up (the same controller started with no TrainJob, waited for until ready and quiet, and stopped, before each measured run): a figure that does not drift with the machine's load, as CPU s does. The process's only: an external row's plugin processes are not counted. Needs valgrind; every controller runs many times slower.")
	fs.BoolVar(&o.kubeconfigEnv, "kubeconfig-env", false, "Give the Trainforge rows their kubeconfig through $KUBECONFIG instead of --kubeconfig.")
	fs.IntVar(&o.profileSeconds, "profile-seconds", 10, "Length of the CPU profile, from the start of the burst.")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if o.n < 1 || o.clients < 1 || o.workers < 1 || o.rounds < 1 {
		return nil, errors.New("-n, -clients, -workers and -rounds must be at least 1")
	}
	if o.mode != "burst" && o.mode != "restart" {
		return nil, fmt.Errorf("-mode %q: must be burst or restart", o.mode)
	}
	if o.runtime != runtimeTorch && o.runtime != runtimeCoscheduling {
		return nil, fmt.Errorf("-runtime %q: must be %s or %s", o.runtime, runtimeTorch, runtimeCoscheduling)
	}
	if o.instructions && o.wasmCache != "" {
		return nil, errors.New("-wasm-cache-dir with -instructions: the machine code compiled under valgrind is looked up under other keys than a native process's, so -instructions keeps its own in -out; drop -wasm-cache-dir")
	}
	if o.instructions {
		if err := lookValgrind(); err != nil {
			return nil, err
		}
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
	_, err = o.execute(stdout)
	return err
}

// execute runs the rows and prints the table; it returns every row's
// result.
func (o *options) execute(stdout io.Writer) ([]result, error) {
	var err error
	for _, p := range []*string{&o.controller, &o.plugin, &o.wasmModule, &o.wasmCache} {
		if *p == "" {
			continue
		}
		if *p, err = filepath.Abs(*p); err != nil {
			return nil, err
		}
	}
	if o.out == "" {
		if o.out, err = os.MkdirTemp("", "trainforge-load-"); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	rows, err := o.rowSpecs()
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.wasm && o.wasmSHA256 == "" {
			data, err := os.ReadFile(o.wasmModule)
			if err != nil {
				return nil, fmt.Errorf("the wasm row's module (-wasm-module): %w; make bench-load builds it", err)
			}
			sum := sha256.Sum256(data)
			o.wasmSHA256 = hex.EncodeToString(sum[:])
		}
	}
	scheme, err := operator.NewScheme(builtin.AddToScheme)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "load: %s mode, %d TrainJobs, runtime %s, %d clients, %d round(s); logs in %s\n", o.mode, o.n, o.runtime, o.clients, o.rounds, o.out)

	var results []result
	for round := 1; round <= o.rounds; round++ {
		for _, row := range rows {
			r := o.runRound(row, round, scheme)
			results = append(results, r)
		}
	}
	againstFloors(results)

	var table strings.Builder
	fmt.Fprintf(&table, "%s mode, %d TrainJobs on the %s runtime, %d concurrent clients, design floor with %d writers", o.mode, o.n, o.runtime, o.clients, o.workers)
	if o.rounds > 1 {
		fmt.Fprintf(&table, ", %d interleaved rounds", o.rounds)
	}
	table.WriteString(".\n\n")
	if o.instructions {
		fmt.Fprintf(&table, "%s\n\n", instructionsNote)
	}
	if o.mode == "burst" {
		printBurst(&table, results, o.instructions)
	} else {
		printRestart(&table, results, o.instructions)
	}
	if o.rounds > 1 {
		fmt.Fprintln(&table)
		printMedians(&table, results, o.mode, o.instructions)
	}
	fmt.Fprintf(&table, "\n%s\n", machine())
	fmt.Fprint(stdout, table.String())
	_ = os.WriteFile(filepath.Join(o.out, "table.md"), []byte(table.String()), 0o644)
	return results, rowsFailed(results, o.out)
}

// rowsFailed is execute's error when rows failed: each row's error as it
// is (a controller that exited carries the end of its log), since out may
// be a directory that a test deletes when it ends.
func rowsFailed(results []result, out string) error {
	var failed []error
	for _, r := range results {
		if r.err != nil {
			failed = append(failed, fmt.Errorf("row %s failed: %w", r.label, r.err))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("%w\n(the rows' logs are in %s)", errors.Join(failed...), out)
}

// runRound runs one row of one round, on a fresh API server.
func (o *options) runRound(row rowSpec, round int, scheme *runtime.Scheme) result {
	label := row.name
	if o.rounds > 1 {
		label = fmt.Sprintf("%s (round %d)", row.name, round)
	}
	fmt.Fprintf(os.Stderr, "load: row %s...\n", label)
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	r := o.runRow(ctx, row, round, scheme)
	r.label = label
	if r.err != nil {
		fmt.Fprintf(os.Stderr, "load: row %s failed: %v\n", label, r.err)
	} else {
		fmt.Fprintf(os.Stderr, "load: row %s: %s s, %s CPU s, %d requests%s\n", label, secs(r.makespan), secs(r.cpu), r.req.total, r.instr.logText())
	}
	return r
}

type rowKind int

const (
	rowFloor rowKind = iota
	// rowDesignFloor: the harness makes the writes any TrainJob
	// controller must make (designfloor.go).
	rowDesignFloor
	rowTrainforge
	rowCommand
)

// rowSpec says how one row runs its controller.
type rowSpec struct {
	name     string
	kind     rowKind
	external bool   // rowTrainforge: every built-in out of process
	wasm     bool   // rowTrainforge: every built-in a wasm plugin
	command  string // rowCommand
	ready    string // rowCommand: its readiness URL, or ""
}

// doneWhen is what the row's TrainJobs must have before the row is done:
// Trainforge sets a Created condition, another controller may not.
func (r rowSpec) doneWhen() doneWhen {
	switch r.kind {
	case rowFloor:
		return jobSetsOnly
	case rowTrainforge, rowDesignFloor:
		return jobSetsAndCreated
	default:
		return jobSetsCreatedIfSet
	}
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
	readyURLs := map[string]string{}
	for _, r := range o.ready {
		name, url, ok := strings.Cut(r, "=")
		if !ok || name == "" || url == "" {
			return nil, fmt.Errorf("-ready %q: want NAME=URL", r)
		}
		if _, ok := commands[name]; !ok {
			return nil, fmt.Errorf("-ready %q: %q is not the name of a -compare", r, name)
		}
		readyURLs[name] = url
	}
	var out []rowSpec
	for _, name := range strings.Split(o.rows, ",") {
		switch name = strings.TrimSpace(name); name {
		case "":
		case "floor":
			out = append(out, rowSpec{name: name, kind: rowFloor})
		case designFloorRow:
			out = append(out, rowSpec{name: name, kind: rowDesignFloor})
		case "in-process":
			out = append(out, rowSpec{name: name, kind: rowTrainforge})
		case "external":
			out = append(out, rowSpec{name: name, kind: rowTrainforge, external: true})
		case "wasm":
			out = append(out, rowSpec{name: name, kind: rowTrainforge, wasm: true})
		default:
			cmd, ok := commands[name]
			if !ok {
				return nil, fmt.Errorf("-rows: %q is neither floor, %s, in-process, external, wasm nor the name of a -compare", name, designFloorRow)
			}
			out = append(out, rowSpec{name: name, kind: rowCommand, command: cmd, ready: readyURLs[name]})
		}
	}
	return out, nil
}

// runRow runs one row on a fresh API server.
func (o *options) runRow(ctx context.Context, row rowSpec, round int, scheme *runtime.Scheme) result {
	r := result{name: row.name, label: row.name, kind: row.kind, round: round, n: o.n, loadBefore: harness.LoadAvg()}
	dir := filepath.Join(o.out, row.name)
	if o.rounds > 1 {
		dir = filepath.Join(o.out, fmt.Sprintf("%s-%d", row.name, round))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.err = err
		return r
	}
	cl, err := harness.StartCluster(dir)
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
			cl.Stop()
			stopped = true
		}
	}
	defer stopCluster()
	admin, err := client.New(cl.Admin, client.Options{Scheme: scheme})
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

	if err := warmWatchCaches(ctx, cl.Admin, scheme); err != nil {
		r.err = err
		return r
	}

	var window [2]time.Time
	switch {
	case row.kind == rowFloor:
		window, err = o.floor(ctx, dir, cl, scheme, &r)
	case row.kind == rowDesignFloor:
		window, err = o.designFloor(ctx, dir, cl, admin, scheme, rt.Name, &r)
	case o.mode == "burst":
		window, err = o.burst(ctx, row, dir, cl, admin, scheme, rt.Name, &r)
	default:
		window, err = o.restart(ctx, row, dir, cl, admin, scheme, rt.Name, &r)
	}
	r.after = harness.LoadAvg()
	if err == nil && o.afterRow != nil {
		err = o.afterRow(ctx, row, admin)
	}
	if err != nil {
		r.err = err
		return r
	}
	stopCluster() // flushes the audit log
	if r.req, err = readAudit(cl.AuditLog, harness.ControllerUser, window[0], window[1]); err != nil {
		r.err = err
	}
	if !r.settleWindow[0].IsZero() {
		if r.settleReq, err = readAudit(cl.AuditLog, harness.ControllerUser, r.settleWindow[0], r.settleWindow[1]); err != nil {
			r.err = err
		}
	}
	return r
}
