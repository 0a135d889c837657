//go:build !linux

package wasm

import "time"

// threadCPU cannot measure a thread's CPU time here: every call that
// reaches its deadline counts as the module's own.
func threadCPU() (stop func() (time.Duration, bool)) {
	return func() (time.Duration, bool) { return 0, false }
}
