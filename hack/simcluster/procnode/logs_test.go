package procnode

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTail(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"}, {"a\nb\nc\n", 5, "a\nb\nc\n"}, {"a\nb\nc", 1, "c"},
		{"a\nb\nc\n", 0, ""}, {"", 3, ""}, {"a\nb\nc\n", 3, "a\nb\nc\n"},
	} {
		if got := string(tail([]byte(c.in), c.n)); got != c.want {
			t.Errorf("tail(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestParseLogOptions(t *testing.T) {
	q, _ := url.ParseQuery("follow=true&previous=false&tailLines=10&limitBytes=5")
	o, err := parseLogOptions(q)
	if err != nil || !o.follow || o.previous || o.tailLines != 10 || o.limitBytes != 5 {
		t.Errorf("options %+v, %v", o, err)
	}
	if o, _ := parseLogOptions(url.Values{}); o.tailLines != -1 || o.follow {
		t.Errorf("defaults %+v", o)
	}
	for _, bad := range []string{"follow=maybe", "tailLines=-1", "limitBytes=x"} {
		q, _ := url.ParseQuery(bad)
		if _, err := parseLogOptions(q); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestWriteLogTailAndLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    logOptions
		want string
	}{
		{logOptions{tailLines: -1}, "one\ntwo\nthree\n"},
		{logOptions{tailLines: 1}, "three\n"},
		{logOptions{tailLines: -1, limitBytes: 5}, "one\nt"},
		// Following a run that has ended returns what it wrote.
		{logOptions{tailLines: 2, follow: true}, "two\nthree\n"},
	} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := writeLog(&out, f, c.o, func() bool { return false }, nil); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if out.String() != c.want {
			t.Errorf("%+v: %q, want %q", c.o, out.String(), c.want)
		}
	}
}

// The current run's log is the restart count's; --previous is the one
// before, also while the container waits in back-off.
func TestLogFileOfRunAndPrevious(t *testing.T) {
	w := &podWorker{dir: "/pods/uid", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}}
	c := &container{spec: &corev1.Container{Name: "main"}}
	w.containers = []*container{c}
	if path, _, err := w.logFile("main", false); err != nil || path != "/pods/uid/logs/main/0.log" {
		t.Errorf("first run: %s, %v", path, err)
	}
	if _, _, err := w.logFile("main", true); err == nil {
		t.Error("a previous log of a container never restarted")
	}
	// Exited once, waiting to start again.
	c.last = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
	c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	c.restarts = 0
	if path, _, _ := w.logFile("main", false); path != "/pods/uid/logs/main/0.log" {
		t.Errorf("in back-off, current: %s", path)
	}
	if path, _, _ := w.logFile("main", true); path != "/pods/uid/logs/main/0.log" {
		t.Errorf("in back-off, previous: %s", path)
	}
	c.restarts = 1
	c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	if path, _, _ := w.logFile("main", false); path != "/pods/uid/logs/main/1.log" {
		t.Errorf("second run: %s", path)
	}
	if path, _, _ := w.logFile("main", true); path != "/pods/uid/logs/main/0.log" {
		t.Errorf("second run, previous: %s", path)
	}
	if _, _, err := w.logFile("other", false); err == nil {
		t.Error("a container the pod does not have")
	}
}
