package main

import (
	"github.com/trainforge/trainforge/test/load/harness"

	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trainforge/trainforge/test/testenv"
)

// -instructions: each controller process of a row runs under cachegrind,
// which counts the instructions it executes. Unlike CPU seconds, which
// drift about 2× within an hour on a shared VM, the count does not depend
// on what else runs on the machine; and the VMs the harness runs on have no
// hardware counters to count them natively (perf stat -e instructions).
//
// The count covers the process's whole life, start-up included (process
// init, discovery, cache sync), which is no TrainJob's cost: before the
// measured run, the same controller starts once on the row's API server
// with no TrainJob, is waited for until ready and quiet as a measured run
// is, and is stopped; its count is subtracted.

// errNoValgrind is parseFlags' error when -instructions is set and
// valgrind is not on PATH.
var errNoValgrind = errors.New("-instructions needs valgrind (Debian: apt-get install valgrind)")

// wrappedStopGrace is how long a controller under valgrind is given to exit
// after SIGTERM: it exits slower than a native one, and cachegrind writes
// its summary only at the exit, so a kill loses the count.
const wrappedStopGrace = 60 * time.Second

// controllerStart names one start of a row's controller; its log and its
// cachegrind out file are named after it.
type controllerStart string

const (
	// measuredStart is the start the row measures.
	measuredStart controllerStart = ""
	// idleStart is the start with no TrainJob whose count is
	// subtracted (-instructions only).
	idleStart controllerStart = "idle"
	// restartedStart is restart mode's second start, with every
	// TrainJob up to date.
	restartedStart controllerStart = "restarted"
	// wasmCacheStart compiles the wasm row's module into its cache
	// before the start-up run (-instructions only).
	wasmCacheStart controllerStart = "wasm-cache"
)

func (s controllerStart) file(base, ext string) string {
	if s == "" {
		return base + ext
	}
	return base + "-" + string(s) + ext
}

// logName is the start's log, in the row's directory.
func (s controllerStart) logName() string { return s.file("controller", ".log") }

// cachegrindOut is the start's cachegrind out file, in the row's directory.
func (s controllerStart) cachegrindOut() string { return s.file("cachegrind", ".out") }

// valgrindArgs are the words that run a command under cachegrind, its
// counts going to out. Only the instruction count is wanted, so the cache
// simulation is off. (Callgrind, which would give a count per function too,
// asserts on the Go runtime's signals.)
//
// --fair-sched=yes: valgrind runs one thread at a time, and by default a
// thread that gives up its lock may take it straight back. Go's scheduler
// spins (runtime.lock2 and unlock2, findRunnable, the background sweeper's
// Gosched) waiting for work another thread holds, so now and then a
// controller counted billions of instructions of spinning: 3 of 8 rounds of
// the same 5 TrainJobs, one start with no TrainJob at 8.2 G against its usual
// 0.15 G (cg_annotate: lock2/unlock2 31%), and make test-load-smoke failed
// once on a start-up that cost more than the whole measured run. Handed
// round in turn, the threads counted 0.13 to 0.15 G in 10 of 10 rounds.
func valgrindArgs(out string) []string {
	return []string{"valgrind", "--tool=cachegrind", "--fair-sched=yes", "--cache-sim=no", "--cachegrind-out-file=" + out}
}

// valgrindGODEBUG is in GODEBUG for every process the harness runs under
// valgrind. Valgrind 3.19 (Debian 12's) cannot decode RDTSCP (0F 01 F9),
// which Go's runtime executes in runtime.cputicks when the CPU has it (AMD
// EPYC does): under valgrind the controller died of SIGILL. With the
// runtime's cpu.rdtscp option off (internal/cpu), cputicks reads the clock
// with a fenced RDTSC instead, which valgrind decodes; the count is of the
// same work.
const valgrindGODEBUG = "cpu.rdtscp=off"

// valgrindEnv returns env, what a process gets on top of the harness's
// environment (harness.StartProcess adds it), with the GODEBUG of a process
// under valgrind: valgrindGODEBUG after the GODEBUG that env or else the
// harness's environment has, which it keeps (the last setting of an
// option wins).
func valgrindEnv(env []string) []string {
	godebug := os.Getenv("GODEBUG")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			godebug = v
		}
	}
	if godebug == "" {
		godebug = valgrindGODEBUG
	} else {
		godebug += "," + valgrindGODEBUG
	}
	return append(slices.Clip(env), "GODEBUG="+godebug)
}

