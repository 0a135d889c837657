package pluginhost

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
)

// InputKey identifies what a call asks of a plugin. The input of an
// extension-point call about a TrainJob is that TrainJob (its UID and
// generation: a change of its status is no new question) and the Info it
// sends; of any other call, its whole request.
type InputKey [sha256.Size]byte

// KeyOf returns the key of a call of method with request req. data is req
// marshalled, or nil when the caller has not marshalled it: it is needed
// only for a request about no TrainJob.
func KeyOf(method string, req proto.Message, data []byte) InputKey {
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
		if data == nil {
			data, _ = proto.MarshalOptions{Deterministic: true}.Marshal(req)
		}
		h.Write(data)
		return InputKey(h.Sum(nil))
	}
	b, _ := json.Marshal(job.Metadata)
	h.Write(b)
	h.Write([]byte{0})
	h.Write(r.GetInfo())
	return InputKey(h.Sum(nil))
}

// MissedDeadlineTTL is how long a host remembers that a call of an input
// got no answer within its deadline for want of the plugin's own time (an
// external plugin's process serving other TrainJobs' calls, a wasm
// instance short of CPU): long past the controller's retry of a TrainJob
// whose plugin gave no answer of its own (2 to 3 s), so that the retry's
// miss counts as the second, which the failure policy judges; a TrainJob
// that comes back much later gets a first again.
const MissedDeadlineTTL = time.Minute

// FirstMissNote ends the message of a first missed deadline that a host
// turns into a *framework.UnavailableError (RecentInputs.AddFirst).
const FirstMissNote = "the first time for this input: the TrainJob is retried before the failure policy applies"

// RecentInputs remembers for a while (TTL) some calls by their input, with
// their error, at most maxRecentInputs of them, the oldest going first. A
// host keeps one per plugin for the calls whose end says something about
// the next call of the same input: a wasm module that looped, trapped or
// ran out of memory does the same again; an external plugin that missed
// its deadline once may have been behind other TrainJobs' calls. The zero
// value, with TTL set, is ready to use; its methods are safe for
// concurrent use.
type RecentInputs struct {
	TTL time.Duration

	mu    sync.Mutex
	calls map[InputKey]recentCall
	order []InputKey // oldest first, for the bound
}

// maxRecentInputs bounds the calls remembered by one RecentInputs.
const maxRecentInputs = 1024

type recentCall struct {
	err error
	at  time.Time
}

// Lookup returns the error of a call of that input remembered within TTL,
// or nil.
func (r *RecentInputs) Lookup(key InputKey) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.remembered(key)
	if !ok {
		return nil
	}
	return c.err
}

// remembered returns the call of that input if it is remembered within
// TTL; r.mu is held.
func (r *RecentInputs) remembered(key InputKey) (recentCall, bool) {
	c, ok := r.calls[key]
	return c, ok && time.Since(c.at) <= r.TTL
}

// Add remembers that a call of that input ended with err.
func (r *RecentInputs) Add(key InputKey, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(key, err)
}

// AddFirst remembers that a call of that input ended with err unless one
// is remembered within TTL, and reports whether it was the first. The
// check and the add are one step: two calls of one input at once are not
// both first.
func (r *RecentInputs) AddFirst(key InputKey, err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.remembered(key); ok {
		return false
	}
	r.add(key, err)
	return true
}

// add is Add with r.mu held.
func (r *RecentInputs) add(key InputKey, err error) {
	if r.calls == nil {
		r.calls = map[InputKey]recentCall{}
	}
	if _, ok := r.calls[key]; !ok {
		r.order = append(r.order, key)
	}
	r.calls[key] = recentCall{err: err, at: time.Now()}
	for len(r.order) > maxRecentInputs {
		delete(r.calls, r.order[0])
		r.order = r.order[1:]
	}
}

// Forget forgets the call of that input, if remembered.
func (r *RecentInputs) Forget(key InputKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.calls[key]; !ok {
		return
	}
	delete(r.calls, key)
	for i, k := range r.order {
		if k == key {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
}

// Empty reports whether no call is remembered, so that a host can skip
// computing a key for a call that cannot be among them.
func (r *RecentInputs) Empty() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls) == 0
}
