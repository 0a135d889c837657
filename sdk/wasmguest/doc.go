// Package wasmguest is the guest's side of the WebAssembly plugin contract
// (framework/wasm/abi) for Go: the module's exports, which serve one
// PluginService, and its log. sdk.Serve and sdk.ServeFactory use it when
// built with GOOS=wasip1; a program calls Register itself only to serve a
// PluginService of its own rather than a framework.Plugin (the hostile
// test plugin does, to send answers the SDK never sends). Built for any
// other GOOS it is empty.
package wasmguest
