//go:build wasip1

package framework

import "time"

// A WebAssembly guest counts nothing: its plugin's calls are counted by
// the host (metrics.go), and Prometheus' client would add about 0.5 MB to
// the module. The guest never runs a cycle either, so these are not
// called; they exist so that the package builds.

func observeCall(string, ExtensionPoint, time.Duration, error) {}

// pluginIgnored stands in for the counter of metrics.go.
var pluginIgnored noCounter

type noCounter struct{}

func (noCounter) WithLabelValues(...string) noCounter { return noCounter{} }
func (noCounter) Inc()                                {}
