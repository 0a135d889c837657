package runtime

import (
	"errors"
	"fmt"
	"strings"
)

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
// plugin owns while plugins have not started yet, under either failure
// policy: one of them may own it, so the job waits for them (a plugin that
// took no call has no answer to skip under Ignore).
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
