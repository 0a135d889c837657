package pluginhost

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
)

// Calls counts the calls under way on one plugin, for CloseWhenIdle. The
// zero value is ready to use.
type Calls struct {
	n    atomic.Int64
	once sync.Once
	idle chan struct{} // signalled when the count falls to zero
}

func (c *Calls) signal() chan struct{} {
	c.once.Do(func() { c.idle = make(chan struct{}, 1) })
	return c.idle
}

// Begin counts a call that starts; End, deferred, its end.
func (c *Calls) Begin() { c.n.Add(1) }

// End counts the end of a call begun with Begin.
func (c *Calls) End() {
	if c.n.Add(-1) == 0 {
		select {
		case c.signal() <- struct{}{}:
		default:
		}
	}
}

// InFlight returns the calls under way.
func (c *Calls) InFlight() int64 { return c.n.Load() }

// CloseWhenIdle waits until no call is under way, or at most timeout, then
// calls close: the host replaced the plugin (a configuration reload), and
// the calls that started before the switch finish on it. A plugin closed
// with calls still under way is logged to log.
func (c *Calls) CloseWhenIdle(timeout time.Duration, log logr.Logger, close func()) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	idle := c.signal()
	for c.n.Load() > 0 {
		select {
		case <-idle:
		case <-deadline.C:
			log.Info("closing a replaced plugin with calls still under way", "calls", c.n.Load())
			close()
			return
		}
	}
	close()
}
