// Package quota is the chat's limits per client, kept in memory: a token
// bucket per sending nickname (Senders) and the count of open streams per
// client address (Streams). Both are safe for concurrent use.
package quota

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Senders keeps one token bucket per sending nickname.
type Senders struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	m     map[string]*rate.Limiter
}

// NewSenders lets each nickname send perSecond messages a second, in
// bursts of burst; a negative perSecond: no limit (nil, which allows all).
func NewSenders(perSecond float64, burst int) *Senders {
	if perSecond < 0 {
		return nil
	}
	return &Senders{limit: rate.Limit(perSecond), burst: burst, m: map[string]*rate.Limiter{}}
}

// Allow takes one token of nick's bucket; when there is none it returns how
// long until there is.
func (l *Senders) Allow(nick string) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	now := time.Now()
	l.mu.Lock()
	lim := l.m[nick]
	if lim == nil {
		if len(l.m) >= 10000 {
			// Forget senders whose bucket refilled: they are idle.
			for n, x := range l.m {
				if x.TokensAt(now) >= float64(l.burst) {
					delete(l.m, n)
				}
			}
		}
		lim = rate.NewLimiter(l.limit, l.burst)
		l.m[nick] = lim
	}
	l.mu.Unlock()
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// Rule says the limit, for a refusal.
func (l *Senders) Rule() string {
	return fmt.Sprintf("at most %g messages per second per nickname, bursts of %d", float64(l.limit), l.burst)
}

// Streams counts the open streams of each client address.
type Streams struct {
	max int
	mu  sync.Mutex
	m   map[string]int
}

// NewStreams lets each address hold max streams; a negative max: no limit.
func NewStreams(max int) *Streams {
	if max < 0 {
		max = math.MaxInt
	}
	return &Streams{max: max, m: map[string]int{}}
}

// Acquire counts one more stream of addr; false when it holds its most.
func (l *Streams) Acquire(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m[addr] >= l.max {
		return false
	}
	l.m[addr]++
	return true
}

// Release counts one stream of addr less.
func (l *Streams) Release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m[addr] <= 1 {
		delete(l.m, addr)
	} else {
		l.m[addr]--
	}
}

// Max is the most streams an address may hold.
func (l *Streams) Max() int { return l.max }
