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
	"github.com/trainforge/trainforge/framework/pluginhost"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/framework/wasm"
)

// Plugins is the framework of the configuration in use and the plugins
// it hosts (external processes and wasm modules, each behind its host).
// Apply replaces it with the plugins of another configuration while the
// controller runs: a hosted plugin whose entry did not change keeps
// running (its process, its compiled module and instances); a new or
// changed one is started, described and configured before the switch; the
// switch is atomic; a plugin no longer used is closed once the calls it
// is serving end.
type Plugins struct {
	ctx      context.Context // the hosted plugins' lifetime
	registry framework.Registry
	log      logr.Logger

	mu     sync.Mutex // serialises Apply
	fw     *frameworkruntime.Framework
	hosted map[string]*hostedPlugin // by entry name
}

// hostedPlugin is a plugin that a host runs for an entry, whatever its
// kind, with the options it was started with.
type hostedPlugin struct {
	// opts are the kind's options (external.Options, wasm.Options)
	// without their logger: what sameOptions compares.
	opts        any
	callTimeout time.Duration
	plugin      hosted
}

// hosted is what the operator needs of a hosted plugin of any kind.
type hosted interface {
	frameworkruntime.Supervised
	CloseWhenIdle(timeout time.Duration)
	Close()
}

var (
	_ hosted = (*external.Plugin)(nil)
	_ hosted = (*wasm.Plugin)(nil)
)

// NewPlugins starts the hosted plugins and creates and configures the
// plugins cfg enables, in order. Hosted plugins live as long as ctx.
func NewPlugins(ctx context.Context, cfg *configv1alpha1.Configuration, registry framework.Registry, log logr.Logger) (*Plugins, error) {
	p := &Plugins{ctx: ctx, registry: registry, log: log, hosted: map[string]*hostedPlugin{}}
	fw, hosted, _, err := p.build(cfg)
	if err != nil {
		return nil, err
	}
	p.fw, p.hosted = fw, hosted
	return p, nil
}

// NewFramework is NewPlugins' framework, for a controller that never
// reloads its configuration.
func NewFramework(ctx context.Context, cfg *configv1alpha1.Configuration, registry framework.Registry, log logr.Logger) (*frameworkruntime.Framework, error) {
	p, err := NewPlugins(ctx, cfg, registry, log)
	if err != nil {
		return nil, err
	}
	return p.Framework(), nil
}

// Framework is the framework every reconcile and admission request uses;
// Apply changes its plugins in place.
func (p *Plugins) Framework() *frameworkruntime.Framework { return p.fw }

// Apply switches to the plugins of cfg. It is refused whole, leaving the
// running plugins as they were, when a plugin cannot be created, rejects
// its args, or (external) does not start within its startTimeout.
func (p *Plugins) Apply(cfg *configv1alpha1.Configuration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	next, hosted, fresh, err := p.build(cfg)
	if err != nil {
		return err
	}
	// Only now is the new set whole: switch, then retire what it dropped
	// once the work that took the old set has ended, and its last calls.
	retired := p.fw.Replace(next)
	for name, old := range p.hosted {
		if hosted[name] == nil || hosted[name].plugin != old.plugin {
			go p.closeReplaced(name, old, retired)
		}
	}
	p.hosted = hosted
	for _, name := range fresh {
		p.log.Info("plugin replaced", "plugin", name)
	}
	return nil
}

// maxUseOfReplacedSet bounds how long a plugin that a reload dropped is
// kept for the work that took the set before the reload (a reconcile, an
// admission request: each takes seconds). Work still under way then gets
// the plugin's "not running" error, and is retried as for any.
const maxUseOfReplacedSet = 2 * time.Minute

// closeReplaced closes a plugin that a reload dropped, once no work that
// may call it is under way (retired) and its calls under way have ended.
func (p *Plugins) closeReplaced(name string, old *hostedPlugin, retired <-chan struct{}) {
	t := time.NewTimer(maxUseOfReplacedSet)
	defer t.Stop()
	select {
	case <-retired:
	case <-t.C:
		p.log.Info("closing a replaced plugin while work that took it is still under way", "plugin", name, "after", maxUseOfReplacedSet)
	}
	old.plugin.CloseWhenIdle(old.callTimeout + time.Second)
}

// build makes the framework of cfg, reusing the running hosted plugins
// whose options are unchanged. It returns the hosted plugins of the new
// set and the names of those it started. On an error it closes what it
// started.
func (p *Plugins) build(cfg *configv1alpha1.Configuration) (*frameworkruntime.Framework, map[string]*hostedPlugin, []string, error) {
	cfg = configv1alpha1.Defaulted(cfg)
	hosted := map[string]*hostedPlugin{}
	var fresh []string
	fail := func(err error) (*frameworkruntime.Framework, map[string]*hostedPlugin, []string, error) {
		for _, name := range fresh {
			hosted[name].plugin.Close()
		}
		return nil, nil, nil, err
	}
	specs := make([]frameworkruntime.PluginSpec, 0, len(cfg.Plugins))
	for i, e := range cfg.Plugins {
		var args json.RawMessage
		if e.Args != nil {
			args = e.Args.Raw
		}
		spec := frameworkruntime.PluginSpec{Name: e.Name, Args: args, FailurePolicy: frameworkruntime.FailurePolicy(e.FailurePolicy)}
		if e.External != nil || e.Wasm != nil {
			next, start := p.hostedFor(cfg, i)
			run := p.hosted[e.Name]
			if run == nil || !sameOptions(run.opts, next.opts) {
				plugin, err := start()
				if err != nil {
					return fail(fmt.Errorf("plugins[%d] (%s): %w", i, e.Name, err))
				}
				next.plugin, run = plugin, next
				fresh = append(fresh, e.Name)
			}
			hosted[e.Name] = run
			spec.Plugin = run.plugin
		}
		specs = append(specs, spec)
	}
	fw, err := frameworkruntime.New(p.ctx, p.registry, specs, frameworkruntime.WithHandle(pluginhost.HostFor(cfg)))
	if err != nil {
		return fail(err)
	}
	return fw, hosted, fresh, nil
}

// hostedFor returns the hosted plugin of the entry cfg.Plugins[i] (its
// options, without the plugin) and how to start it.
func (p *Plugins) hostedFor(cfg *configv1alpha1.Configuration, i int) (*hostedPlugin, func() (hosted, error)) {
	if cfg.Plugins[i].Wasm != nil {
		opts := wasm.OptionsFor(cfg, i, p.log)
		key := opts
		key.Logger = logr.Logger{}
		return &hostedPlugin{opts: key, callTimeout: opts.CallTimeout}, func() (hosted, error) { return wasm.Start(p.ctx, opts) }
	}
	opts := external.OptionsFor(cfg, i, p.log)
	key := opts
	key.Logger = logr.Logger{}
	return &hostedPlugin{opts: key, callTimeout: opts.CallTimeout}, func() (hosted, error) { return p.startExternal(opts) }
}

// startExternal starts an external plugin. At the controller's start-up a
// plugin that does not start yet is retried in the background (the
// TrainJobs it owns wait); on a reload, where the running set can stay as
// it is, it must be running before the switch.
func (p *Plugins) startExternal(opts external.Options) (*external.Plugin, error) {
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

// sameOptions reports whether two entries' options, of any kind and
// without their loggers, run the same plugin the same way: the same kind,
// and the same binary or module (compared through its sha256: an entry
// without one keeps its process until its command, args or settings
// change), args and settings.
func sameOptions(a, b any) bool {
	return reflect.DeepEqual(a, b)
}
