// Package pluginhosttest is the test set-up that the tests of every kind
// of hosted plugin share (framework/external, framework/wasm, the
// operator's): the options of a test plugin, a start that closes it with
// the test, a capture of what the host logs, and the Info and TrainJob a
// test calls a plugin with. What builds a plugin is its kind's:
// testenv.NewBinaries builds binaries, wasmtest.Build modules.
package pluginhosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/pluginhost"
)

// Options returns the options of a test plugin named name: the
// configuration's defaults, but timeouts long enough for a busy machine
// and a short backoff, logging into the returned Logs.
func Options(name string) (pluginhost.Options, *Logs) {
	l, log := NewLogs()
	return pluginhost.Options{
		Name:              name,
		StartTimeout:      20 * time.Second,
		CallTimeout:       20 * time.Second,
		Backoff:           pluginhost.Backoff{Initial: 50 * time.Millisecond, Max: 500 * time.Millisecond},
		MaxMessageBytes:   int(configv1alpha1.DefaultMaxMessageBytes),
		LogLinesPerSecond: pluginhost.LogLinesPerSecond,
		Logger:            log,
	}, l
}

// WithDefaults fills the options a test leaves unset with the
// configuration's defaults, as the controller's defaulted configuration
// entry does.
func WithDefaults(o pluginhost.Options) pluginhost.Options {
	if o.StartTimeout == 0 {
		o.StartTimeout = configv1alpha1.DefaultStartTimeout
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = configv1alpha1.DefaultCallTimeout
	}
	if o.Backoff == (pluginhost.Backoff{}) {
		o.Backoff = pluginhost.Backoff{Initial: configv1alpha1.DefaultRestartBackoffInitial, Max: configv1alpha1.DefaultRestartBackoffMax}
	}
	if o.MaxMessageBytes == 0 {
		o.MaxMessageBytes = int(configv1alpha1.DefaultMaxMessageBytes)
	}
	if o.LogLinesPerSecond == 0 {
		o.LogLinesPerSecond = pluginhost.LogLinesPerSecond
	}
	return o
}

// Start starts a plugin with start (external.Start, wasm.Start) and
// closes it when the test ends; it fails the test when Start fails.
func Start[P interface{ Close() }, O any](t testing.TB, start func(context.Context, O) (P, error), opts O) P {
	t.Helper()
	p, err := start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// Info is the Info a test calls a plugin with: one pod set of two nodes.
func Info() *framework.Info {
	return &framework.Info{
		Version: framework.InfoVersion,
		PodSets: []framework.PodSet{{
			Name: "node", Replicas: 1, Count: 2,
			Containers: []framework.Container{{Name: "node", Image: "pytorch/pytorch"}},
		}},
	}
}

// Job is the TrainJob a test calls a plugin with.
func Job(name string) *trainer.TrainJob {
	return &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: "uid-1"}}
}

// Logs captures what a host logs, one JSON object per entry (numbers as
// json.Number).
type Logs struct {
	mu      sync.Mutex
	entries []map[string]any
}

// NewLogs returns an empty capture and the logger (verbosity 1) that
// writes into it.
func NewLogs() (*Logs, logr.Logger) {
	l := &Logs{}
	return l, funcr.NewJSON(func(obj string) {
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(obj))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			m = map[string]any{"msg": obj}
		}
		l.mu.Lock()
		l.entries = append(l.entries, m)
		l.mu.Unlock()
	}, funcr.Options{Verbosity: 1})
}

// Entries returns the entries so far.
func (l *Logs) Entries() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]any(nil), l.entries...)
}

// Matching returns the entries that have every key/value of want (compared
// as fmt.Sprint; a nil value wants the key absent).
func (l *Logs) Matching(want map[string]any) []map[string]any {
	var out []map[string]any
	for _, e := range l.Entries() {
		ok := true
		for k, v := range want {
			if fmt.Sprint(e[k]) != fmt.Sprint(v) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, e)
		}
	}
	return out
}

func (l *Logs) String() string {
	var b strings.Builder
	for _, e := range l.Entries() {
		data, _ := json.Marshal(e)
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}
