package framework

import "slices"

// PolicyKeys are the policy keys a runtime sets: they choose the plugins
// that take part in its TrainJobs.
type PolicyKeys struct {
	ML, PodGroup []string
}

// Equal reports whether two sets of keys are the same.
func (k PolicyKeys) Equal(o PolicyKeys) bool {
	return slices.Equal(k.ML, o.ML) && slices.Equal(k.PodGroup, o.PodGroup)
}

// TakesPart reports whether a plugin with this description takes part in
// the jobs of a runtime that sets keys: a plugin that owns no policy key
// takes part in every job, one that owns keys in the jobs whose runtime
// sets one of them ("*" owns every job, "" the jobs that set no key).
func (d Description) TakesPart(keys PolicyKeys) bool {
	if len(d.MLPolicyKeys) == 0 && len(d.PodGroupPolicyKeys) == 0 {
		return true
	}
	return (len(d.MLPolicyKeys) > 0 && ownsAny(d.MLPolicyKeys, keys.ML)) ||
		(len(d.PodGroupPolicyKeys) > 0 && ownsAny(d.PodGroupPolicyKeys, keys.PodGroup))
}

func ownsAny(owned, keys []string) bool {
	if slices.Contains(owned, AnyPolicyKey) {
		return true
	}
	if len(keys) == 0 {
		return slices.Contains(owned, NoPolicyKey)
	}
	for _, k := range keys {
		if slices.Contains(owned, k) {
			return true
		}
	}
	return false
}
