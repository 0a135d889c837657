package flux

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The scripts run with bash, in a directory that stands for the pod's
// volumes (their absolute paths rewritten into it), with stand-ins for
// flux, hostname and sleep that log what they are asked.

// sandbox is a pod's filesystem in a temporary directory.
type sandbox struct {
	dir, bin, log string
	paths         *strings.Replacer
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the scripts with")
	}
	dir := t.TempDir()
	s := &sandbox{dir: dir, bin: filepath.Join(dir, "bin"), log: filepath.Join(dir, "calls")}
	s.paths = strings.NewReplacer(
		"/mnt/flux", dir+"/mnt/flux",
		"/opt/software", dir+"/opt/software",
		"/opt/views", dir+"/opt/views",
		"cp /curve/", "cp "+dir+"/curve/",
	)
	for _, d := range []string{"bin", "mnt/flux", "opt/software", "curve"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// flux logs its arguments; flux start exits with the next status of
	// $FLUX_STATUSES (one per line), 0 when there is none left.
	s.write(t, "bin/flux", `#!`+bash+`
echo "flux $*" >> "$CALLS"
if [ "$1" = start ] || [ "$1" = broker ]; then
  touch "$CALLS.start"
  n=$(wc -l < "$CALLS.start")
  echo x >> "$CALLS.start"
  status=$(sed -n "$((n + 1))p" "$FLUX_STATUSES")
  exit "${status:-0}"
fi
[ "$1" = R ] && echo '{"R": "encoded"}'
exit 0
`, 0o755)
	s.write(t, "bin/hostname", "#!"+bash+"\necho \"$POD_HOSTNAME\"\n", 0o755)
	s.write(t, "bin/sleep", "#!"+bash+"\necho \"sleep $*\" >> \"$CALLS\"\n", 0o755)
	return s
}

