package wasm

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"

	"github.com/trainforge/trainforge/framework/external"
)

// pluginLog forwards the log lines of every instance of one plugin to the
// controller's logger, at most LogLinesPerSecond on average: a module that
// logs in a loop costs the controller a counter, not its log.
type pluginLog struct {
	log     logr.Logger
	out     io.Writer // external.NewLogWriter: the SDK's JSON lines keep their level and keys
	limiter *rate.Limiter

	mu      sync.Mutex
	dropped int
}

func newPluginLog(log logr.Logger, perSecond int) *pluginLog {
	return &pluginLog{
		log:     log,
		out:     external.NewLogWriter(log),
		limiter: rate.NewLimiter(rate.Limit(perSecond), 2*perSecond),
	}
}

// line forwards one line, or counts it as dropped.
func (l *pluginLog) line(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.limiter.Allow() {
		l.dropped++
		return
	}
	if l.dropped > 0 {
		l.log.Info("the plugin logged faster than the host forwards; lines were dropped", "droppedLines", l.dropped)
		l.dropped = 0
	}
	_, _ = l.out.Write(append(b, '\n'))
}

// logSink is the log of one instance: its log function's and stderr's
// bytes, cut into lines. It keeps the last line that explains an end (Go's
// runtime writes "panic: ..." or "fatal error: ..." before it exits), for
// the error of the call it ended.
type logSink struct {
	to *pluginLog

	mu      sync.Mutex
	buf     []byte
	fatal   string // what the module said of its panic or fatal error
	last    string // the last line
	dying   bool   // the module reported a panic or fatal error
	dropped int    // the lines of its goroutine dump, not forwarded
}

func (s *logSink) Write(b []byte) (int, error) {
	n := len(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			room := maxLogLine - len(s.buf)
			s.buf = append(s.buf, b[:min(len(b), max(room, 0))]...)
			break
		}
		s.buf = append(s.buf, b[:min(i, max(maxLogLine-len(s.buf), 0))]...)
		s.flush()
		b = b[i+1:]
	}
	return n, nil
}

// flush ends the line in buf.
func (s *logSink) flush() {
	line := bytes.TrimRight(s.buf, "\r")
	s.buf = s.buf[:0]
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	text := strings.ToValidUTF8(string(line[:min(len(line), 300)]), "\uFFFD")
	s.last = text
	// Go's runtime ends a module with the panic's value or the fatal
	// error, then every goroutine's stack. The controller's log gets the
	// first, said as the host's (a "panic:" line in the controller's log
	// would read as the controller's own), and not the dump.
	switch {
	case strings.HasPrefix(text, "panic: "):
		s.fatal = "it panicked: " + strings.TrimPrefix(text, "panic: ")
	case strings.HasPrefix(text, "fatal error: "):
		s.fatal = "it stopped with a fatal error: " + strings.TrimPrefix(text, "fatal error: ")
	case s.dying:
		s.dropped++
		return
	default:
		s.to.line(line)
		return
	}
	s.dying = true
	s.to.log.Info("the wasm module is ending; its goroutine dump is not forwarded", "why", s.fatal)
}

// why returns what the instance last said about its end, or "".
func (s *logSink) why() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) > 0 {
		s.flush()
	}
	if s.fatal != "" {
		return s.fatal
	}
	return s.last
}

// maxLogLine is the longest line forwarded whole; the rest is dropped.
const maxLogLine = 16 << 10

func (s *logSink) String() string { return fmt.Sprintf("logSink(%q)", s.last) }
