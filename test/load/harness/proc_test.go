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
// no outgoing connection: outside its ephemeral range, below or above it,
// whichever the machine's range leaves room for.
func TestFreeAddrIsOutsideTheEphemeralRange(t *testing.T) {
	for _, r := range [][2]int{
		{32768, 60999}, // Linux's default
		{1024, 60999},
		{40000, 65535},
	} {
		for range 20 {
			addr, err := freeAddrOutside(r[0], r[1])
			if err != nil {
				t.Fatal(err)
			}
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				t.Fatal(err)
			}
			if p, _ := strconv.Atoi(port); p < lowestPort || (p >= r[0] && p <= r[1]) {
				t.Errorf("freeAddrOutside(%d, %d) = %s: port below %d or in the ephemeral range, where an outgoing connection can take it", r[0], r[1], addr, lowestPort)
			}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("listening on freeAddrOutside(%d, %d)'s %s: %v", r[0], r[1], addr, err)
			}
			l.Close()
		}
	}
}

// This machine's range may leave no room (then the address is one the
// kernel gave); the address is one a process can listen on.
func TestFreeAddr(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on FreeAddr()'s %s: %v", addr, err)
	}
	l.Close()
}

// A process that exited says how, with the end of its log in the error
// (and, when it crashed, the lines that say why, which a goroutine dump
// pushes out of the end): the log is in a directory that a test deletes
// when it ends, so a path alone would leave nothing to read.
func TestAliveCarriesTheLogsEnd(t *testing.T) {
	tail := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "\n%d", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, script, want string
	}{
		{"exited", "seq 1 100; exit 3", "the controller exited: exit status 3; the end of its log, LOG:" + tail(100-testenv.LogTailLines+1, 100)},
		{"crashed", "echo 'panic: boom' >&2; echo 'goroutine 1 [running]:'; seq 1 100; exit 2", "the controller crashed (exit status 2):\npanic: boom\nthe end of its log, LOG:" + tail(100-testenv.LogTailLines+1, 100)},
	} {
		log := filepath.Join(t.TempDir(), "controller.log")
		p, err := StartProcess([]string{"sh", "-c", tc.script}, nil, log, "")
		if err != nil {
			t.Fatal(err)
		}
		<-p.Exited
		p.Stop()
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
		want := strings.Replace(tc.want, "LOG", log, 1)
		if diff := cmp.Diff(want, fmt.Sprint(p.Alive())); diff != "" {
			t.Errorf("%s: Alive() (-want +got):\n%s", tc.name, diff)
		}
	}
}
