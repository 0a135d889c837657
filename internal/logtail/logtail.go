// Package logtail gives the end of a child process's log, and the lines
// that say why it crashed, for an error that says the process exited: the
// log is often in a directory deleted when the test ends (t.TempDir) or
// one a user has to find, so a message that names only its path leaves
// nothing to read. The test suites (through test/testenv), the load
// harness and the simulated cluster use it.
package logtail

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Lines is how many lines of a child process's log a failure
// message carries: enough for a Go panic's first frames or valgrind's
// diagnosis, few enough to read in a test's output.
const Lines = 30

// tailBytes bounds what File reads from the end of a log: a
// controller's log after a storm is many megabytes.
const tailBytes = 64 << 10

// File returns the last n lines of the file at path. When the file cannot
// be read it says why instead.
func File(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	from := max(info.Size()-tailBytes, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, from, info.Size()-from))
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	text := string(data)
	if from > 0 {
		// The read began inside a line: drop that part, unless it is all
		// there is (the end of one very long line).
		if _, rest, ok := strings.Cut(text, "\n"); ok && strings.TrimSpace(rest) != "" {
			text = rest
		} else {
			text = "…" + text
		}
	}
	return Text(text, n)
}

// Text returns the last n lines of text (a process's output held in
// memory), or "(empty)".
func Text(text string, n int) string {
	text = strings.TrimRight(text, "\n")
	if strings.TrimSpace(text) == "" {
		return "(empty)"
	}
	lines := strings.Split(text, "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// crashLine matches a line that says why a Go program died: the first
// line of a panic, of a fatal error of the runtime or of a fatal signal,
// and valgrind's report of an instruction it cannot decode (before the
// SIGILL it raises).
var crashLine = regexp.MustCompile(`^(panic: |fatal error: |SIG[A-Z]+: |vex [^ ]+: unhandled instruction)`)

// crashLines is how many such lines Crash returns at most.
const crashLines = 5

// Crash returns the lines of the log at path that say why a Go program
// crashed (crashLine), or "" when there are none: the dump of goroutines
// and registers that follows them pushes them out of File's lines. The
// whole log is read.
func Crash(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var found []string
	r := bufio.NewReaderSize(f, 64<<10)
	for len(found) < crashLines {
		line, err := r.ReadSlice('\n')
		// A line longer than the buffer (an object in a log line) is no
		// crash's: skip the rest of it.
		long := err == bufio.ErrBufferFull
		for err == bufio.ErrBufferFull {
			_, err = r.ReadSlice('\n')
		}
		if !long && crashLine.Match(line) {
			found = append(found, strings.TrimRight(string(line), "\n"))
		}
		if err != nil {
			break
		}
	}
	return strings.Join(found, "\n")
}
