package harness

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainforge/trainforge/test/testenv"
)

// The address is one a process can listen on, on a port the kernel gives
// no outgoing connection (below its ephemeral range).
func TestFreeAddrIsBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	for range 20 {
		addr, err := FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := strconv.Atoi(port); p >= low {
			t.Errorf("FreeAddr() = %s: port in the ephemeral range (from %d), where an outgoing connection can take it", addr, low)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listening on FreeAddr()'s %s: %v", addr, err)
		}
		l.Close()
	}
}

// A process that exited says how, with the end of its log in the error:
// the log is in a directory that a test deletes when it ends, so a path
// alone would leave nothing to read.
func TestAliveCarriesTheLogsEnd(t *testing.T) {
	log := filepath.Join(t.TempDir(), "controller.log")
	p, err := StartProcess([]string{"sh", "-c", "seq 1 100; echo 'panic: boom' >&2; exit 2"}, nil, log, "")
	if err != nil {
		t.Fatal(err)
	}
	<-p.Exited
	p.Stop()
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	fmt.Fprintf(&want, "the controller exited: exit status 2; the end of its log, %s:\n", log)
	for i := 100 - testenv.LogTailLines + 2; i <= 100; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	want.WriteString("panic: boom")
	if diff := cmp.Diff(want.String(), fmt.Sprint(p.Alive())); diff != "" {
		t.Errorf("Alive() (-want +got):\n%s", diff)
	}
}
