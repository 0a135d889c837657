// Package framework is the plugin framework of Trainforge: the Info
// document that flows through a reconcile, one small interface per
// extension point, a registry of plugin factories, the plugin set that a
// configuration compiles into (a list per extension point, in the
// configured order), and the Cycle that runs one TrainJob's phases through
// it, each phase returning its result and the failures it ignored.
//
// Its shape is kube-scheduler's: plugins implement the points they need,
// the set is compiled once (New, and again when Framework.Replace swaps in
// a reloaded configuration or an external plugin describes itself anew),
// and the per-reconcile state (the runtime's policy keys, the plugins that
// take part) is computed once and carried from phase to phase by the Cycle.
//
// The framework knows no plugin by name: cmd/ wires the built-ins into a
// Registry and the configuration file picks and orders them.
package framework
