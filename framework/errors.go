package framework

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PluginError is an error returned by, or about, one plugin in one phase.
type PluginError struct {
	Plugin string
	Point  ExtensionPoint
	Err    error
}

func (e *PluginError) Error() string {
	return fmt.Sprintf("plugin %s, %s: %v", e.Plugin, e.Point, e.Err)
}

func (e *PluginError) Unwrap() error { return e.Err }

// InvalidJobError says that a TrainJob cannot run as it is, with the
// runtime it was created with (its snapshot): a retry would fail the same
// way, and only a change of the TrainJob can help. The controller does not
// retry it, and says so in the TrainJob's Created condition. A plugin out
// of process says it with the status INVALID_ARGUMENT.
type InvalidJobError struct{ Err error }

func (e *InvalidJobError) Error() string { return e.Err.Error() }
func (e *InvalidJobError) Unwrap() error { return e.Err }

// IsInvalidJob reports whether err says that the TrainJob cannot run as it
// is: an *InvalidJobError, or a plugin's *field.Error naming the field of
// the TrainJob or the runtime at fault.
func IsInvalidJob(err error) bool {
	var ij *InvalidJobError
	if errors.As(err, &ij) {
		return true
	}
	var pe *PluginError
	var fe *field.Error
	return errors.As(err, &pe) && errors.As(pe.Err, &fe)
}

// UnavailableError says that a plugin gave no answer of its own to a call:
// it took no call at the time (its host had no capacity free for it within
// a bound, or the plugin is down), or the call was the first of its input
// to reach its deadline for want of the plugin's own time (an external
// plugin's one process serving other TrainJobs' calls ahead of it, a wasm
// call short of CPU). It is not the plugin's answer to that call, so no
// failure policy applies to it: in a reconcile it fails the phase under
// Ignore too, and the TrainJob is retried. Were it skipped, whether a
// TrainJob got a plugin's changes would depend on what other TrainJobs'
// calls were doing at the time.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// IsUnavailable reports whether err says that a plugin gave no answer of
// its own: an *UnavailableError.
func IsUnavailable(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u)
}
