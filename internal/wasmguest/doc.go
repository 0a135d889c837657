// Package wasmguest is the guest's side of the WebAssembly plugin contract
// (framework/wasm/abi) for Go, built only with GOOS=wasip1: see
// guest_wasip1.go. Built for any other GOOS it is empty.
package wasmguest