// readCachegrindSummary returns the total instructions (Ir) of a
// cachegrind out file: the field of its `summary:` line that its
// `events:` line names Ir. Cachegrind writes the summary when the
// process exits; a process that was killed has none.
func readCachegrindSummary(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var events []string
	sc := bufio.NewScanner(f)
	// Cachegrind's lines name files and functions; some are long.
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "events:"); ok {
			events = strings.Fields(rest)
			continue
		}
		rest, ok := strings.CutPrefix(line, "summary:")
		if !ok {
			continue
		}
		i := slices.Index(events, "Ir")
		if i < 0 {
			return 0, fmt.Errorf("%s: no Ir among the events %q before its summary line (cachegrind counts Ir unless told not to)", path, events)
		}
		fields := strings.Fields(rest)
		if i >= len(fields) {
			return 0, fmt.Errorf("%s: summary line %q has no field for Ir, event %d of %q", path, line, i+1, events)
		}
		ir, err := strconv.ParseUint(fields[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: summary line %q: Ir %q is not a count: %w", path, line, fields[i], err)
		}
		return ir, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return 0, fmt.Errorf("%s: no summary line: the process did not exit by itself (killed?), and cachegrind writes its summary when it does", path)
}

// instructions are what cachegrind counted for one row (-instructions).
type instructions struct {
	// measured and idle are the totals (Ir) of the measured start and
	// of the start with no TrainJob; restarted is that of restart mode's
	// second start (0 in burst mode).
	measured, idle, restarted uint64
	// err says why measured or idle is missing: the cell then says so
	// rather than show a made-up figure.
	err error
}

// perJob is the instructions per TrainJob: the measured total without
// the start-up's, over n.
func (in *instructions) perJob(n int) (float64, bool) {
	if in == nil || in.err != nil {
		return 0, false
	}
	return (float64(in.measured) - float64(in.idle)) / float64(n), true
}

// logText is the totals for the row's line in the harness's log, or ""
// on nil.
func (in *instructions) logText() string {
	if in == nil {
		return ""
	}
	if in.err != nil {
		return ", no cachegrind summary"
	}
	return fmt.Sprintf(", %d instructions (Ir) less %d of the start-up", in.measured, in.idle)
}

// instructionsCell is a row's `M instructions/job` cell: millions, 2
// decimals; – for a row with no controller.
func instructionsCell(r result) string {
	if r.instr == nil {
		return "–"
	}
	perJob, ok := r.instr.perJob(r.n)
	if !ok {
		return "– (no cachegrind summary)"
	}
	return fmt.Sprintf("%.2f", perJob/1e6)
}

// instructionsNote is the tables' note on the column.
const instructionsNote = "M instructions/job: instructions executed by the controller process alone (valgrind's cachegrind; an external row's plugin processes are not counted), less those of the same controller started, waited for until ready and quiet, and stopped on the row's API server with no TrainJob (its start-up), over the TrainJobs; the totals are in each row's instructions.txt. With -instructions every controller runs under valgrind, many times slower: its wall-clock figures, CPU s and peak RSS are those of the process under valgrind."

// startupInstructions starts the row's controller under cachegrind once
// on the row's API server, with no TrainJob, waits until it is ready and
// quiet as the measured start is waited for, and stops it: its total is
// the start-up, no TrainJob's cost. It returns nil without -instructions
// or for a row with no controller. A missing summary is no failure of the
// row (its other figures stand; the cell says the count is missing); a
// controller that does not start is.
func (o *options) startupInstructions(ctx context.Context, row rowSpec, dir string, cl *harness.Cluster) (*instructions, error) {
	if !o.instructions || (row.kind != rowTrainforge && row.kind != rowCommand) {
		return nil, nil
	}
	if err := o.warmWasmCache(ctx, row, dir, cl); err != nil {
		return nil, err
	}
	p, err := o.startController(ctx, row, dir, idleStart, cl, true)
	if err != nil {
		return nil, fmt.Errorf("the start-up run with no TrainJob (-instructions): %w", err)
	}
	p.Stop()
	in := &instructions{}
	in.idle, in.err = readCachegrindSummary(filepath.Join(dir, idleStart.cachegrindOut()))
	return in, nil
}

