//go:build !linux

package external

import "os/exec"

// setProcAttr does nothing outside Linux: there is no parent-death signal,
// and a plugin outlives a host that is killed without running Close.
func setProcAttr(*exec.Cmd) {}
