package procnode

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

// handler serves what the API server asks a kubelet for: /healthz and
// /containerLogs/{namespace}/{pod}/{container} (kubectl logs, GetLogs)
// with follow, previous, tailLines and limitBytes.
func (n *nodeAgent) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/containerLogs/{namespace}/{pod}/{container}", n.containerLogs)
	return mux
}

func (n *nodeAgent) containerLogs(rw http.ResponseWriter, r *http.Request) {
	ns, podName, name := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	q := r.URL.Query()
	opts, err := parseLogOptions(q)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w := n.worker(ns, podName)
	if w == nil {
		http.Error(rw, fmt.Sprintf("pod %s/%s is not on node %s", ns, podName, n.name), http.StatusNotFound)
		return
	}
	path, running, err := w.logFile(name, opts.previous)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		http.Error(rw, fmt.Sprintf("container %s of pod %s/%s has no log yet: %v", name, ns, podName, err), http.StatusBadRequest)
		return
	}
	defer f.Close()
	rw.Header().Set("Content-Type", "text/plain")
	if err := writeLog(rw, f, opts, running, r.Context().Done()); err != nil {
		n.agent.logf("node %s: logs of %s/%s/%s: %v", n.name, ns, podName, name, err)
	}
}

type logOptions struct {
	follow, previous bool
	tailLines        int64 // -1: all
	limitBytes       int64 // 0: no limit
}

func parseLogOptions(q map[string][]string) (logOptions, error) {
	o := logOptions{tailLines: -1}
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var err error
	for k, dst := range map[string]*bool{"follow": &o.follow, "previous": &o.previous} {
		if v := get(k); v != "" {
			if *dst, err = strconv.ParseBool(v); err != nil {
				return o, fmt.Errorf("%s=%q: want true or false", k, v)
			}
		}
	}
	for k, dst := range map[string]*int64{"tailLines": &o.tailLines, "limitBytes": &o.limitBytes} {
		if v := get(k); v != "" {
			if *dst, err = strconv.ParseInt(v, 10, 64); err != nil || *dst < 0 {
				return o, fmt.Errorf("%s=%q: want a number of 0 or more", k, v)
			}
		}
	}
	return o, nil
}

// logFile is the log of a container's current run, or of the one before
// (previous); running says whether that run may still write to it.
func (w *podWorker) logFile(name string, previous bool) (path string, running func() bool, err error) {
	w.stateMu.Lock()
	defer w.stateMu.Unlock()
	pod := w.current()
	for _, c := range w.containers {
		if c.spec.Name != name {
			continue
		}
		// The restart count is the number of the current run, or, in
		// back-off, of the run that just ended, which is then the
		// previous one too, as a kubelet has it.
		n := c.restarts
		backOff := c.state.Waiting != nil && c.state.Waiting.Reason == "CrashLoopBackOff"
		if previous {
			if c.last.Terminated == nil || (n == 0 && !backOff) {
				return "", nil, fmt.Errorf("previous terminated container %q of pod %q not found", name, pod.Name)
			}
			if !backOff {
				n--
			}
			return w.logPath(name, n), func() bool { return false }, nil
		}
		p := c.proc
		return w.logPath(name, n), func() bool { return p != nil && !p.exited() }, nil
	}
	return "", nil, fmt.Errorf("container %s is not valid for pod %s", name, pod.Name)
}

// writeLog copies a log to w: its last tailLines lines, at most
// limitBytes, and, to follow, what is written to it after, until its run
// ends or done.
func writeLog(w io.Writer, f *os.File, o logOptions, running func() bool, done <-chan struct{}) error {
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	if o.tailLines >= 0 {
		data = tail(data, int(o.tailLines))
	}
	written := int64(0)
	limited := func(p []byte) ([]byte, bool) {
		if o.limitBytes > 0 && written+int64(len(p)) >= o.limitBytes {
			return p[:o.limitBytes-written], true
		}
		return p, false
	}
	out := bufio.NewWriter(w)
	flush := func(p []byte) (bool, error) {
		p, full := limited(p)
		if _, err := out.Write(p); err != nil {
			return true, err
		}
		written += int64(len(p))
		if err := out.Flush(); err != nil {
			return true, err
		}
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		return full, nil
	}
	if full, err := flush(data); full || err != nil || !o.follow {
		return err
	}
	buf := make([]byte, 32*1024)
	for {
		k, err := f.Read(buf)
		if k > 0 {
			if full, err := flush(buf[:k]); full || err != nil {
				return err
			}
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		if !running() {
			// What the run wrote between the last read and its end.
			rest, err := io.ReadAll(f)
			if err == nil && len(rest) > 0 {
				_, err = flush(rest)
			}
			return err
		}
		select {
		case <-done:
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tail is the last n lines of data.
func tail(data []byte, n int) []byte {
	if n == 0 {
		return nil
	}
	end := len(data)
	trimmed := bytes.TrimSuffix(data, []byte("\n"))
	count := 0
	for i := len(trimmed) - 1; i >= 0; i-- {
		if trimmed[i] == '\n' {
			count++
			if count == n {
				return data[i+1 : end]
			}
		}
	}
	return data
}
