package logtail

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFile(t *testing.T) {
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	long := strings.Repeat("x", tailBytes+100)
	for _, tc := range []struct {
		name, log string
		n         int
		want      string
	}{
		{"shorter than n", "panic: boom\n\ngoroutine 1 [running]:\n", 30, "panic: boom\n\ngoroutine 1 [running]:"},
		{"the last n", lines(1, 100), 3, "line 98\nline 99\nline 100"},
		{"no final newline", "a\nb\nc", 2, "b\nc"},
		{"empty", "", 30, "(empty)"},
		// Only the end of a long log is read; the line it begins in is
		// not shown cut.
		{"longer than what is read", long + "\n" + lines(1, 5), 30, lines(1, 5)[:len(lines(1, 5))-1]},
		{"one line longer than what is read", long, 30, "…" + long[100:]},
	} {
		path := filepath.Join(t.TempDir(), "controller.log")
		if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, File(path, tc.n)); diff != "" {
			t.Errorf("%s: File (-want +got):\n%s", tc.name, diff)
		}
	}
	missing := filepath.Join(t.TempDir(), "none.log")
	if got := File(missing, 30); !strings.HasPrefix(got, "(cannot read the log: ") || !strings.Contains(got, missing) {
		t.Errorf("File of a missing file = %q, want why it cannot be read", got)
	}
}

// The lines that say why a Go program crashed are found however far from
// the end they are, and only those.
func TestCrash(t *testing.T) {
	dump := strings.Repeat("goroutine 7 [select]:\nmain.f()\n\t/src/main.go:9 +0x1\n\n", 5000)
	for _, tc := range []struct {
		name, log, want string
	}{
		{"panic", "I0101 started\npanic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\n" + dump, "panic: runtime error: index out of range [3] with length 3"},
		{"fatal error", "fatal error: concurrent map writes\n" + dump, "fatal error: concurrent map writes"},
		{"SIGILL under valgrind", "==1== Command: ./controller\nvex amd64->IR: unhandled instruction bytes: 0xF 0x1 0xF9 0x48\n==1== valgrind: Unrecognised instruction at address 0x477949.\nSIGILL: illegal instruction\nPC=0x477949 m=0 sigcode=1\n" + dump,
			"vex amd64->IR: unhandled instruction bytes: 0xF 0x1 0xF9 0x48\nSIGILL: illegal instruction"},
		{"a log line that mentions a panic", `{"level":"error","msg":"Observed a panic: boom"}` + "\n" + strings.Repeat("x", 100<<10) + "panic: not at a line's start\n", ""},
		{"no crash", "I0101 started\nI0101 stopping\n", ""},
	} {
		path := filepath.Join(t.TempDir(), "controller.log")
		if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, Crash(path)); diff != "" {
			t.Errorf("%s: Crash (-want +got):\n%s", tc.name, diff)
		}
	}
}
