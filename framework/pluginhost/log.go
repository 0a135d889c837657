package pluginhost

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
)

// MaxLineBytes is the longest line of a plugin's log forwarded whole; the
// rest of a longer line is dropped and counted (truncatedBytes).
const MaxLineBytes = 16 << 10

// Log forwards the log lines of one plugin (a process's stderr, every
// instance of a module) to the controller's logger, at most
// LogLinesPerSecond on average: a plugin that logs in a loop costs the
// controller a counter, not its log. A line that is a JSON object with
// "@message" (hclog's JSON format, which the SDK's logger writes) becomes
// an entry with that message, its level (error; info; warn as
// severity=warn; debug and trace at V(1)) and its other keys as key/value
// pairs; any other line is an Info entry with the line as its message.
// Nothing a plugin writes can make it panic or grow without bound. It is
// safe for concurrent use.
type Log struct {
	log     logr.Logger
	limiter *rate.Limiter

	mu      sync.Mutex
	dropped int
}

// NewLog returns the forwarder of a plugin's lines to log, at most
// perSecond on average (twice that in a burst).
func NewLog(log logr.Logger, perSecond int) *Log {
	return &Log{log: log, limiter: rate.NewLimiter(rate.Limit(perSecond), 2*perSecond)}
}

// Logger is the logger the lines go to.
func (l *Log) Logger() logr.Logger { return l.log }

// Line forwards one line (without its newline) to log, which is l's logger
// or one derived from it (with the pid of a process), or counts it as
// dropped. truncated is how many bytes of the line were cut.
func (l *Log) Line(log logr.Logger, line []byte, truncated int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.limiter.Allow() {
		l.dropped++
		return
	}
	// A panicking logger loses the line, not the host.
	defer func() { _ = recover() }()
	if l.dropped > 0 {
		n := l.dropped
		l.dropped = 0
		log.Info("the plugin logged faster than the host forwards; lines were dropped", "droppedLines", n)
	}
	if truncated > 0 {
		log.Info(strings.ToValidUTF8(string(line), "\uFFFD"), "truncatedBytes", truncated)
		return
	}
	if e, ok := parseHCLogLine(line); ok {
		e.log(log)
		return
	}
	log.Info(strings.ToValidUTF8(string(line), "\uFFFD"))
}

// Lines cuts what a plugin writes into lines of at most MaxLineBytes and
// hands each line that is not blank, without its line end, to a function.
// A plugin's output comes in pieces (go-plugin writes a line, then its
// newline; a long line in several pieces), so it buffers up to a newline.
// It keeps the last line, which often says why a plugin ended. It is safe
// for concurrent use.
type Lines struct {
	line func(line []byte, truncated int)

	mu        sync.Mutex
	buf       []byte
	truncated int    // bytes dropped from the line in buf
	last      string // the last line, at most 300 bytes
}

// NewLines returns a writer that hands each line to line, one call at a
// time.
func NewLines(line func(line []byte, truncated int)) *Lines { return &Lines{line: line} }

func (w *Lines) Write(b []byte) (int, error) {
	n := len(b)
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			w.add(b)
			break
		}
		w.add(b[:i])
		w.flush()
		b = b[i+1:]
	}
	return n, nil
}

// Flush ends a line that has no newline yet.
func (w *Lines) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.flush()
	}
}

// Last returns the last line that was not blank, cut to 300 bytes, or "".
func (w *Lines) Last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

func (w *Lines) add(b []byte) {
	room := MaxLineBytes - len(w.buf)
	if len(b) > room {
		w.buf = append(w.buf, b[:room]...)
		w.truncated += len(b) - room
		return
	}
	w.buf = append(w.buf, b...)
}

func (w *Lines) flush() {
	line, truncated := bytes.TrimRight(w.buf, "\r"), w.truncated
	w.truncated = 0
	if len(bytes.TrimSpace(line)) > 0 {
		w.last = strings.ToValidUTF8(string(line[:min(len(line), 300)]), "\uFFFD")
		w.line(line, truncated)
	}
	w.buf = w.buf[:0]
	if cap(w.buf) > 4<<10 {
		w.buf = nil // do not keep a long line's buffer
	}
}

// hclogEntry is a line in hclog's JSON format.
type hclogEntry struct {
	level   string
	message string
	err     error
	kv      []any
}

func parseHCLogLine(line []byte) (hclogEntry, bool) {
	if len(line) == 0 || line[0] != '{' {
		return hclogEntry{}, false
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return hclogEntry{}, false
	}
	msg, ok := m["@message"].(string)
	if !ok {
		return hclogEntry{}, false
	}
	e := hclogEntry{message: msg}
	e.level, _ = m["@level"].(string)
	e.level = strings.ToLower(e.level)
	keys := make([]string, 0, len(m))
	for k := range m {
		switch k {
		case "@message", "@level", "@timestamp":
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		if n, ok := v.(json.Number); ok {
			v = number(n)
		}
		if k == "error" && e.level == "error" {
			if s, ok := v.(string); ok {
				e.err = errors.New(s)
				continue
			}
		}
		// hclog's own keys (@module, @caller) lose their "@".
		e.kv = append(e.kv, strings.TrimPrefix(k, "@"), v)
	}
	return e, true
}

func number(n json.Number) any {
	if i, err := n.Int64(); err == nil {
		return i
	}
	if f, err := n.Float64(); err == nil {
		return f
	}
	return n.String()
}

func (e hclogEntry) log(l logr.Logger) {
	switch e.level {
	case "error":
		l.Error(e.err, e.message, e.kv...)
	case "warn", "warning":
		l.Info(e.message, append([]any{"severity", "warn"}, e.kv...)...)
	case "debug", "trace":
		l.V(1).Info(e.message, e.kv...)
	case "info", "":
		l.Info(e.message, e.kv...)
	default:
		l.Info(e.message, append([]any{"severity", e.level}, e.kv...)...)
	}
}
