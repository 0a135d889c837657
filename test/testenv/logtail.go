package testenv

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// LogTailLines is how many lines of a child process's log a failure
// message carries: enough for a Go panic's first frames or a valgrind
// diagnosis, short enough to read in a test's output.
const LogTailLines = 30

// logTailBytes bounds what LogTail reads from the end of a log: a
// controller's log after a storm is many megabytes.
const logTailBytes = 64 << 10

// LogTail returns the last n lines of the file at path, for the failure
// message of a process that exited: its log is often in a directory that
// is deleted when the test ends (t.TempDir), so a message that names only
// the path leaves nothing to read. When the file cannot be read, or is
// empty, it says so instead.
func LogTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	from := max(info.Size()-logTailBytes, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, from, info.Size()-from))
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	return Tail(string(data), n, from > 0)
}

// Tail returns the last n lines of text. cut says that text starts
// inside a line (the end of a longer text): that first line is dropped
// when later ones suffice, and marked with "…" when it is kept.
func Tail(text string, n int, cut bool) string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return "(empty)"
	}
	lines := strings.Split(text, "\n")
	if cut {
		if len(lines) > 1 {
			lines = lines[1:]
		} else {
			lines[0] = "…" + lines[0]
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
