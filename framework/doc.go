// Package framework is what a Trainforge plugin is written with, as
// kube-scheduler's framework package is for a scheduler plugin: the Info
// document that flows through a reconcile (and NewInfo, which makes it
// from a TrainJob and its runtime), one small interface per extension
// point and the Description a plugin gives of itself, the Objects Build
// returns, the Handle of the host's facts, the errors a plugin answers
// with, and the Registry of plugin factories by name.
//
// It holds the helpers for plugin authors too (helpers.go, mlhelpers.go,
// gang.go, convert.go, runtimecontainer.go): most are methods of Info,
// PodSet, Container and ValidateRequest, which Go keeps in the package of
// their type, and the rest work on the same types; every built-in and
// vendor plugin calls them. A package of their own would give a helper
// two homes (a method here, a function there) and change every plugin for
// no gain in what a plugin links, since none of them runs a plugin.
//
// What runs plugins is package framework/runtime: the plugin set a
// configuration compiles into, the Cycle that runs one TrainJob's phases
// through it under the plugins' failure policies, and the Prometheus
// metrics of the calls. Only hosts import it (the controller, the plugin
// hosts framework/external and framework/wasm); a plugin, and the SDK that
// serves it, link none of it, and plugins/imports_test.go checks that they
// do not. This package imports no package of the runtime's.
//
// The framework knows no plugin by name: cmd/ wires the built-ins into a
// Registry and the configuration file picks and orders them.
package framework
