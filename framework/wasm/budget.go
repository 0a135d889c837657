package wasm

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
)

// Budget is one wasm plugin's share of the memory every wasm plugin's
// instances may take together (pluginHost.wasmMemoryBudget): the module's
// memory is the controller's, and instances × memoryLimit of every module
// must fit in the controller's own memory limit.
type Budget struct {
	// TotalBytes is the whole budget, shared by every wasm plugin; zero
	// is no budget.
	TotalBytes int64
	// Instances are the plugin's instances within it, at most its
	// MaxInstances; zero refuses the plugin at Start.
	Instances int
	// Held says, when Instances is zero, what the plugins before it hold
	// ("Widget: 2 × 128Mi, ..."), for Start's error.
	Held string
}

// instances returns the size of the pool of the plugin name, which asks
// for maxInstances of memoryBytes each, within the budget, or an error
// that names the figures when not one instance fits.
func (b Budget) instances(name string, maxInstances int, memoryBytes int64) (int, error) {
	if b.TotalBytes == 0 {
		return maxInstances, nil
	}
	if b.Instances > 0 {
		return min(maxInstances, b.Instances), nil
	}
	held := "the wasm plugins before it in the configuration hold it all (" + b.Held + ")"
	if b.Held == "" {
		held = "it is smaller than one instance"
	}
	return 0, fmt.Errorf("wasm plugin %q: pluginHost.wasmMemoryBudget %s has no room for one instance of its memoryLimit %s: %s; "+
		"lower the memoryLimit of the wasm plugins, or raise pluginHost.wasmMemoryBudget (and the controller's memory limit with it)",
		name, quantity(b.TotalBytes), quantity(memoryBytes), held)
}

// budgetFor shares cfg's wasm memory budget between its wasm entries and
// returns entry i's share. In configuration order each entry gets one
// instance while the budget holds its memoryLimit, then each in turn one
// more, up to its maxInstances, while the budget holds it: a pool of one
// instance each first, so that an entry is refused only when the budget
// cannot hold one instance of every entry before it and of its own.
func budgetFor(cfg *configv1alpha1.Configuration, i int) Budget {
	b := Budget{TotalBytes: cfg.PluginHost.WasmMemoryBudget.Value()}
	var entries []int
	for j, e := range cfg.Plugins {
		if e.Wasm != nil {
			entries = append(entries, j)
		}
	}
	n := make(map[int]int, len(entries))
	left := b.TotalBytes
	memory := func(j int) int64 { return int64(memoryPages(cfg.Plugins[j].Wasm.MemoryLimit.Value())) * PageBytes }
	for _, j := range entries {
		if memory(j) <= left {
			n[j], left = 1, left-memory(j)
		}
	}
	for more := true; more; {
		more = false
		for _, j := range entries {
			if n[j] > 0 && n[j] < int(*cfg.Plugins[j].Wasm.MaxInstances) && memory(j) <= left {
				n[j]++
				left -= memory(j)
				more = true
			}
		}
	}
	b.Instances = n[i]
	if b.Instances == 0 {
		var held []string
		for _, j := range entries {
			if n[j] > 0 {
				held = append(held, fmt.Sprintf("%s: %d × %s", cfg.Plugins[j].Name, n[j], quantity(memory(j))))
			}
		}
		b.Held = strings.Join(held, ", ")
	}
	return b
}

// memoryPages is the memory limit of an instance in pages: bytes rounded
// down, at most the 4 GiB of a 32-bit memory.
func memoryPages(bytes int64) uint32 { return uint32(min(bytes/PageBytes, 65536)) }

// quantity writes bytes as the configuration does (128Mi).
func quantity(bytes int64) string {
	return resource.NewQuantity(bytes, resource.BinarySI).String()
}
