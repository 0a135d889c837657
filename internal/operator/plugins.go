package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/go-logr/logr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/external"
	"github.com/trainforge/trainforge/framework/wasm"
)

// Plugins is the framework of the configuration in use and the external
// plugin processes it runs. Apply replaces it with the plugins of another
// configuration while the controller runs: an external plugin whose entry
// did not change keeps its process; a new or changed one is started,
// described and configured before the switch; the switch is atomic; a
// process no longer used is stopped once the calls it is serving end.
type Plugins struct {
	ctx      context.Context // the external plugins' lifetime
	registry framework.Registry
	log      logr.Logger

	mu        sync.Mutex // serialises Apply
	fw        *framework.Framework
	externals map[string]*runningExternal // by entry name
	wasms     map[string]*runningWasm     // by entry name
}

type runningExternal struct {
	opts   external.Options
	plugin *external.Plugin
}

type runningWasm struct {
	opts   wasm.Options
	plugin *wasm.Plugin
}

// NewPlugins starts the external plugins and creates and configures the
// plugins cfg enables, in order. External plugins live as long as ctx.
func NewPlugins(ctx context.Context, cfg *configv1alpha1.Configuration, registry framework.Registry, log logr.Logger) (*Plugins, error) {
	p := &Plugins{ctx: ctx, registry: registry, log: log, externals: map[string]*runningExternal{}, wasms: map[string]*runningWasm{}}
	fw, started, _, err := p.build(cfg)
	if err != nil {
		return nil, err
	}
	p.fw, p.externals, p.wasms = fw, started.externals, started.wasms
	return p, nil
}

// NewFramework is NewPlugins' framework, for a controller that never
// reloads its configuration.
func NewFramework(ctx context.Context, cfg *configv1alpha1.Configuration, registry framework.Registry, log logr.Logger) (*framework.Framework, error) {
	p, err := NewPlugins(ctx, cfg, registry, log)
	if err != nil {
		return nil, err
	}
	return p.Framework(), nil
}

// Framework is the framework every reconcile and admission request uses;
// Apply changes its plugins in place.
func (p *Plugins) Framework() *framework.Framework { return p.fw }

// Apply switches to the plugins of cfg. It is refused whole, leaving the
// running plugins as they were, when a plugin cannot be created, rejects
// its args, or (external) does not start within its startTimeout.
func (p *Plugins) Apply(cfg *configv1alpha1.Configuration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	next, started, fresh, err := p.build(cfg)
	if err != nil {
		return err
	}
	externals, wasms := started.externals, started.wasms
	// Only now is the new set whole: switch, then retire what it dropped.
	p.fw.Replace(next)
	for name, old := range p.externals {
		if externals[name] == nil || externals[name].plugin != old.plugin {
			go old.plugin.CloseWhenIdle(old.opts.CallTimeout + time.Second)
		}
	}
	// A changed module is a new Plugin: calls under way finish on the old.
	for name, old := range p.wasms {
		if wasms[name] == nil || wasms[name].plugin != old.plugin {
			go old.plugin.CloseWhenIdle(old.opts.CallTimeout + time.Second)
		}
	}
	p.externals, p.wasms = externals, wasms
	for _, name := range fresh {
		p.log.Info("plugin replaced", "plugin", name)
	}
	return nil
}

// running are the external and wasm plugins of a set, by entry name.
type running struct {
	externals map[string]*runningExternal
	wasms     map[string]*runningWasm
}

// build makes the framework of cfg, reusing the running external and wasm
// plugins whose options are unchanged. It returns those of the new set
// and the names of those it started. On an error it stops what it started.
func (p *Plugins) build(cfg *configv1alpha1.Configuration) (*framework.Framework, running, []string, error) {
	cfg = configv1alpha1.Defaulted(cfg)
	externals := map[string]*runningExternal{}
	wasms := map[string]*runningWasm{}
	var fresh []string
	fail := func(err error) (*framework.Framework, running, []string, error) {
		for _, name := range fresh {
			if e := externals[name]; e != nil {
				e.plugin.Close()
			}
			if w := wasms[name]; w != nil {
				w.plugin.Close()
			}
		}
		return nil, running{}, nil, err
	}
	specs := make([]framework.PluginSpec, 0, len(cfg.Plugins))
	for i, e := range cfg.Plugins {
		var args json.RawMessage
		if e.Args != nil {
			args = e.Args.Raw
		}
		spec := framework.PluginSpec{Name: e.Name, Args: args, FailurePolicy: framework.FailurePolicy(e.FailurePolicy)}
		if e.External != nil {
			opts := external.OptionsFor(cfg, i, p.log)
			run := p.externals[e.Name]
			if run == nil || !sameOptions(run.opts, opts) {
				ext, err := p.start(opts)
				if err != nil {
					return fail(fmt.Errorf("plugins[%d] (%s): %w", i, e.Name, err))
				}
				run = &runningExternal{opts: opts, plugin: ext}
				fresh = append(fresh, e.Name)
			}
			externals[e.Name] = run
			spec.Plugin = run.plugin
		}
		if e.Wasm != nil {
			opts := wasm.OptionsFor(cfg, i, p.log)
			run := p.wasms[e.Name]
			if run == nil || !sameWasmOptions(run.opts, opts) {
				w, err := wasm.Start(p.ctx, opts)
				if err != nil {
					return fail(fmt.Errorf("plugins[%d] (%s): %w", i, e.Name, err))
				}
				run = &runningWasm{opts: opts, plugin: w}
				fresh = append(fresh, e.Name)
			}
			wasms[e.Name] = run
			spec.Plugin = run.plugin
		}
		specs = append(specs, spec)
	}
	fw, err := framework.New(p.ctx, p.registry, specs, framework.WithHandle(external.HostFor(cfg)))
	if err != nil {
		return fail(err)
	}
	return fw, running{externals: externals, wasms: wasms}, fresh, nil
}

// sameWasmOptions reports whether two wasm entries run the same module
// (by its checksum) the same way.
func sameWasmOptions(a, b wasm.Options) bool {
	a.Logger, b.Logger = logr.Logger{}, logr.Logger{}
	return reflect.DeepEqual(a, b)
}

// start starts an external plugin. At the controller's start-up a plugin
// that does not start yet is retried in the background (the TrainJobs it
// owns wait); on a reload, where the running set can stay as it is, it
// must be running before the switch.
func (p *Plugins) start(opts external.Options) (*external.Plugin, error) {
	ext, err := external.Start(p.ctx, opts)
	if err != nil {
		return nil, err
	}
	if p.fw == nil {
		return ext, nil
	}
	if err := ext.Ready(); err != nil {
		why := ext.Down()
		ext.Close()
		if why == "" {
			why = err.Error()
		}
		return nil, errors.New("the new plugin did not start: " + why)
	}
	return ext, nil
}

// sameOptions reports whether two entries run the same process the same
// way. The binary itself is compared through its sha256: an entry without
// one keeps its process until its command, args or settings change.
func sameOptions(a, b external.Options) bool {
	a.Logger, b.Logger = logr.Logger{}, logr.Logger{}
	return reflect.DeepEqual(a, b)
}
