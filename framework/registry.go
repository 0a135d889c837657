package framework

import (
	"fmt"
	"slices"
)

// Registry maps plugin names to their factories.
type Registry map[string]Factory

// Register adds a factory; a name registered twice is an error.
func (r Registry) Register(name string, f Factory) error {
	if _, ok := r[name]; ok {
		return fmt.Errorf("plugin %q is already registered", name)
	}
	r[name] = f
	return nil
}

// Has reports whether a name is registered.
func (r Registry) Has(name string) bool {
	_, ok := r[name]
	return ok
}

// Names returns the registered names, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
