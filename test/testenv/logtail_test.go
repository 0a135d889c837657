package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLogTail(t *testing.T) {
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	long := strings.Repeat("x", logTailBytes+100)
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
		if diff := cmp.Diff(tc.want, LogTail(path, tc.n)); diff != "" {
			t.Errorf("%s: LogTail (-want +got):\n%s", tc.name, diff)
		}
	}
	missing := filepath.Join(t.TempDir(), "none.log")
	if got := LogTail(missing, 30); !strings.HasPrefix(got, "(cannot read the log: ") || !strings.Contains(got, missing) {
		t.Errorf("LogTail of a missing file = %q, want why it cannot be read", got)
	}
}
