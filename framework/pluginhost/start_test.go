package pluginhost_test

import (
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trainforge/trainforge/framework/pluginhost"
	"github.com/trainforge/trainforge/framework/pluginhost/pluginhosttest"
	"github.com/trainforge/trainforge/framework/remote"
)

// TestConfigureError: what a plugin's Configure answered means the same
// for every kind, whether the protocol client or the transport says it.
func TestConfigureError(t *testing.T) {
	other := errors.New("connection reset")
	for _, tc := range []struct {
		name   string
		args   string
		err    error
		want   string // "" for nil
		config bool
	}{
		{name: "answered", err: nil},
		{name: "rejected args", args: `{"x":1}`, err: &remote.CallError{Code: codes.InvalidArgument, Message: "x: unknown"},
			want: `plugin "P" rejected its args: x: unknown`, config: true},
		{name: "rejected args, as a status", err: status.Error(codes.InvalidArgument, "bad"),
			want: `plugin "P" rejected its args: bad`, config: true},
		{name: "no Configure, args", args: `{"x":1}`, err: &remote.CallError{Code: codes.Unimplemented},
			want: `plugin "P" takes no args (it does not implement Configure), but the configuration gives it some`, config: true},
		{name: "no Configure, no args", args: "null", err: status.Error(codes.Unimplemented, "")},
		{name: "another failure", err: other, want: other.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := pluginhost.ConfigureError("P", json.RawMessage(tc.args), tc.err)
			if tc.want == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(tc.want))
			var cerr *pluginhost.ConfigError
			g.Expect(errors.As(err, &cerr)).To(Equal(tc.config))
			if tc.config {
				g.Expect(cerr.Plugin).To(Equal("P"))
			}
		})
	}
}

// TestCheck: the hosts have no defaults of their own; an option left
// unset is named, for the kind and the plugin.
func TestCheck(t *testing.T) {
	g := NewWithT(t)
	o, _ := pluginhosttest.Options("P")
	o.SHA256, o.Args = "ABCD", []string{"--v"}
	g.Expect(o.Check("external")).To(Succeed())
	g.Expect(o.SHA256).To(Equal("abcd"))
	g.Expect(o.Limits.MaxCopyBytes).To(Equal(o.MaxMessageBytes))

	g.Expect(o.Check("wasm", pluginhost.Required{Name: "Module", OK: false})).To(MatchError(
		`wasm plugin "P": Options.Module is not set, or less than it may be; the options come from a defaulted configuration entry (OptionsFor)`))
	o.LogLinesPerSecond = 0
	g.Expect(o.Check("external")).To(MatchError(ContainSubstring(`external plugin "P": Options.LogLinesPerSecond is not set`)))
	o, _ = pluginhosttest.Options("P")
	o.Backoff.Max = o.Backoff.Initial / 2
	g.Expect(o.Check("external")).To(MatchError(ContainSubstring("Options.Backoff.Max")))
}

// TestCloseWhenIdle: a replaced plugin is closed once its calls end, or
// at the timeout with calls still under way.
func TestCloseWhenIdle(t *testing.T) {
	g := NewWithT(t)
	var calls pluginhost.Calls
	var closed atomic.Bool
	logs, log := pluginhosttest.NewLogs()
	calls.Begin()
	calls.Begin()
	done := make(chan struct{})
	go func() {
		calls.CloseWhenIdle(time.Minute, log, func() { closed.Store(true) })
		close(done)
	}()
	calls.End()
	g.Consistently(closed.Load).WithTimeout(100*time.Millisecond).Should(BeFalse(), "a call is under way")
	calls.End()
	g.Eventually(done).Should(BeClosed())
	g.Expect(closed.Load()).To(BeTrue())
	g.Expect(logs.Entries()).To(BeEmpty())

	closed.Store(false)
	calls.Begin()
	start := time.Now()
	calls.CloseWhenIdle(50*time.Millisecond, log, func() { closed.Store(true) })
	g.Expect(closed.Load()).To(BeTrue())
	g.Expect(time.Since(start)).To(BeNumerically(">=", 50*time.Millisecond))
	g.Expect(logs.Matching(map[string]any{"msg": "closing a replaced plugin with calls still under way", "calls": 1})).To(HaveLen(1), logs.String)
}
