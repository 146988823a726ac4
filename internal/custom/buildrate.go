package custom

import (
	"fmt"
	"sync"
	"time"
)

// RateError is a build refused because its client started Options.BuildsPerMinute
// builds in the last minute.
type RateError struct {
	Msg        string
	RetryAfter time.Duration
}

func (e *RateError) Error() string { return e.Msg }

// rateWindow is the span over which Options.BuildsPerMinute counts a client's builds.
const rateWindow = time.Minute

// maxClients bounds the clients whose builds are remembered; past it, the clients
// with no build in the last minute are forgotten, and if that is not enough, all.
const maxClients = 10_000

// buildRate counts each client's builds over the last minute: at most max in any
// minute, as the limit is documented (a token bucket of max a minute would let
// through max at once and then one every minute/max, more than max in a minute).
type buildRate struct {
	mu sync.Mutex
	// now is the clock; nil means time.Now.
	now func() time.Time
	// starts holds each client's builds of the last minute, oldest first.
	starts map[string][]time.Time
}

// take counts one build of client, or refuses it when client started max builds in the
// last minute and says when the oldest of them leaves the window.
func (r *buildRate) take(client string, max int) (retryAfter time.Duration, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.now != nil {
		now = r.now()
	}
	if r.starts == nil {
		r.starts = map[string][]time.Time{}
	}
	if _, known := r.starts[client]; !known && len(r.starts) >= maxClients {
		for c, s := range r.starts {
			if now.Sub(s[len(s)-1]) >= rateWindow {
				delete(r.starts, c)
			}
		}
		if len(r.starts) >= maxClients {
			r.starts = map[string][]time.Time{} // a bound, not an eviction policy
		}
	}
	s := r.starts[client]
	for len(s) > 0 && now.Sub(s[0]) >= rateWindow {
		s = s[1:]
	}
	if len(s) >= max {
		r.starts[client] = s
		return s[0].Add(rateWindow).Sub(now), false
	}
	r.starts[client] = append(s, now)
	return 0, true
}

// allow counts one build of client, or refuses it with a RateError.
func (b *Builder) allow(client string) error {
	per := b.opts.BuildsPerMinute
	d, ok := b.rate.take(client, per)
	if !ok {
		return &RateError{Msg: fmt.Sprintf("too many builds from this client: at most %d a minute (sources already built do not count); try again in %v", per, d.Round(time.Second)+time.Second), RetryAfter: d}
	}
	return nil
}
