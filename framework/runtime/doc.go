// Package runtime runs Trainforge's plugins, as kube-scheduler's
// framework/runtime runs a scheduler's: the plugin set a configuration
// compiles into (a list per extension point, in the configured order, taken
// once from what each plugin's type implements), the Framework that holds
// the set in use and swaps it on a reload, and the Cycle that runs one
// TrainJob's phases through it, each phase calling the plugins that take
// part under their failure policies, checking what they answer, and
// returning its result; the cycle keeps the failures it ignored. It counts
// every call in Prometheus metrics (Collectors).
//
// Its shape is kube-scheduler's: plugins implement the points they need,
// the set is compiled once (New, and again when Framework.Replace swaps in
// a reloaded configuration or a supervised plugin describes itself anew),
// and the per-reconcile state (the runtime's policy keys, the plugins that
// take part) is computed once and carried from phase to phase by the Cycle.
//
// It is apart from package framework, which plugins are written with, so
// that a plugin links none of it: only hosts import it (internal/controller,
// internal/webhook, internal/operator, and the hosts of plugins out of
// process, framework/external and framework/wasm, which implement
// Supervised). Importers name it frameworkruntime, as kube-scheduler's do,
// since Go's runtime and apimachinery's share its name.
package runtime
