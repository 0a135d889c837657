package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// hostTimeFormat is the layout in which go-plugin hosts parse @timestamp;
// a line whose timestamp does not parse is not treated as a log entry.
const hostTimeFormat = "2006-01-02T15:04:05.000000Z07:00"

func TestLoggerWritesHostLogLines(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf)
	log.Info("enforcing", "job", "llm", "nodes", 4)
	log.V(1).Info("detail")
	log.V(2).Info("more detail")
	log.V(5).Info("even more")
	log.WithName("mpi").WithValues("job", "llm").Error(errors.New("no slots"), "cannot build", "retry", false)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var got []map[string]any
	for _, line := range lines {
		entry := map[string]any{}
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", line, err)
		}
		ts, ok := entry["@timestamp"].(string)
		if !ok {
			t.Errorf("line %q has no @timestamp", line)
		} else if _, err := time.Parse(hostTimeFormat, ts); err != nil {
			t.Errorf("line %q: the host cannot parse @timestamp: %v", line, err)
		}
		delete(entry, "@timestamp")
		got = append(got, entry)
	}
	want := []map[string]any{
		{"@level": "info", "@message": "enforcing", "job": "llm", "nodes": float64(4)},
		{"@level": "debug", "@message": "detail"},
		{"@level": "trace", "@message": "more detail"},
		{"@level": "trace", "@message": "even more"},
		{"@level": "error", "@message": "cannot build", "@module": "mpi", "job": "llm", "error": "no slots", "retry": false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}

func TestLoggerIsEnabledAtEveryLevel(t *testing.T) {
	log := newLogger(&bytes.Buffer{})
	for v := 0; v < 10; v++ {
		if !log.V(v).Enabled() {
			t.Errorf("V(%d) is disabled; the host filters by its own level", v)
		}
	}
}
