package custom

import (
	"fmt"
	"testing"
	"time"
)

// A client starts at most BuildsPerMinute builds in any minute, as the limit is
// documented: 30 at once, then none until the first of them is a minute old (a token
// bucket of 30 a minute let 40 through in 21 s), one more each time one leaves the
// minute; another client counts apart, and a refusal says when the next build is allowed.
func TestBuildRateWindow(t *testing.T) {
	const per = 30
	t0 := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	now := t0
	r := &buildRate{now: func() time.Time { return now }}
	allowed := func(at time.Duration, client string) int {
		now = t0.Add(at)
		n := 0
		for range 2 * per {
			if _, ok := r.take(client, per); ok {
				n++
			}
		}
		return n
	}
	if n := allowed(0, "a"); n != per {
		t.Fatalf("at 0 s: %d builds, want %d", n, per)
	}
	for _, at := range []time.Duration{time.Second, 21 * time.Second, 59*time.Second + 999*time.Millisecond} {
		if n := allowed(at, "a"); n != 0 {
			t.Errorf("at %v: %d more builds, want none before the first is a minute old", at, n)
		}
	}
	now = t0.Add(50 * time.Second)
	if d, ok := r.take("a", per); ok || d != 10*time.Second {
		t.Errorf("at 50 s: take = %v, %v; want a refusal for 10 s", d, ok)
	}
	if n := allowed(0, "b"); n != per {
		t.Errorf("another client: %d builds, want its own %d", n, per)
	}
	if n := allowed(time.Minute, "a"); n != per {
		t.Errorf("at 60 s: %d builds, want %d again", n, per)
	}
}

// The clients remembered are bounded: past maxClients, those with no build in the last
// minute are forgotten first.
func TestBuildRateBounded(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	now := t0
	r := &buildRate{now: func() time.Time { return now }}
	for i := range maxClients {
		r.take(fmt.Sprint(i), 1)
	}
	now = t0.Add(time.Minute)
	r.take("busy", 1)
	if len(r.starts) != 1 {
		t.Errorf("%d clients remembered, want only the one of the last minute", len(r.starts))
	}
	if _, ok := r.take("busy", 1); ok {
		t.Error("a client's second build in a minute passed a limit of 1")
	}
}