func (s *sandbox) write(t *testing.T, name, content string, mode os.FileMode) {
	t.Helper()
	path := filepath.Join(s.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func (s *sandbox) read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// run runs a script of the ConfigMap as the pod hostname, with flux start
// exiting with statuses in turn, and returns its exit status and the
// commands it called.
func (s *sandbox) run(t *testing.T, script, hostname string, statuses []string, args ...string) (int, []string) {
	t.Helper()
	s.write(t, "script.sh", s.paths.Replace(script), 0o644)
	s.write(t, "statuses", strings.Join(statuses, "\n")+"\n", 0o644)
	os.Remove(s.log)
	os.Remove(s.log + ".start")
	cmd := exec.Command("bash", append([]string{filepath.Join(s.dir, "script.sh")}, args...)...)
	cmd.Env = []string{"PATH=" + s.bin + ":/usr/bin:/bin", "CALLS=" + s.log, "FLUX_STATUSES=" + filepath.Join(s.dir, "statuses"), "POD_HOSTNAME=" + hostname}
	out, err := cmd.CombinedOutput()
	status := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		status = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running the script: %v\n%s", err, out)
	}
	t.Logf("output:\n%s", out)
	calls, _ := os.ReadFile(s.log)
	return status, strings.Split(strings.TrimSpace(string(calls)), "\n")
}

// TestInitScript: the installer writes the host list and the broker
// configuration, copies the view and the software into the shared volume,
// and writes the configuration once when it runs again.
func TestInitScript(t *testing.T) {
	spec, job := load(t, kubeflow)
	b := run(t, spec, job)
	s := newSandbox(t)
	s.write(t, "opt/views/._view/abc123/bin/flux", "flux", 0o755)
	s.write(t, "opt/software/linux-x86_64/flux-core/lib.so", "lib", 0o644)

	for range 2 {
		if status, _ := s.run(t, b.cm.Data["init.sh"], "lammps-flux-node-0-1", nil); status != 0 {
			t.Fatalf("init.sh exited with %d", status)
		}
	}
	if got := s.read(t, "mnt/flux/config/etc/flux/system/hostlist"); got != "lammps-flux-node-0-[0-1]\n" {
		t.Errorf("hostlist = %q", got)
	}
	broker := s.read(t, "mnt/flux/config/etc/flux/config/broker.toml")
	if n := strings.Count(broker, "[bootstrap]"); n != 1 {
		t.Errorf("broker.toml has %d [bootstrap] tables after two runs, want 1:\n%s", n, broker)
	}
	if !strings.Contains(broker, "hosts = [{host = 'lammps-flux-node-0-[0-1]'}]") {
		t.Errorf("broker.toml lists no hosts:\n%s", broker)
	}
	for _, f := range []string{"mnt/flux/view/bin/flux", "mnt/flux/software/linux-x86_64/flux-core/lib.so", "mnt/flux/flux-operator-done.txt"} {
		if _, err := os.Stat(filepath.Join(s.dir, f)); err != nil {
			t.Errorf("init.sh left no %s: %v", f, err)
		}
	}
}

// TestEntrypoint: the lead runs the command under flux run and exits with
// its status; a follower starts its broker until it exits cleanly; without
// a command, the lead runs a broker for users.
func TestEntrypoint(t *testing.T) {
	spec, job := load(t, kubeflow)
	b := run(t, spec, job)
	options := "-Scron.directory=@/config/etc/flux/system/cron.d -Stbon.fanout=256 -Srundir=@/config/run/flux -Sstatedir=@/config/var/lib/flux -Slocal-uri=local://@/config/run/flux/local -Slog-stderr-level=0 -Slog-stderr-mode=local"
	cases := []struct {
		name       string
		hostname   string
		statuses   []string
		args       []string
		wantStatus int
		wantCalls  []string
	}{
		{name: "the lead runs the command and succeeds", hostname: "lammps-flux-node-0-0",
			args: []string{"lmp -v x 4 -in in.reaxc.hns"}, wantStatus: 0,
			wantCalls: []string{
				"flux R encode --hosts=lammps-flux-node-0-[0-1] --cores=0-3",
				"flux start -o --config @/config/etc/flux/config " + options + " flux run -N 2 -n 8 lmp -v x 4 -in in.reaxc.hns",
			}},
		{name: "the lead's command fails: so does the container", hostname: "lammps-flux-node-0-0",
			statuses: []string{"3"}, args: []string{"lmp"}, wantStatus: 3,
			wantCalls: []string{
				"flux R encode --hosts=lammps-flux-node-0-[0-1] --cores=0-3",
				"flux start -o --config @/config/etc/flux/config " + options + " flux run -N 2 -n 8 lmp",
			}},
		{name: "no command: a broker for users", hostname: "lammps-flux-node-0-0",
			args: []string{""}, wantStatus: 0,
			wantCalls: []string{
				"flux R encode --hosts=lammps-flux-node-0-[0-1] --cores=0-3",
				"flux broker --config-path @/config/etc/flux/config " + options,
			}},
		{name: "a follower tries again until the lead is up", hostname: "lammps-flux-node-0-1",
			statuses: []string{"1", "1", "0"}, args: []string{"lmp"}, wantStatus: 0,
			wantCalls: []string{
				"flux R encode --hosts=lammps-flux-node-0-[0-1] --cores=0-3",
				"flux start -o --config @/config/etc/flux/config " + options,
				"sleep 15",
				"flux start -o --config @/config/etc/flux/config " + options,
				"sleep 15",
				"flux start -o --config @/config/etc/flux/config " + options,
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t)
			// What the installer left in the shared volume.
			s.write(t, "mnt/flux/config/etc/flux/system/hostlist", "lammps-flux-node-0-[0-1]\n", 0o644)
			s.write(t, "mnt/flux/software/bin/tool", "tool", 0o755)
			s.write(t, "mnt/flux/view/lib/python3.11/site-packages/flux/__init__.py", "", 0o644)
			s.write(t, "mnt/flux/view/bin/python3.11", "python", 0o755)
			s.write(t, "mnt/flux/view/bin/python3", "link", 0o755)
			s.write(t, "curve/curve.cert", "cert", 0o400)
			if err := os.MkdirAll(filepath.Join(s.dir, "mnt/flux/config/etc/curve"), 0o755); err != nil {
				t.Fatal(err)
			}

			status, calls := s.run(t, b.cm.Data["entrypoint.sh"], tc.hostname, tc.statuses, tc.args...)
			if status != tc.wantStatus {
				t.Errorf("exit status %d, want %d", status, tc.wantStatus)
			}
			for i := range tc.wantCalls {
				tc.wantCalls[i] = strings.ReplaceAll(tc.wantCalls[i], "@", s.dir+"/mnt/flux")
			}
			if diff := cmp.Diff(tc.wantCalls, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if got := s.read(t, "mnt/flux/config/etc/curve/curve.cert"); got != "cert" {
				t.Errorf("curve.cert copied as %q", got)
			}
			if info, err := os.Stat(filepath.Join(s.dir, "mnt/flux/config/etc/curve/curve.cert")); err != nil || info.Mode().Perm() != 0o600 {
				t.Errorf("curve.cert mode %v (%v), want 0600: the broker refuses a certificate others can read", info.Mode().Perm(), err)
			}
			if got := s.read(t, "mnt/flux/config/etc/flux/system/R"); got != "{\"R\": \"encoded\"}\n" {
				t.Errorf("R = %q", got)
			}
			if _, err := os.Stat(filepath.Join(s.dir, "opt/software/bin/tool")); err != nil {
				t.Errorf("the view's software is not in /opt/software: %v", err)
			}
			if _, err := os.Stat(filepath.Join(s.dir, "mnt/flux/view/bin/python3")); err == nil {
				t.Error("the view's python3 link, broken in the training image, is still on PATH")
			}
			view := s.read(t, "mnt/flux/flux-view.sh")
			if !strings.Contains(view, "export fluxsocket=local://"+s.dir+"/mnt/flux/config/run/flux/local\n") {
				t.Errorf("flux-view.sh sets no fluxsocket:\n%s", view)
			}
			if _, err := os.Stat(filepath.Join(s.dir, "mnt/flux/flux-operator-complete.txt")); err != nil {
				t.Errorf("no completion marker: %v", err)
			}
		})
	}
}
