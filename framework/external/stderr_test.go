package external

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
)

func TestStderrLogger(t *testing.T) {
	g := NewWithT(t)
	logs, log := newLogs()
	w := newStderrLogger(log.WithValues("plugin", "P"))
	write := func(s string) {
		n, err := w.Write([]byte(s))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(n).To(Equal(len(s)))
	}
	// go-plugin writes a line, then its newline.
	write("plain line")
	write("\n")
	write(`{"@level":"info","@message":"configured","@timestamp":"2026-01-02T03:04:05.000000Z","@module":"mpi","greeting":"hi","n":3}` + "\n")
	write(`{"@level":"error","@message":"failed","error":"boom","job":"llm"}` + "\n")
	write(`{"@level":"warn","@message":"careful"}` + "\n")
	write(`{"@level":"debug","@message":"details"}` + "\n")
	write(`{"no":"message"}` + "\n\n   \n")
	write("two\nlines\r\n")

	g.Expect(logs.matching(map[string]any{"plugin": "P", "msg": "plain line", "level": 0})).To(HaveLen(1), logs.String)
	g.Expect(logs.matching(map[string]any{"plugin": "P", "msg": "configured", "module": "mpi", "greeting": "hi", "n": 3})).To(HaveLen(1), logs.String)
	g.Expect(logs.matching(map[string]any{"msg": "configured", "timestamp": nil, "@timestamp": nil})).To(HaveLen(1), "the timestamp is the controller's")
	g.Expect(logs.matching(map[string]any{"plugin": "P", "msg": "failed", "error": "boom", "job": "llm"})).To(HaveLen(1), logs.String)
	g.Expect(logs.matching(map[string]any{"plugin": "P", "msg": "careful", "level": 0, "severity": "warn"})).To(HaveLen(1), logs.String)
	g.Expect(logs.matching(map[string]any{"plugin": "P", "msg": "details", "level": 1})).To(HaveLen(1), logs.String)
	g.Expect(logs.matching(map[string]any{"msg": `{"no":"message"}`})).To(HaveLen(1), logs.String)
	g.Expect(logs.matching(map[string]any{"msg": "two"})).To(HaveLen(1), logs.String)
	g.Expect(logs.matching(map[string]any{"msg": "lines"})).To(HaveLen(1), logs.String)
	g.Expect(logs.entries).To(HaveLen(8), "blank lines are not logged")
}

func TestStderrLoggerLongLine(t *testing.T) {
	g := NewWithT(t)
	logs, log := newLogs()
	w := newStderrLogger(log)
	// go-plugin writes a line longer than its buffer in pieces.
	piece := strings.Repeat("x", 64<<10)
	for range 16 {
		_, _ = w.Write([]byte(piece))
	}
	_, _ = w.Write([]byte("\nafter\n"))
	g.Expect(logs.entries).To(HaveLen(2))
	g.Expect(logs.entries[0]["msg"]).To(HaveLen(maxLogLine))
	g.Expect(logs.matching(map[string]any{"truncatedBytes": 16*64<<10 - maxLogLine})).To(HaveLen(1), "the dropped bytes are counted")
	g.Expect(logs.matching(map[string]any{"msg": "after"})).To(HaveLen(1), "the next line is whole")
	g.Expect(cap(w.buf)).To(BeNumerically("<=", 4<<10), "the long line's buffer is not kept")
}

type panickingSink struct{ logr.LogSink }

func (panickingSink) Init(logr.RuntimeInfo) {}
func (panickingSink) Enabled(int) bool      { return true }
func (panickingSink) Error(error, string, ...any) {
	panic("sink broken")
}
func (s panickingSink) WithValues(...any) logr.LogSink { return s }
func (panickingSink) Info(int, string, ...any) {
	panic("sink broken")
}

func TestStderrLoggerSurvivesPanics(t *testing.T) {
	g := NewWithT(t)
	w := newStderrLogger(logr.New(panickingSink{}))
	g.Expect(func() { _, _ = w.Write([]byte("a line\n{\"@message\":\"m\"}\n")) }).NotTo(Panic())
}
