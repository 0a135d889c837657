// Package wasm runs Trainforge plugins compiled to WebAssembly in the
// controller's own process, with wazero (pure Go, no cgo): a third kind of
// plugin beside the ones compiled in and the external ones (package
// framework/external), for a third party's plugin that should be neither
// trusted with the controller's process nor cost a process and a sidecar
// of its own.
//
// A module is the plugin's own Go code built with
// `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared` (the SDK's
// sdk.Serve exports the protocol there), or any module of the contract in
// package framework/wasm/abi. The host:
//
//   - checks the module's sha256 against the configuration before it
//     compiles it, and compiles each module once, one at a time (a cache
//     keyed by the checksum and the memory limit; wazero's machine-code
//     cache below it), giving the compilation's garbage back to the
//     system at once; it compiles the module without its data segments,
//     which it keeps as a memory image that every instance's memory maps
//     copy-on-write (PrepareModule, on Linux: an instance's start copies
//     nothing, and the pages an instance only reads are shared), or with
//     them packed elsewhere (PackDataSegments: Go's linker writes up to
//     100,000 of them, which would cost every instance's start and heap);
//   - runs it in a pool of instances, at most maxInstances and no more than
//     its share of pluginHost.wasmMemoryBudget (Budget: every wasm
//     plugin's instances × memoryLimit fit in it, or a plugin is refused
//     at Start), so that calls in parallel never share one (a Go guest is
//     single-threaded); each instance is reused by call after call;
//   - saves the first instance once it is configured, where the module
//     allows (snapshot.go): its memory in a sealed memory file, its mutable
//     globals (which the rewrite exports) and its clock; every other
//     instance starts from that save, its memory mapped copy-on-write,
//     with nothing of the guest run, so an instance that a call left
//     holding more than half the room its memory limit gave it is replaced
//     (a WebAssembly memory never shrinks); a module that cannot be saved
//     starts each instance as the first, configured, and keeps grown ones;
//   - gives each instance a memory limit past which its memory does not
//     grow, mapped apart from the Go heap (on Linux) and given back when
//     the instance ends;
//   - lets a call wait for a free instance at most InstanceWait, then
//     gives it its deadline, at which the guest is interrupted: the host
//     writes a check into the module's loops and function entries, which
//     leaves for Go every thousand times and traps once the host has set
//     the module's interruption global (instrumentInterrupt); a module it
//     cannot instrument is checked by wazero (WithCloseOnContextDone), at
//     several times the cost per call;
//   - gives the module no file system, no environment, no network, no real
//     clock (wazero's fake clock: Go's runtime starts with it) and one host
//     function, a log whose lines reach the controller's log under the
//     plugin's name, rate-limited;
//   - sends the protocol's protobuf messages, through the same protocol
//     client as external plugins (remote.Client over Plugin's
//     grpc.ClientConnInterface): one decoder, the same limits, the same
//     Info-changes rules;
//   - shares with the host of external plugins everything that is not
//     about running a module (package framework/pluginhost): the options
//     and their check, the start sequence (Describe, the name check,
//     Configure, Watch) on the first instance, the rate-limited log
//     forwarder, CloseWhenIdle.
//
// A call that traps, panics, passes its deadline or runs out of memory ends
// its instance and is that call's error, under the plugin's failure
// policy; the instance is never used again, and a new one starts. A call
// of the same input (the same TrainJob and Info) within
// pluginHost.restartBackoff.max gets the same error at once, as does one
// whose answer was refused for its size: a module has no clock, network or
// files, and would do the same again, at the cost of an instance and, for
// a loop, a core for its whole deadline. A call that
// reached its deadline with a tenth of it or less in CPU time (its
// thread's, on Linux) waited for a CPU rather than looped: the first such
// call of an input is a *framework.UnavailableError, neither remembered
// nor counted towards a backoff, and only a second one counts as the
// module's (Plugin.starvedCall). An answer past maxMessageBytes is
// refused unread.
//
// A call that gets no instance within InstanceWait, or comes while the
// module is stopped, took place in no instance: it fails with a
// *framework.UnavailableError, which the framework never skips under
// Ignore, so the TrainJob is retried and what it gets from the plugin is
// the plugin's answer to its own call, whatever other TrainJobs' calls
// do. DeadlinesBeforeBackoff calls in a row that end at their deadline,
// with no answer between them, stop the module for a backoff
// (pluginHost.restartBackoff, doubling while it goes on): its idle
// instances end, its calls fail at once, Ready says why (the controller's
// readiness, under Fail) and trainforge_plugin_down is 1.
package wasm
