package external

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
)

// maxLogLine is the longest stderr line forwarded whole; the rest of a
// longer line is dropped and counted.
const maxLogLine = 16 << 10

// stderrLogger forwards a plugin's stderr to the controller's logger, one
// log entry per line. go-plugin writes each line to it in pieces (the line,
// then its newline; a very long line in several pieces), so it buffers up to
// a newline.
//
// A line that is a JSON object with "@message" (hclog's JSON format, which
// the SDK's logger writes) becomes an entry with that message, its level and
// its other keys as key/value pairs. Any other line becomes an Info entry
// with the line as its message. Nothing a plugin writes can make it panic or
// grow without bound.
type stderrLogger struct {
	log logr.Logger

	mu        sync.Mutex
	buf       []byte
	truncated int    // bytes dropped from the current line
	last      string // the last line logged, to explain a failed start
}

// lastLine returns the last line the plugin wrote to stderr, or "".
func (w *stderrLogger) lastLine() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

func newStderrLogger(log logr.Logger) *stderrLogger {
	return &stderrLogger{log: log}
}

// setLogger changes the logger of the lines to come.
func (w *stderrLogger) setLogger(log logr.Logger) {
	w.mu.Lock()
	w.log = log
	w.mu.Unlock()
}

func (w *stderrLogger) Write(b []byte) (int, error) {
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

func (w *stderrLogger) add(b []byte) {
	room := maxLogLine - len(w.buf)
	if len(b) > room {
		w.buf = append(w.buf, b[:room]...)
		w.truncated += len(b) - room
		return
	}
	w.buf = append(w.buf, b...)
}

func (w *stderrLogger) flush() {
	line, truncated := w.buf, w.truncated
	w.buf, w.truncated = w.buf[:0], 0
	if cap(w.buf) > 4*1024 {
		w.buf = nil // do not keep a long line's buffer
	}
	w.emit(line, truncated)
}

// emit logs one line. A panicking logger loses the line, not the host.
func (w *stderrLogger) emit(line []byte, truncated int) {
	defer func() { _ = recover() }()
	line = bytes.TrimRight(line, "\r")
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	w.last = strings.ToValidUTF8(string(line[:min(len(line), 300)]), "\uFFFD")
	if truncated > 0 {
		w.log.Info(strings.ToValidUTF8(string(line), "\uFFFD"), "truncatedBytes", truncated)
		return
	}
	if e, ok := parseHCLogLine(line); ok {
		e.log(w.log)
		return
	}
	w.log.Info(strings.ToValidUTF8(string(line), "\uFFFD"))
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
		if k == "error" && (e.level == "error") {
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

// NewLogWriter returns a writer that forwards a plugin's log lines to log
// as the host forwards an external plugin's stderr: the SDK's JSON lines
// keep their message, level and key/value pairs, other lines become Info
// entries. It is safe for concurrent use; nothing written to it can make it
// panic or grow without bound. The host of WebAssembly plugins uses it for
// their log function and stderr.
func NewLogWriter(log logr.Logger) io.Writer { return newStderrLogger(log) }