// warmWasmCache fills the wasm row's compilation cache, when it is empty,
// with a start of the controller (under valgrind as the others, so that
// it stores what they look up): otherwise the start with no TrainJob
// would compile the module and the measured start read it from the cache,
// and the subtraction would charge the TrainJobs less than nothing for
// their part.
func (o *options) warmWasmCache(ctx context.Context, row rowSpec, dir string, cl *harness.Cluster) error {
	if !row.wasm {
		return nil
	}
	if hasFile(o.wasmCacheDir()) {
		return nil
	}
	p, err := o.startController(ctx, row, dir, wasmCacheStart, cl, true)
	if err != nil {
		return fmt.Errorf("compiling the wasm module into %s before the start-up run (-instructions): %w", o.wasmCacheDir(), err)
	}
	p.Stop()
	return nil
}

// hasFile reports whether there is a regular file under dir: wazero
// keeps its compiled modules in a directory per version, which it may have
// made without filling (a controller stopped while it compiled).
func hasFile(dir string) bool {
	found := errors.New("found")
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			return found
		}
		return nil
	})
	return errors.Is(err, found)
}

// finish reads the measured start's summary (and restart mode's second
// start's, when restarted) and writes the totals to instructions.txt in
// dir, for a reader to check the row's figure against. It does nothing on
// nil.
func (in *instructions) finish(r *result, dir string, restarted bool) {
	if in == nil {
		return
	}
	measured, err := readCachegrindSummary(filepath.Join(dir, measuredStart.cachegrindOut()))
	in.measured = measured
	in.err = errors.Join(in.err, err)
	if restarted {
		var err error
		if in.restarted, err = readCachegrindSummary(filepath.Join(dir, restartedStart.cachegrindOut())); err != nil {
			fmt.Fprintf(os.Stderr, "load: row %s: %v\n", r.name, err)
		}
	}
	r.instr = in

	var b strings.Builder
	b.WriteString("# Instructions (Ir) counted by cachegrind, of the controller process only.\n")
	fmt.Fprintf(&b, "measured\t%d\t%s\n", in.measured, measuredStart.cachegrindOut())
	fmt.Fprintf(&b, "idle\t%d\t%s: the start-up with no TrainJob, subtracted\n", in.idle, idleStart.cachegrindOut())
	if restarted {
		fmt.Fprintf(&b, "restarted\t%d\t%s: the restart with every TrainJob up to date (not in the table)\n", in.restarted, restartedStart.cachegrindOut())
	}
	fmt.Fprintf(&b, "trainjobs\t%d\n", r.n)
	if perJob, ok := in.perJob(r.n); ok {
		fmt.Fprintf(&b, "per-trainjob\t%.0f\t(measured - idle) / trainjobs\n", perJob)
	} else {
		fmt.Fprintf(&b, "per-trainjob\tmissing\t%s\n", oneLine(in.err))
		fmt.Fprintf(os.Stderr, "load: row %s: no instructions figure: %v\n", r.name, in.err)
	}
	if err := os.WriteFile(filepath.Join(dir, "instructions.txt"), []byte(b.String()), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "load: row %s: %v\n", r.name, err)
	}
}

// lookValgrind checks that -instructions can run valgrind, and that
// valgrind runs Go code on this machine (valgrindRunsGo, once per run).
func lookValgrind() error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		return errNoValgrind
	}
	return valgrindRunsGoOnce()
}

// valgrindRunsGoOnce is valgrindRunsGo's answer, found once per run: it
// builds a program and runs it under valgrind, seconds on a busy machine.
var valgrindRunsGoOnce = sync.OnceValue(valgrindRunsGo)

// valgrindCheckProgram is the Go program valgrindRunsGo runs. A channel
// receive that blocks while the block profile is on reads
// runtime.cputicks, as the controller does (its lock contention, for one):
// where the CPU has RDTSCP and GODEBUG does not turn it off, that is the
// instruction valgrind 3.19 cannot decode. A program that does nothing
// never gets there.
const valgrindCheckProgram = `package main

import "runtime"

func main() {
	runtime.SetBlockProfileRate(1)
	c := make(chan int)
	go func() { c <- 1 }()
	<-c
}
`

// valgrindCheckTimeout bounds the check's build and run (a few seconds on
// an idle machine).
const valgrindCheckTimeout = 3 * time.Minute

