package runtime

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trainforge/trainforge/framework"
)

// Metrics per plugin and extension point. They cover in-process and
// external plugins alike; the controller registers them (Collectors).
var (
	pluginCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trainforge_plugin_calls_total",
		Help: "Calls of a plugin's extension point.",
	}, []string{"plugin", "point"})
	pluginErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trainforge_plugin_errors_total",
		Help: "Calls of a plugin's extension point that failed, including refused answers.",
	}, []string{"plugin", "point"})
	pluginCallDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "trainforge_plugin_call_duration_seconds",
		Help: "Duration of a call of a plugin's extension point.",
		// From 50µs (an in-process call) to about 13s (past any call timeout).
		Buckets: prometheus.ExponentialBuckets(50e-6, 4, 10),
	}, []string{"plugin", "point"})
	pluginIgnored = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trainforge_plugin_ignored_total",
		Help: "Failed calls skipped because the plugin's failurePolicy is Ignore.",
	}, []string{"plugin", "point"})
	// PluginRestarts counts the restarts of external plugin processes, and
	// the wasm plugin instances a call ended (the next call starts a new
	// one); the external-plugin and wasm hosts increment it.
	PluginRestarts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trainforge_plugin_restarts_total",
		Help: "Restarts of an external plugin's process after it exited or failed to start, and wasm plugin instances ended by a call (a trap, a panic, the deadline, memory).",
	}, []string{"plugin"})
	// PluginInstancesReplaced counts the wasm plugin instances that a call
	// left holding more than half the room of their memory limit, which
	// the wasm host replaced by a copy of the plugin's saved first
	// instance: steady growth says the memoryLimit is small for what the
	// module's calls allocate.
	PluginInstancesReplaced = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trainforge_plugin_instances_replaced_total",
		Help: "Instances of a wasm plugin that a call left holding more than half the room of their memoryLimit, replaced by a copy of the plugin's first instance, saved once configured.",
	}, []string{"plugin"})
	// PluginDown is 1 while a plugin's host has stopped it for a backoff
	// (a wasm plugin whose calls kept ending at their deadline), else 0;
	// the wasm host sets it.
	PluginDown = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "trainforge_plugin_down",
		Help: "1 while the host has stopped the plugin for a backoff and its calls fail at once (a wasm plugin whose calls kept ending at their deadline), else 0.",
	}, []string{"plugin"})
)

// Collectors returns the plugin metrics, for registration.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{pluginCalls, pluginErrors, pluginCallDuration, pluginIgnored, PluginRestarts, PluginInstancesReplaced, PluginDown}
}

func observeCall(plugin string, point framework.ExtensionPoint, d time.Duration, err error) {
	pluginCalls.WithLabelValues(plugin, string(point)).Inc()
	pluginCallDuration.WithLabelValues(plugin, string(point)).Observe(d.Seconds())
	if err != nil {
		pluginErrors.WithLabelValues(plugin, string(point)).Inc()
	}
}
