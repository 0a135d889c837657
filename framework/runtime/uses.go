package runtime

import (
	"sync"
	"sync/atomic"
)

// uses counts the work under way with the plugin sets of one
// configuration, so that a reload closes the plugins it dropped only once
// no work can still call them. A piece of work takes the set (Current)
// and then calls its plugins one after the other; counting the calls
// alone would miss the work between two of them, and a plugin closed
// there fails the next call ("the plugin host was closed") of work that
// started before the reload.
type uses struct {
	n       atomic.Int64
	retired atomic.Bool
	once    sync.Once
	done    chan struct{} // closed once retired with no use under way
}

func newUses() *uses { return &uses{done: make(chan struct{})} }

// begin counts a use; false when the sets were replaced meanwhile, and the
// work must take the new set instead.
func (u *uses) begin() bool {
	u.n.Add(1)
	if u.retired.Load() {
		u.end()
		return false
	}
	return true
}

// end counts the end of a use that begin counted.
func (u *uses) end() {
	if u.n.Add(-1) == 0 && u.retired.Load() {
		u.once.Do(func() { close(u.done) })
	}
}

// retire marks the sets replaced and returns the channel closed once no
// use of them is under way. A begin that counted itself before this sees
// it retired or is seen here: with sequentially consistent atomics, the
// last of the two to look finds the other's write.
func (u *uses) retire() <-chan struct{} {
	u.retired.Store(true)
	if u.n.Load() == 0 {
		u.once.Do(func() { close(u.done) })
	}
	return u.done
}
