package statusserver

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// updateLimiter lets at most one update of each TrainJob through per
// interval. It is per replica: with N replicas behind the Service, a
// TrainJob gets at most N updates per interval.
type updateLimiter struct {
	interval time.Duration
	clock    clock.Clock

	mu   sync.Mutex
	last map[types.UID]time.Time
}

func newUpdateLimiter(interval time.Duration, c clock.Clock) *updateLimiter {
	return &updateLimiter{interval: interval, clock: c, last: map[types.UID]time.Time{}}
}

// reserve takes the TrainJob's slot and returns a func that gives it back
// (for an update the API server refused), or, when the last update is
// younger than the interval, how long to wait.
func (l *updateLimiter) reserve(uid types.UID) (release func(), wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	prev, seen := l.last[uid]
	if seen && now.Sub(prev) < l.interval {
		return nil, l.interval - now.Sub(prev)
	}
	if len(l.last) > 1024 {
		// Forget the TrainJobs whose interval is over, so that the map
		// holds only the ones updated lately.
		for k, t := range l.last {
			if now.Sub(t) >= l.interval {
				delete(l.last, k)
			}
		}
	}
	l.last[uid] = now
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.last[uid].Equal(now) {
			if seen {
				l.last[uid] = prev
			} else {
				delete(l.last, uid)
			}
		}
	}, 0
}
