// Command load measures the controller under a burst of TrainJobs against a
// real API server, and prints one table in which every row comes from the
// same invocation, so that the ratios between rows mean something.
//
// Each row gets a fresh kube-apiserver and etcd from the envtest cache
// (hack/envtest.sh) with the Trainforge, JobSet and PodGroup CRDs, and an
// audit log that records every request of the user the measured controller
// runs as. Rows:
//
//   - floor: the harness itself creates the objects the built-ins would build
//     (the same JobSets, and PodGroups for the coscheduling runtime), with
//     the same concurrency as the TrainJob submitters: the raw speed of
//     the API server at creating them.
//   - design-floor: no controller either; the harness makes exactly the
//     writes any TrainJob controller must make per TrainJob: the
//     submitters create the TrainJob, then writers acting as a
//     controller's workers (-workers, watching the TrainJobs) create its
//     JobSet, owned by it, and make one status update that sets Created.
//     No TrainJob controller can do better on the same API server; the
//     table gives every row's makespan against it.
//   - in-process: the trainforge-controller binary with the built-ins in
//     its process.
//   - external: the same binary with every built-in served by
//     trainforge-builtin-plugin (the plugin processes' CPU and memory are
//     counted with the controller's).
//   - wasm: the same binary with every built-in a wasm plugin, the four
//     entries of trainforge-builtin-plugin built as one WebAssembly module
//     (-wasm-module), with a wasm entry's defaults; the module is compiled
//     before the row's clock starts (its machine code cached in
//     <out>/wasm-cache for the rounds after the first).
//   - any command given with -compare NAME=COMMAND, for another operator
//     serving trainer.kubeflow.org/v1alpha1. Such a row is done when every
//     TrainJob has its JobSet: another operator may set no Created
//     condition (Kubeflow Trainer sets none). -ready NAME=URL gives it a
//     readiness URL to wait for before the TrainJobs are created.
//
// Modes: burst (N TrainJobs created while the controller runs) and restart
// (N TrainJobs created while no controller runs, then the controller
// starts; then it is restarted once all are up to date, to see how long it
// takes to settle and how many writes it makes).
//
// -rounds R runs the rows R times interleaved (A B C A B C …) and adds a
// table of medians and ranges: the machine's speed drifts within an hour,
// so only rows run side by side compare.
//
// -instructions runs every row's controller process (the Trainforge rows'
// and the -compare rows'; the floors have none) under valgrind's
// cachegrind (valgrind --tool=cachegrind --fair-sched=yes --cache-sim=no;
// fair scheduling keeps the Go runtime's spinning out of the count), which
// counts the instructions it executes into cachegrind.out in the row's
// directory, and adds a column of millions of instructions per TrainJob:
// unlike CPU seconds, which drift about 2× within an hour on a shared VM,
// the count does not depend on the machine's load, and a VM has no
// hardware counters to count them natively. Before each measured run, the same controller
// starts once on the row's API server with no TrainJob (restart mode: before
// the TrainJobs are created), is waited for until ready and quiet as the
// measured run is, and is stopped (cachegrind-idle.out): that start-up is
// subtracted, and the rest divided by the TrainJobs. The count is of the
// controller process only: an external row's plugin processes are not
// under valgrind. instructions.txt in the row's directory has the totals;
// a controller killed before it exits has no summary, and its cell says
// so. Under valgrind a controller runs many times slower, so the row's
// other figures are those of the process under valgrind; the external and
// wasm rows' plugin entries get a callTimeout of 1m and a startTimeout of
// 5m (at the default 2 s the wasm row's calls ran out of time, and the
// count was of retries), and the wasm row's module is compiled into its
// cache before the first start-up run, so that the start-up run and the
// measured one both read it from there. Every process under valgrind gets
// cpu.rdtscp=off in GODEBUG: valgrind 3.19 (Debian 12's) cannot decode
// RDTSCP, which Go's runtime executes on CPUs that have it (AMD EPYC), and
// the controller would die of SIGILL. Before anything starts, -instructions
// builds a small Go program and runs it under valgrind the same way, and
// fails at once, with valgrind's diagnosis and what to do, when valgrind
// cannot run it.
//
// Wall-clock figures depend on what else runs on the machine: the table
// prints the load average of each row. Request counts and CPU seconds (or,
// with -instructions, instructions) are the figures to develop with. The harness asserts nothing about time; it
// fails only when a row does not finish (see -timeout).
package main
