package controller

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// A TrainJob's objects are applied in dependency order, whatever the order
// of the plugins that built them: first what a workload needs (a PodGroup,
// Secrets, ConfigMaps, ServiceAccounts: anything that runs no pods), then
// the workloads (a JobSet, a Job, a Deployment, a Pod). A workload's
// controller creates pods the moment it exists; a pod that reaches the
// scheduler before its PodGroup is refused ("PodGroup not found"), one
// that reaches the kubelet before its Secret or ConfigMap does not start.
// A failed apply stops the reconcile, so a workload is never applied
// without what it needs. Inside each of the two groups the builders' order
// stays, so the order is deterministic.

// applyOrder returns objects in the order they are applied: the objects
// that run no pods first, then the workloads, each group in build order.
// objects itself is left as it is (the Created condition names the objects
// in build order).
func applyOrder(objects []frameworkruntime.BuiltObject) []frameworkruntime.BuiltObject {
	out := slices.Clone(objects)
	slices.SortStableFunc(out, func(a, b frameworkruntime.BuiltObject) int {
		wa, wb := isWorkload(a.Object), isWorkload(b.Object)
		switch {
		case wa == wb:
			return 0
		case wb:
			return -1
		default:
			return 1
		}
	})
	return out
}

// isWorkload reports whether obj runs pods: its spec holds a pod spec
// (a list of containers) at any depth, as a Pod's, a Job's or
// Deployment's template, or a JobSet's replicated jobs do. Kinds are not
// listed by name, so a plugin's own workload kind (an MPIJob, a Volcano
// Job) is one too.
func isWorkload(obj *unstructured.Unstructured) bool {
	spec, ok := obj.Object["spec"]
	return ok && holdsContainers(spec)
}

func holdsContainers(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if c, ok := v["containers"].([]any); ok && len(c) > 0 {
			return true
		}
		for _, f := range v {
			if holdsContainers(f) {
				return true
			}
		}
	case []any:
		for _, item := range v {
			if holdsContainers(item) {
				return true
			}
		}
	}
	return false
}
