package procnode

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// A container's process sees its bind mounts and hostname, and nothing of
// them leaks to the host; its exit code is its command's.
func TestProcessRunsInItsOwnMountNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mount namespaces need root") // process nodes refuse to start without it
	}
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, []byte("127.9.9.9\tpeer.sub\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vol := filepath.Join(dir, "vol")
	if err := os.MkdirAll(vol, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vol, "file"), []byte("in the volume"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "mnt", "data")
	spec := processSpec{
		argv: []string{"sh", "-c", `getent hosts peer.sub; cat "$1/file"; echo; cat /proc/sys/kernel/hostname; pwd; touch "$1/ro" 2>/dev/null || echo read-only; exit 42`, "sh", target},
		env:  baseEnv, dir: filepath.Join(dir, "work"), hostname: "pod-0",
		mounts: []mount{{source: hosts, target: "/etc/hosts"}, {source: vol, target: target, readOnly: true}},
		log:    filepath.Join(dir, "logs", "main", "0.log"),
	}
	mountBin := "/usr/bin/mount"
	p, err := startProcess(spec, mountBin, (*exec.Cmd).Start)
	if err != nil {
		t.Fatal(err)
	}
	<-p.done
	if p.exitCode != 42 {
		t.Errorf("exit code %d, want 42", p.exitCode)
	}
	out, _ := os.ReadFile(spec.log)
	want := "127.9.9.9       peer.sub\nin the volume\npod-0\n" + spec.dir + "\nread-only\n"
	if string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
	host, _ := os.Hostname()
	if host == "pod-0" {
		t.Error("the host's hostname changed")
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("the mount is visible on the host: %v", entries)
	}
}

// A container's command is Debian's even where /usr/local has one of the
// same name (another Python, which would not import python3-torch): the
// host's /usr/local/bin and /usr/local/sbin are hidden in the process's
// mount namespace by a directory with its own python3 and env.
func TestCommandsAreDebiansBeforeUsrLocals(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mount namespaces need root") // process nodes refuse to start without it
	}
	dir := t.TempDir()
	local := filepath.Join(dir, "local")
	if err := os.MkdirAll(local, 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"env"}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		names = append(names, "python3")
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(local, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec := processSpec{
		argv: append([]string{"sh", "-c", `for name; do command -v "$name"; done`, "sh"}, names...),
		env:  baseEnv, dir: dir, log: filepath.Join(dir, "log"),
		mounts: []mount{{source: local, target: "/usr/local/bin"}, {source: local, target: "/usr/local/sbin"}},
	}
	p, err := startProcess(spec, "/usr/bin/mount", (*exec.Cmd).Start)
	if err != nil {
		t.Fatal(err)
	}
	<-p.done
	out, _ := os.ReadFile(spec.log)
	var want []string
	for _, name := range names {
		want = append(want, "/usr/bin/"+name)
	}
	if diff := cmp.Diff(want, strings.Fields(string(out))); p.exitCode != 0 || diff != "" {
		t.Errorf("exit code %d; the commands a container runs (-want +got):\n%s", p.exitCode, diff)
	}
}

func TestStopEndsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	spec := processSpec{
		// The shell ignores SIGTERM: only SIGKILL after the grace ends it.
		argv: []string{"sh", "-c", `trap '' TERM; sleep 1000 & echo $! > "$0"; wait`, filepath.Join(dir, "child")},
		env:  baseEnv, dir: dir, log: filepath.Join(dir, "log"),
	}
	p, err := startProcess(spec, "/usr/bin/mount", (*exec.Cmd).Start)
	if err != nil {
		t.Fatal(err)
	}
	var child []byte
	for len(child) == 0 || !strings.HasSuffix(string(child), "\n") {
		child, _ = os.ReadFile(filepath.Join(dir, "child"))
		time.Sleep(10 * time.Millisecond)
	}
	p.stop(100 * time.Millisecond)
	if p.exitCode != 137 {
		t.Errorf("exit code %d, want 137 (SIGKILL)", p.exitCode)
	}
	var pid int
	for _, c := range strings.TrimSpace(string(child)) {
		pid = pid*10 + int(c-'0')
	}
	// The child may linger as a zombie of init for a moment: wait for it
	// to be reaped rather than asserting at once.
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		time.Sleep(10 * time.Millisecond)
	}
}

func zombie(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] == "Z"
}

func TestContainerMounts(t *testing.T) {
	c := &corev1.Container{Name: "main", VolumeMounts: []corev1.VolumeMount{
		{Name: "data", MountPath: "/data/deep"},
		{Name: "cfg", MountPath: "/data", SubPath: "sub", ReadOnly: true},
	}}
	mounts, err := containerMounts(c, map[string]string{"data": "/v/data", "cfg": "/v/cfg"}, "/p/hosts")
	if err != nil {
		t.Fatal(err)
	}
	want := []mount{{"/v/cfg/sub", "/data", true}, {"/p/hosts", "/etc/hosts", false}, {"/v/data", "/data/deep", false}}
	if len(mounts) != 3 || mounts[0] != want[0] || mounts[1] != want[1] || mounts[2] != want[2] {
		t.Errorf("mounts %v, want %v (parents first)", mounts, want)
	}
	for _, bad := range []corev1.VolumeMount{{Name: "nope", MountPath: "/x"}, {Name: "data", MountPath: "rel"}, {Name: "data", MountPath: "/x", SubPath: "../up"}} {
		if _, err := containerMounts(&corev1.Container{Name: "main", VolumeMounts: []corev1.VolumeMount{bad}}, map[string]string{"data": "/v"}, "/h"); err == nil {
			t.Errorf("volumeMount %+v accepted", bad)
		}
	}
}

// A container whose main process exits takes what it started with it, as
// a container's processes end with its main process: an agent that exits
// to be restarted in place leaves no worker behind holding its ports.
func TestTheMainProcessExitEndsWhatItLeftBehind(t *testing.T) {
	dir := t.TempDir()
	spec := processSpec{
		argv: []string{"sh", "-c", `sleep 1000 & echo $! > "$0"; exit 3`, filepath.Join(dir, "child")},
		env:  baseEnv, dir: dir, log: filepath.Join(dir, "log"),
	}
	p, err := startProcess(spec, "/usr/bin/mount", (*exec.Cmd).Start)
	if err != nil {
		t.Fatal(err)
	}
	<-p.done
	if p.exitCode != 3 {
		t.Errorf("exit code %d, want 3", p.exitCode)
	}
	child, _ := os.ReadFile(filepath.Join(dir, "child"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(child)))
	if err != nil {
		t.Fatalf("the child's pid %q: %v", child, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the child %d still runs 10 s after the main process exited", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
