package procnode

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkHostOut, when set, makes TestCheckHostNamesTheMissingCapability
// the child it starts without CAP_SYS_ADMIN: it writes CheckHost's error
// there.
const checkHostOut = "PROCNODE_TEST_CHECK_HOST_OUT"

// Root without CAP_SYS_ADMIN (root in a container started without
// privileges) is told that it cannot run process nodes, and why, before
// any starts; root with it can.
func TestCheckHostNamesTheMissingCapability(t *testing.T) {
	if out := os.Getenv(checkHostOut); out != "" {
		msg := "<nil>"
		if err := CheckHost(); err != nil {
			msg = err.Error()
		}
		if err := os.WriteFile(out, []byte(msg), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("process nodes need root") // and CheckHost says so
	}
	if err := CheckHost(); err != nil {
		t.Fatalf("as root with CAP_SYS_ADMIN: %v", err)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("the test drops CAP_SYS_ADMIN with setpriv: %v; apt-get install util-linux", err)
	}
	out := filepath.Join(t.TempDir(), "error")
	cmd := exec.Command(setpriv, "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin",
		os.Args[0], "-test.run=^TestCheckHostNamesTheMissingCapability$")
	cmd.Env = append(os.Environ(), checkHostOut+"="+out)
	if text, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the test without CAP_SYS_ADMIN: %v\n%s", err, text)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "process nodes need CAP_SYS_ADMIN, which this root lacks (in a container started without privileges?): each container's process gets mount and UTS namespaces of its own, and making them failed (unshare: operation not permitted); run as root on the host, or in a container started with --privileged"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("CheckHost without CAP_SYS_ADMIN (-want +got):\n%s", diff)
	}
}
