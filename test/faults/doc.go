// Package faults is the fault suite (make test-faults): each test runs a
// storm of TrainJobs (-jobs, 500 in make test-faults) against a real
// kube-apiserver and etcd (test/testenv: the envtest binaries make envtest
// builds), with the controller as a real process (cmd/trainforge-controller)
// and every plugin external (cmd/trainforge-builtin-plugin, and the hostile
// test plugin, test/plugins/hostile), built once for the run or taken from
// bin/ (make test-faults builds them there), and breaks something during the storm: a
// plugin process killed, a plugin that hangs, the controller killed and
// restarted, the API server restarted, a runtime deleted, plugins that
// answer garbage under each failure policy, and the leader of two replicas
// killed.
//
// Each test asserts what a user would notice afterwards: every TrainJob
// has exactly its objects and the condition its case promises, no JobSet
// was deleted and created again (their UIDs are recorded by a watch during
// the storm), Events stay few per TrainJob, no plugin process outlives its
// controller, the controller's log has no panic, and its peak memory stays
// below a bound, the storm's and the start-up's apart (the start-up of
// the wasm cases compiles a module). How long the storm took with the fault, minus the same
// storm without it, is reported in a table (printed, and written to
// -out/faults.md), never asserted: speed depends on the machine.
//
// docs/reliability.md says what is promised and which test shows it.
package faults
