package pluginhost_test

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"

	"github.com/trainforge/trainforge/framework/pluginhost"
	"github.com/trainforge/trainforge/framework/pluginhost/pluginhosttest"
)

// forwarder is what a host makes of a plugin's output: Lines into a Log.
func forwarder(log logr.Logger, perSecond int) *pluginhost.Lines {
	l := pluginhost.NewLog(log, perSecond)
	return pluginhost.NewLines(func(line []byte, truncated int) { l.Line(l.Logger(), line, truncated) })
}

func TestLogLines(t *testing.T) {
	g := NewWithT(t)
	logs, log := pluginhosttest.NewLogs()
	w := forwarder(log.WithValues("plugin", "P"), 100)
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
	write("no newline yet")

	g.Expect(logs.Matching(map[string]any{"plugin": "P", "msg": "plain line", "level": 0})).To(HaveLen(1), logs.String)
	g.Expect(logs.Matching(map[string]any{"plugin": "P", "msg": "configured", "module": "mpi", "greeting": "hi", "n": 3})).To(HaveLen(1), logs.String)
	g.Expect(logs.Matching(map[string]any{"msg": "configured", "timestamp": nil, "@timestamp": nil})).To(HaveLen(1), "the timestamp is the controller's")
	g.Expect(logs.Matching(map[string]any{"plugin": "P", "msg": "failed", "error": "boom", "job": "llm"})).To(HaveLen(1), logs.String)
	g.Expect(logs.Matching(map[string]any{"plugin": "P", "msg": "careful", "level": 0, "severity": "warn"})).To(HaveLen(1), logs.String)
	g.Expect(logs.Matching(map[string]any{"plugin": "P", "msg": "details", "level": 1})).To(HaveLen(1), logs.String)
	g.Expect(logs.Matching(map[string]any{"msg": `{"no":"message"}`})).To(HaveLen(1), logs.String)
	g.Expect(logs.Matching(map[string]any{"msg": "two"})).To(HaveLen(1), logs.String)
	g.Expect(logs.Matching(map[string]any{"msg": "lines"})).To(HaveLen(1), logs.String)
	g.Expect(logs.Entries()).To(HaveLen(8), "blank lines are not logged, nor a line without its end")
	g.Expect(w.Last()).To(Equal("lines"))
	w.Flush()
	g.Expect(logs.Matching(map[string]any{"msg": "no newline yet"})).To(HaveLen(1), "Flush ends the line")
}

func TestLogLongLine(t *testing.T) {
	g := NewWithT(t)
	logs, log := pluginhosttest.NewLogs()
	w := forwarder(log, 100)
	piece := strings.Repeat("x", 64<<10)
	for range 16 {
		_, _ = w.Write([]byte(piece))
	}
	_, _ = w.Write([]byte("\nafter\n"))
	g.Expect(logs.Entries()).To(HaveLen(2))
	g.Expect(logs.Entries()[0]["msg"]).To(HaveLen(pluginhost.MaxLineBytes))
	g.Expect(logs.Matching(map[string]any{"truncatedBytes": 16*64<<10 - pluginhost.MaxLineBytes})).To(HaveLen(1), "the dropped bytes are counted")
	g.Expect(logs.Matching(map[string]any{"msg": "after"})).To(HaveLen(1), "the next line is whole")
}

// TestLogRateLimit: a plugin that logs in a loop, a process on stderr or a
// module alike, gets a burst of twice its rate through, and the rest is
// counted, the count logged with the next line that passes.
func TestLogRateLimit(t *testing.T) {
	g := NewWithT(t)
	logs, log := pluginhosttest.NewLogs()
	w := forwarder(log, 10)
	for range 1000 {
		_, _ = w.Write([]byte("again\n"))
	}
	g.Expect(len(logs.Matching(map[string]any{"msg": "again"}))).To(BeNumerically("<=", 21), "a burst of twice the rate")
	g.Eventually(func() []map[string]any {
		_, _ = w.Write([]byte("later\n"))
		return logs.Matching(map[string]any{"msg": "the plugin logged faster than the host forwards; lines were dropped"})
	}).Should(HaveLen(1))
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

func TestLogSurvivesPanics(t *testing.T) {
	g := NewWithT(t)
	w := forwarder(logr.New(panickingSink{}), 100)
	g.Expect(func() { _, _ = w.Write([]byte("a line\n{\"@message\":\"m\"}\n")) }).NotTo(Panic())
}
