package wasm

import (
	"encoding/json"

	"github.com/go-logr/logr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework/external"
)

// LogLinesPerSecond is how many log lines of one wasm plugin reach the
// controller's log per second, on average.
const LogLinesPerSecond = 100

// OptionsFor are the host options of the wasm entry cfg.Plugins[i] of a
// defaulted configuration (configv1alpha1.SetDefaults, which Load
// applies): the same host facts, answer limits and restart backoff as
// external plugins (external.HostFor, pluginHost.limits,
// pluginHost.restartBackoff), and the entry's share of
// pluginHost.wasmMemoryBudget.
func OptionsFor(cfg *configv1alpha1.Configuration, i int, log logr.Logger) Options {
	e := cfg.Plugins[i]
	w := e.Wasm
	var args json.RawMessage
	if e.Args != nil {
		args = e.Args.Raw
	}
	limits := cfg.PluginHost.Limits
	return Options{
		Name:              e.Name,
		Module:            w.Module,
		SHA256:            w.SHA256,
		Args:              w.Args,
		PluginArgs:        args,
		Host:              external.HostFor(cfg),
		StartTimeout:      w.StartTimeout.Duration,
		CallTimeout:       w.CallTimeout.Duration,
		MemoryLimitBytes:  w.MemoryLimit.Value(),
		MaxInstances:      int(*w.MaxInstances),
		Budget:            budgetFor(cfg, i),
		BackoffInitial:    cfg.PluginHost.RestartBackoff.Initial.Duration,
		BackoffMax:        cfg.PluginHost.RestartBackoff.Max.Duration,
		CacheDir:          cfg.PluginHost.WasmCacheDir,
		MaxMessageBytes:   int(*limits.MaxMessageBytes),
		LogLinesPerSecond: LogLinesPerSecond,
		Limits:            external.LimitsFor(cfg),
		Logger:            log.WithName("plugins"),
	}
}
