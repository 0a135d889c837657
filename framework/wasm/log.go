package wasm

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/trainforge/trainforge/framework/pluginhost"
)

// logSink is the log of one instance: its log function's and stderr's
// bytes, cut into lines (pluginhost.Lines) and forwarded through the
// plugin's rate-limited log (pluginhost.Log), as an external plugin's
// stderr is. It keeps what explains an end (Go's runtime writes
// "panic: ..." or "fatal error: ..." before it exits), for the error of
// the call it ended, and does not forward the goroutine dump that
// follows.
type logSink struct {
	*pluginhost.Lines
	to *pluginhost.Log

	mu      sync.Mutex
	fatal   string // what the module said of its panic or fatal error
	dying   bool   // the module reported a panic or fatal error
	dropped int    // the lines of its goroutine dump, not forwarded
}

func newLogSink(to *pluginhost.Log) *logSink {
	s := &logSink{to: to}
	s.Lines = pluginhost.NewLines(s.line)
	return s
}

// line is one line of the instance's log.
func (s *logSink) line(line []byte, truncated int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Go's runtime ends a module with the panic's value or the fatal
	// error, then every goroutine's stack. The controller's log gets the
	// first, said as the host's (a "panic:" line in the controller's log
	// would read as the controller's own), and not the dump.
	switch {
	case bytes.HasPrefix(line, []byte("panic: ")):
		s.fatal = "it panicked: " + text(line[len("panic: "):])
	case bytes.HasPrefix(line, []byte("fatal error: ")):
		s.fatal = "it stopped with a fatal error: " + text(line[len("fatal error: "):])
	case s.dying:
		s.dropped++
		return
	default:
		s.to.Line(s.to.Logger(), line, truncated)
		return
	}
	s.dying = true
	s.to.Logger().Info("the wasm module is ending; its goroutine dump is not forwarded", "why", s.fatal)
}

// text is the start of a line, for a message.
func text(b []byte) string {
	return strings.ToValidUTF8(string(b[:min(len(b), 300)]), "\uFFFD")
}

// why returns what the instance last said about its end, or "".
func (s *logSink) why() string {
	s.Flush()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fatal != "" {
		return s.fatal
	}
	return s.Last()
}

func (s *logSink) String() string { return fmt.Sprintf("logSink(%q)", s.Last()) }
