package wasm

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
)

// endedCalls remembers for a while (ttl) the calls that ended their
// instance (their deadline, a trap, a panic, memory past the limit), by
// their input, with their error. A module has no clock, no network and no
// files: given the same input it does the same again, and a reconcile that
// retries its TrainJob, or comes back to it, would spend an instance (a
// new one's start) and, for a loop, a core for the whole callTimeout, to
// get the same answer. Such a call gets that answer at once instead.
type endedCalls struct {
	ttl time.Duration

	mu    sync.Mutex
	calls map[inputKey]endedCall
	order []inputKey // oldest first, for the bound
}

// maxEndedCalls bounds the calls remembered; the oldest go first.
const maxEndedCalls = 1024

type endedCall struct {
	err error
	at  time.Time
}

// inputKey identifies what a call asks of a module. The input of an
// extension-point call about a TrainJob is that TrainJob (its UID and
// generation: a change of its status is no new question) and the Info it
// sends; of any other call, its whole request.
type inputKey [sha256.Size]byte

func keyOf(method string, req proto.Message, data []byte) inputKey {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	r, ok := req.(interface {
		GetInfo() []byte
		GetTrainJob() []byte
	})
	var job struct {
		Metadata struct {
			UID        string `json:"uid"`
			Generation int64  `json:"generation"`
		} `json:"metadata"`
	}
	if !ok || json.Unmarshal(r.GetTrainJob(), &job) != nil || job.Metadata.UID == "" {
		h.Write(data)
		return inputKey(h.Sum(nil))
	}
	b, _ := json.Marshal(job.Metadata)
	h.Write(b)
	h.Write([]byte{0})
	h.Write(r.GetInfo())
	return inputKey(h.Sum(nil))
}

// lookup returns the error of a call of that input that ended its
// instance within ttl, or nil.
func (e *endedCalls) lookup(key inputKey) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.calls[key]
	if !ok || time.Since(c.at) > e.ttl {
		return nil
	}
	return c.err
}

// add remembers that a call of that input ended its instance with err.
func (e *endedCalls) add(key inputKey, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.calls == nil {
		e.calls = map[inputKey]endedCall{}
	}
	if _, ok := e.calls[key]; !ok {
		e.order = append(e.order, key)
	}
	e.calls[key] = endedCall{err: err, at: time.Now()}
	for len(e.order) > maxEndedCalls {
		delete(e.calls, e.order[0])
		e.order = e.order[1:]
	}
}