// valgrindRunsGo builds a small Go program and runs it under valgrind as
// the controllers are run (valgrindArgs, valgrindEnv). A controller that
// valgrind cannot run dies during its start-up, after an API server has
// been started for its row, with a Go crash at the end of its log; this
// fails before anything starts, and says what is wrong and what to do.
func valgrindRunsGo() error {
	ctx, cancel := context.WithTimeout(context.Background(), valgrindCheckTimeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "trainforge-valgrind-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for name, text := range map[string]string{
		"go.mod":  "module valgrindcheck\n\ngo 1.21\n",
		"main.go": valgrindCheckProgram,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	prog := filepath.Join(dir, "check")
	build := exec.CommandContext(ctx, "go", "build", "-o", prog, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("-instructions checks that valgrind runs Go code with a small Go program, and building it failed (go build in %s: %v):\n%s", dir, err, testenv.Tail(string(out), testenv.LogTailLines))
	}
	argv := append(valgrindArgs(filepath.Join(dir, "cachegrind.out")), prog)
	env := valgrindEnv(nil)
	run := exec.CommandContext(ctx, argv[0], argv[1:]...)
	run.Env = append(os.Environ(), env...)
	out, err := run.CombinedOutput()
	if err != nil {
		return valgrindFailure(append(env, argv...), string(out), err)
	}
	return nil
}

// valgrindDiagnosisLine is a line valgrind writes about an instruction it
// cannot run: VEX's decoding of it, the address, and the stack there.
var valgrindDiagnosisLine = regexp.MustCompile(`^(vex |==\d+== +(valgrind: |at 0x|by 0x))`)

// rdtscpBytes is how valgrind shows the bytes of RDTSCP (0F 01 F9).
const rdtscpBytes = "unhandled instruction bytes: 0xF 0x1 0xF9"

// valgrindFailure is valgrindRunsGo's error when the program did not run
// under valgrind (command, with the variables it added to the
// environment first): what failed, valgrind's diagnosis (or the end of the
// output, when it has none) and what to do.
func valgrindFailure(command []string, output string, err error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "-instructions: valgrind cannot run Go code on this machine: a small Go program run as the controllers are, %s, failed: %v.\n", strings.Join(command, " "), err)
	var diagnosis []string
	for _, line := range strings.Split(output, "\n") {
		if !valgrindDiagnosisLine.MatchString(line) {
			continue
		}
		// The first is the cause: the program's crash that follows
		// (its signal handler) can run into the instruction again.
		if strings.HasPrefix(line, "vex ") && len(diagnosis) > 0 && !strings.HasPrefix(diagnosis[len(diagnosis)-1], "vex ") {
			break
		}
		diagnosis = append(diagnosis, line)
	}
	if len(diagnosis) > 0 {
		fmt.Fprintf(&b, "Valgrind's diagnosis:\n%s\n", strings.Join(diagnosis, "\n"))
	} else {
		fmt.Fprintf(&b, "The end of its output:\n%s\n", testenv.Tail(output, testenv.LogTailLines))
	}
	switch {
	case strings.Contains(output, rdtscpBytes):
		fmt.Fprintf(&b, "0F 01 F9 is RDTSCP, which Go's runtime reads the clock with (runtime.cputicks) when the CPU has it, and which GODEBUG=%[1]s should have turned off. "+
			"Check that this Go (go version) still has that option (grep -n rdtscp \"$(go env GOROOT)/src/internal/cpu/cpu_x86.go\") and set valgrindGODEBUG in test/load/instructions.go to the one it has; "+
			"or install a valgrind that decodes RDTSCP (newer than the one installed, valgrind --version).", valgrindGODEBUG)
	case strings.Contains(output, "unhandled instruction bytes"):
		b.WriteString("Valgrind cannot decode an instruction that Go's code uses on this CPU. " +
			"Install a valgrind that decodes it (newer than the one installed, valgrind --version), or run -instructions on a machine with another CPU; " +
			"when it belongs to a CPU feature that Go's runtime can be told not to use (the cpu.* options of GODEBUG, named in \"$(go env GOROOT)/src/internal/cpu/cpu_x86.go\"), adding that option to valgrindGODEBUG in test/load/instructions.go avoids it.")
	default:
		b.WriteString("Check that valgrind works here: valgrind --tool=cachegrind --fair-sched=yes --cache-sim=no /bin/true.")
	}
	return errors.New(b.String())
}
