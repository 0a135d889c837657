package wasm

import (
	"github.com/go-logr/logr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework/pluginhost"
)

// LogLinesPerSecond is how many log lines of one wasm plugin reach the
// controller's log per second, on average: every plugin's
// (pluginhost.LogLinesPerSecond).
const LogLinesPerSecond = pluginhost.LogLinesPerSecond

// OptionsFor are the host options of the wasm entry cfg.Plugins[i] of a
// defaulted configuration (configv1alpha1.SetDefaults, which Load
// applies): the options every kind shares (pluginhost.OptionsFor: the host
// facts, answer limits and backoff of external plugins), the module's own,
// and the entry's share of pluginHost.wasmMemoryBudget.
func OptionsFor(cfg *configv1alpha1.Configuration, i int, log logr.Logger) Options {
	w := cfg.Plugins[i].Wasm
	return Options{
		Options:          pluginhost.OptionsFor(cfg, i, log),
		Module:           w.Module,
		MemoryLimitBytes: w.MemoryLimit.Value(),
		MaxInstances:     int(*w.MaxInstances),
		Budget:           budgetFor(cfg, i),
		CacheDir:         cfg.PluginHost.WasmCacheDir,
	}
}
