package procnode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/trainforge/trainforge/internal/logtail"
)

// CheckHost says why this machine cannot run process nodes, or returns
// nil. Being root is not enough: root in a container started without
// privileges lacks CAP_SYS_ADMIN, or a security profile denies mount, and
// each container's process needs new mount and UTS namespaces and bind
// mounts in them. CheckHost starts one process the way a container's is
// started, so that such a machine is told at once, rather than by the
// first pod that fails.
func CheckHost() error {
	_, err := hostMount()
	return err
}

// hostMount checks the machine (CheckHost) and returns the path of
// mount(8), which the containers' processes bind-mount with.
func hostMount() (string, error) {
	if os.Geteuid() != 0 {
		return "", errors.New("process nodes need root: they bind-mount each container's volumes and /etc/hosts in a mount namespace of its own; run as root")
	}
	mountBin, err := exec.LookPath("mount")
	if err != nil {
		return "", fmt.Errorf("process nodes need mount(8): %w; apt-get install mount", err)
	}
	dir, err := os.MkdirTemp("", "trainforge-procnode-check-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	source := filepath.Join(dir, "source")
	if err := os.WriteFile(source, []byte("mounted\n"), 0o644); err != nil {
		return "", err
	}
	target := filepath.Join(dir, "target")
	spec := processSpec{
		argv: []string{"cat", target}, env: baseEnv, dir: dir, hostname: "procnode-check",
		mounts: []mount{{source: source, target: target, readOnly: true}},
		log:    filepath.Join(dir, "log"),
	}
	// The parent-death signal comes when the thread that started the
	// process ends: this one lives until the process has exited.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := startProcess(spec, mountBin, (*exec.Cmd).Start)
	if errors.Is(err, syscall.EPERM) {
		return "", fmt.Errorf("process nodes need CAP_SYS_ADMIN, which this root lacks (in a container started without privileges?): each container's process gets mount and UTS namespaces of its own, and making them failed (unshare: %v); run as root on the host, or in a container started with --privileged", syscall.EPERM)
	}
	if err != nil {
		return "", fmt.Errorf("process nodes: starting a process in mount and UTS namespaces of its own: %w", err)
	}
	<-p.done
	if p.exitCode != 0 {
		return "", fmt.Errorf("process nodes cannot bind-mount in a mount namespace of their own or set its hostname (a check exited with %d):\n%s\nthey need root with CAP_SYS_ADMIN and no security profile (AppArmor, SELinux, seccomp) that denies mount; run as root on the host, or in a container started with --privileged",
			p.exitCode, logtail.File(spec.log, logtail.Lines))
	}
	return mountBin, nil
}
