package external

import (
	"encoding/json"
	"fmt"

	"github.com/go-logr/logr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
)

// HostFor is the Handle of a defaulted configuration: the facts of the host
// that plugins get, in process from their Factory and out of process with
// every Configure. It is the one place that turns the configuration into
// them.
func HostFor(cfg *configv1alpha1.Configuration) framework.Host {
	s := &cfg.StatusServer
	return framework.Host{Status: framework.StatusEndpoint{
		URL:                    s.URL(),
		CAConfigMapName:        s.CAConfigMapName,
		TokenExpirationSeconds: *s.TokenExpirationSeconds,
	}}
}

// OptionsFor are the host options of the external entry cfg.Plugins[i]
// of a defaulted configuration (configv1alpha1.SetDefaults, which Load
// applies): every option the host needs comes from the configuration and
// its defaulting, the one place of the defaults.
func OptionsFor(cfg *configv1alpha1.Configuration, i int, log logr.Logger) Options {
	e := cfg.Plugins[i]
	var args json.RawMessage
	if e.Args != nil {
		args = e.Args.Raw
	}
	limits := cfg.PluginHost.Limits
	return Options{
		Name:         e.Name,
		Command:      e.External.Command,
		Socket:       e.External.Socket,
		Args:         e.External.Args,
		SHA256:       e.External.SHA256,
		PluginArgs:   args,
		Host:         HostFor(cfg),
		StartTimeout: e.External.StartTimeout.Duration,
		CallTimeout:  e.External.CallTimeout.Duration,
		SocketDir:    cfg.PluginHost.SocketDir,
		Backoff: Backoff{
			Initial: cfg.PluginHost.RestartBackoff.Initial.Duration,
			Max:     cfg.PluginHost.RestartBackoff.Max.Duration,
		},
		Env:             entryEnv(cfg, e.External),
		MaxMessageBytes: int(*limits.MaxMessageBytes),
		Limits:          LimitsFor(cfg),
		Logger:          log.WithName("plugins"),
	}
}

// entryEnv is a plugin process's environment besides go-plugin's
// handshake variables: PATH (configv1alpha1.DefaultPluginPath),
// GOMAXPROCS (pluginHost.goMaxProcs), then the entry's external.env, which
// may override both. Nothing of the controller's own environment. A plugin
// on a socket gets none: its container sets its environment.
// LimitsFor returns the bounds of plugin answers of a defaulted
// configuration (pluginHost.limits), for every host of plugins out of the
// framework's process: external and wasm alike.
func LimitsFor(cfg *configv1alpha1.Configuration) remote.Limits {
	limits := cfg.PluginHost.Limits
	return remote.Limits{
		MaxMessageBytes:    int(*limits.MaxMessageBytes),
		MaxDepth:           int(*limits.MaxDepth),
		MaxObjects:         int(*limits.MaxObjects),
		MaxObjectBytes:     int(*limits.MaxObjectBytes),
		MaxPatchOperations: int(*limits.MaxPatchOperations),
	}
}

func entryEnv(cfg *configv1alpha1.Configuration, e *configv1alpha1.ExternalPlugin) []string {
	if e.Socket != "" {
		return nil
	}
	env := []string{"PATH=" + configv1alpha1.DefaultPluginPath}
	if n := *cfg.PluginHost.GoMaxProcs; n > 0 {
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", n))
	}
	for _, v := range e.Env {
		env = append(env, v.Name+"="+v.Value)
	}
	return env
}
