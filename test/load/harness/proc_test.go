package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainforge/trainforge/test/testenv"
)

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
