//go:build linux

package external

import (
	"errors"

	"golang.org/x/sys/unix"
)

// processExited reports whether the child pid has exited, without reaping
// it (WNOWAIT), so that go-plugin's wait still collects its status.
func processExited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err != nil {
		return errors.Is(err, unix.ECHILD) // already reaped
	}
	return info.Signo != 0
}
