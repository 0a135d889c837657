package pluginhost

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
)

// Backoff is the wait before a plugin is taken back after a failure:
// Initial, doubling after each failure in a row up to Max
// (pluginHost.restartBackoff). An external plugin waits it between
// restarts; a wasm module whose calls keep ending at their deadline is
// stopped for it.
type Backoff struct{ Initial, Max time.Duration }

// LogLinesPerSecond is how many log lines of one plugin reach the
// controller's log per second, on average (twice that in a burst); the
// others are counted and the count logged.
const LogLinesPerSecond = 100

// Options are the options of a plugin that every kind shares, from its
// entry in the configuration file after the configuration's defaulting
// (OptionsFor), which is where every default is: Check refuses options
// that leave a timeout, the backoff, the message bound or the log rate
// unset.
type Options struct {
	// Name is the entry's name; the plugin must give the same name in
	// Describe. Empty takes the name the plugin gives at its first start,
	// for tools that check any plugin (trainforge-plugin-conformance).
	Name string
	// SHA256 is the hex SHA-256 of the binary or module, checked before it
	// runs; empty for no check where the kind allows it.
	SHA256 string
	// Args are the command-line arguments of the binary or module.
	Args []string
	// PluginArgs are sent to Configure at every start (every instance of a
	// module).
	PluginArgs json.RawMessage
	// Host are the host's facts (framework.Handle), sent with every
	// Configure.
	Host framework.Host
	// StartTimeout bounds one start: what the kind does to run the plugin,
	// then Describe, Configure and, when the plugin implements it, Watch.
	StartTimeout time.Duration
	// CallTimeout is the deadline of each extension-point call.
	CallTimeout time.Duration
	// Backoff is the wait after failures (pluginHost.restartBackoff).
	Backoff Backoff
	// MaxMessageBytes bounds the size of one answer of the plugin.
	MaxMessageBytes int
	// Limits bound what an answer may hold (objects, patch operations);
	// zero fields set no bound. MaxCopyBytes defaults to MaxMessageBytes.
	Limits remote.Limits
	// LogLinesPerSecond bounds the plugin's log lines forwarded to Logger,
	// on average (twice that in a burst).
	LogLinesPerSecond int
	// Logger receives the host's messages about the plugin and the
	// plugin's log, under plugin=<Name>.
	Logger logr.Logger
}

// Required is one more option a kind requires, for Check: its name in
// messages and whether it is set.
type Required struct {
	Name string
	OK   bool
}

// Check refuses options that leave a required option unset (the shared
// ones and the kind's own, more), naming the plugin and the option, and
// normalises the rest: a lower-case checksum, copies of the slices, and
// Limits.MaxCopyBytes defaulting to MaxMessageBytes. kind names the kind
// of plugin in messages ("external", "wasm").
func (o *Options) Check(kind string, more ...Required) error {
	required := append(more,
		Required{"StartTimeout", o.StartTimeout > 0},
		Required{"CallTimeout", o.CallTimeout > 0},
		Required{"Backoff.Initial", o.Backoff.Initial > 0},
		Required{"Backoff.Max", o.Backoff.Max >= o.Backoff.Initial},
		Required{"MaxMessageBytes", o.MaxMessageBytes > 0},
		Required{"LogLinesPerSecond", o.LogLinesPerSecond > 0},
	)
	for _, r := range required {
		if !r.OK {
			return fmt.Errorf("%s plugin %q: Options.%s is not set, or less than it may be; the options come from a defaulted configuration entry (OptionsFor)", kind, o.Name, r.Name)
		}
	}
	if o.Limits.MaxCopyBytes <= 0 {
		o.Limits.MaxCopyBytes = o.MaxMessageBytes
	}
	o.SHA256 = strings.ToLower(o.SHA256)
	o.Args = slices.Clone(o.Args)
	return nil
}

// OptionsFor are the shared options of the entry cfg.Plugins[i] of a
// defaulted configuration (configv1alpha1.SetDefaults, which Load
// applies), whatever its kind: the kind's own section gives the checksum,
// args and timeouts (sha256, args, startTimeout, callTimeout of external
// or wasm), pluginHost the backoff and the limits. Logger is log's
// "plugins".
func OptionsFor(cfg *configv1alpha1.Configuration, i int, log logr.Logger) Options {
	e := cfg.Plugins[i]
	o := Options{
		Name: e.Name,
		Host: HostFor(cfg),
		Backoff: Backoff{
			Initial: cfg.PluginHost.RestartBackoff.Initial.Duration,
			Max:     cfg.PluginHost.RestartBackoff.Max.Duration,
		},
		MaxMessageBytes:   int(*cfg.PluginHost.Limits.MaxMessageBytes),
		Limits:            LimitsFor(cfg),
		LogLinesPerSecond: LogLinesPerSecond,
		Logger:            log.WithName("plugins"),
	}
	if e.Args != nil {
		o.PluginArgs = e.Args.Raw
	}
	switch {
	case e.External != nil:
		x := e.External
		o.SHA256, o.Args, o.StartTimeout, o.CallTimeout = x.SHA256, x.Args, x.StartTimeout.Duration, x.CallTimeout.Duration
	case e.Wasm != nil:
		w := e.Wasm
		o.SHA256, o.Args, o.StartTimeout, o.CallTimeout = w.SHA256, w.Args, w.StartTimeout.Duration, w.CallTimeout.Duration
	}
	return o
}

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

// LimitsFor returns the bounds of plugin answers of a defaulted
// configuration (pluginHost.limits), for every host of plugins out of the
// framework's process.
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
