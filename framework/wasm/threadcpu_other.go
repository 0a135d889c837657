//go:build !linux

package wasm

import "time"

// threadCPU cannot measure a thread's CPU time here: every call that
// reaches its deadline counts as the module's own.
func threadCPU() (stop func() (time.Duration, bool)) {
	return func() (time.Duration, bool) { return 0, false }
}

// watchThreadCPU cannot read a thread's CPU time here: a call is
// interrupted at its deadline only.
func watchThreadCPU(time.Duration, func()) (stop func()) { return func() {} }
