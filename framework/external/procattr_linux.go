//go:build linux

package external

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill the plugin when the thread that started
// it exits. The spawner thread never exits while the host runs, so that
// happens only when the host dies, however it dies (SIGKILL included).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
