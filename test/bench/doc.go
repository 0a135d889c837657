// Package bench measures the cost of one call of each extension point, and
// of one reconcile's plugin work, with the built-in plugins in-process and
// with the same built-ins served out of process by
// cmd/trainforge-builtin-plugin through the real external-plugin host
// (framework/external: go-plugin, gRPC over a Unix socket, AutoMTLS, JSON
// documents and JSON Patch), and compiled to WebAssembly
// (trainforge-builtin-plugin built with GOOS=wasip1) run by the wasm host
// (framework/wasm: wazero, in this process).
//
// Run it with `make bench`, which prints a table; docs/benchmarks.md
// explains the figures. The benchmarks have no timed assertions: a quick
// smoke run (`go test -run='^$' -bench=. -benchtime=1x ./test/bench/`)
// checks only that every benchmark runs and that both paths give the same
// results.
package bench
