package framework

import (
	"errors"
	"fmt"
	"strings"
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

func pluginError(plugin string, point ExtensionPoint, err error) error {
	if err == nil {
		return nil
	}
	var pe *PluginError
	if errors.As(err, &pe) {
		return err
	}
	return &PluginError{Plugin: plugin, Point: point, Err: err}
}

// UnownedPolicyKeyError says that a runtime sets a policy key that no
// enabled plugin owns.
type UnownedPolicyKeyError struct {
	// Policy is "mlPolicy" or "podGroupPolicy".
	Policy string
	Key    string
}

func (e *UnownedPolicyKeyError) Error() string {
	return fmt.Sprintf("%s.%s: no enabled plugin owns this key; enable the plugin that handles it in the configuration file", e.Policy, e.Key)
}

// NotStartedError says that a runtime sets a policy key that no running
// plugin owns while plugins with failure policy Fail have not started yet:
// one of them may own it, so the job waits for them.
type NotStartedError struct {
	// Unowned is the error about the key.
	Unowned error
	// Plugins are the plugins that have not started, each with why.
	Plugins []string
}

func (e *NotStartedError) Error() string {
	msg := e.Unowned.Error()
	var u *UnownedPolicyKeyError
	if errors.As(e.Unowned, &u) {
		msg = fmt.Sprintf("%s.%s: no running plugin owns this key", u.Policy, u.Key)
	}
	return fmt.Sprintf("%s; it may belong to a plugin that has not started: %s", msg, strings.Join(e.Plugins, "; "))
}

func (e *NotStartedError) Unwrap() error { return e.Unowned }
