package runtime_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// restarting is a supervised plugin whose process restarts while the
// framework is in use: each start describes it with the version
// v<generation>.
type restarting struct {
	mu         sync.Mutex
	generation atomic.Uint64
	name       string
}

func (p *restarting) Describe() framework.Description {
	d, _, _ := p.Described()
	return d
}
func (p *restarting) Ready() error       { return nil }
func (p *restarting) Generation() uint64 { return p.generation.Load() }

func (p *restarting) Described() (framework.Description, framework.Implementation, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	gen := p.generation.Load()
	return framework.Description{Name: p.name, Version: fmt.Sprintf("v%d", gen), MLPolicyKeys: []string{framework.NoPolicyKey}}, framework.Implementation{}, gen
}

func (p *restarting) restart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.generation.Add(1)
}

// Current may be called while plugins restart and the configuration is
// reloaded: every set it returns is whole, and after the last restart and
// reload it is the latest.
func TestCurrentWhilePluginsRestartAndReplace(t *testing.T) {
	ext := &restarting{name: "Ext"}
	ext.generation.Store(1)
	fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Ext", Plugin: ext}})
	next := newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Ext", Plugin: ext}})

	const restarts = 50
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				set := fw.Current()
				d := set.Descriptions()
				if len(d) != 1 || d[0].Name != "Ext" || d[0].Version == "" || d[0].Version == "v0" {
					errs <- fmt.Errorf("set %d describes %+v", set.ID(), d)
					return
				}
				if _, err := set.NewCycle(testJob(), framework.PolicyKeys{}); err != nil {
					errs <- fmt.Errorf("NewCycle on set %d: %w", set.ID(), err)
					return
				}
			}
		}()
	}
	for i := range restarts {
		ext.restart()
		if i == restarts/2 {
			fw.Replace(next)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	want := fmt.Sprintf("v%d", restarts+1)
	if got := fw.Current().Descriptions()[0].Version; got != want {
		t.Errorf("version after the last restart = %s, want %s", got, want)
	}
	if fw.Current() != fw.Current() {
		t.Error("Current compiles a new set on each call once nothing changes")
	}
}
