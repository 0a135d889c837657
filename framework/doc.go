// Package framework is the plugin framework of Trainforge: the Info
// document that flows through a reconcile, one small interface per
// extension point, a registry of plugin factories and the runner that calls
// the enabled plugins in the configured order.
//
// The framework knows no plugin by name: cmd/ wires the built-ins into a
// Registry and the configuration file picks and orders them.
package framework
