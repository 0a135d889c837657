package sdk

import (
	"io"
	"os"
	"sync"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
)

// stderr is the process's standard error, taken before Serve: go-plugin
// then points os.Stderr at a pipe of its own, whose content the host may
// discard, while the host reads the process's real standard error.
var stderr io.Writer = os.Stderr

var (
	baseOnce sync.Once
	base     hclog.Logger
)

// hclogger returns the logger shared by Logger and go-plugin's own logs.
func hclogger() hclog.Logger {
	baseOnce.Do(func() { base = newHCLogger(stderr) })
	return base
}

// newHCLogger returns a logger of JSON lines in the format go-plugin hosts
// parse: @level, @message, @timestamp, @module and the key/value pairs. It
// logs every level; the host filters by its own.
func newHCLogger(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Level:      hclog.Trace,
		Output:     w,
		JSONFormat: true,
	})
}

// Logger returns a logger for a plugin. It writes one JSON object per line
// to the process's standard error:
//
//	{"@level":"info","@message":"enforcing","@timestamp":"2025-01-02T15:04:05.000000Z","job":"llm"}
//
// The host forwards each line into the controller's log under the plugin's
// name, keeping its level and key/value pairs. Levels: Info is "info",
// V(1) "debug", V(2) and beyond "trace", Error "error" with the error under
// the key "error". WithName adds an "@module".
//
// It keeps writing to standard error after Serve has redirected os.Stderr,
// and may be used before Serve, in main:
//
//	log := sdk.Logger()
//	log.Info("starting", "version", version)
//	sdk.Serve(plugin)
func Logger() logr.Logger {
	return logr.New(&sink{l: hclogger()})
}

// newLogger returns a Logger writing to w, for tests.
func newLogger(w io.Writer) logr.Logger {
	return logr.New(&sink{l: newHCLogger(w)})
}

// sink is a logr.LogSink over an hclog.Logger.
type sink struct {
	l hclog.Logger
}

var _ logr.LogSink = (*sink)(nil)

func (*sink) Init(logr.RuntimeInfo) {}

// level maps a logr verbosity to an hclog level.
func level(v int) hclog.Level {
	switch {
	case v <= 0:
		return hclog.Info
	case v == 1:
		return hclog.Debug
	default:
		return hclog.Trace
	}
}

func (s *sink) Enabled(v int) bool {
	return level(v) >= s.l.GetLevel()
}

func (s *sink) Info(v int, msg string, keysAndValues ...any) {
	s.l.Log(level(v), msg, keysAndValues...)
}

func (s *sink) Error(err error, msg string, keysAndValues ...any) {
	s.l.Error(msg, append([]any{"error", err}, keysAndValues...)...)
}

func (s *sink) WithValues(keysAndValues ...any) logr.LogSink {
	return &sink{l: s.l.With(keysAndValues...)}
}

func (s *sink) WithName(name string) logr.LogSink {
	return &sink{l: s.l.Named(name)}
}
