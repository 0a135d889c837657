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
//     compiles it, and compiles each module once (a cache keyed by the
//     checksum and the memory limit; wazero's machine-code cache below it);
//   - runs it in a pool of instances, at most maxInstances, so that calls in
//     parallel never share one (a Go guest is single-threaded); each
//     instance is started, configured and then reused by call after call;
//   - gives each call its deadline, at which wazero interrupts the guest
//     (WithCloseOnContextDone), and each instance a memory limit past which
//     its memory does not grow;
//   - gives the module no file system, no environment, no network, no real
//     clock (wazero's fake clock: Go's runtime starts with it) and one host
//     function, a log whose lines reach the controller's log under the
//     plugin's name, rate-limited;
//   - sends the protocol's protobuf messages, through the same protocol
//     client as external plugins (remote.Client over Plugin's
//     grpc.ClientConnInterface): one decoder, the same limits, the same
//     Info-changes rules.
//
// A call that traps, panics, passes its deadline or runs out of memory ends
// its instance and is that call's error, under the plugin's failure
// policy; the next call starts a new instance. An answer past
// maxMessageBytes is refused unread.
package wasm
