package external

import (
	"fmt"

	"github.com/go-logr/logr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework/pluginhost"
)

// OptionsFor are the host options of the external entry cfg.Plugins[i]
// of a defaulted configuration (configv1alpha1.SetDefaults, which Load
// applies): the options every kind shares (pluginhost.OptionsFor) and the
// process's or socket's own.
func OptionsFor(cfg *configv1alpha1.Configuration, i int, log logr.Logger) Options {
	e := cfg.Plugins[i]
	return Options{
		Options:   pluginhost.OptionsFor(cfg, i, log),
		Command:   e.External.Command,
		Socket:    e.External.Socket,
		SocketDir: cfg.PluginHost.SocketDir,
		Env:       entryEnv(cfg, e.External),
	}
}

// entryEnv is a plugin process's environment besides go-plugin's
// handshake variables: PATH (configv1alpha1.DefaultPluginPath),
// GOMAXPROCS (pluginHost.goMaxProcs), then the entry's external.env, which
// may override both. Nothing of the controller's own environment. A plugin
// on a socket gets none: its container sets its environment.
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
