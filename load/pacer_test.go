package load

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"
)

// TestPacerSchedules: each pacer's send times, the count due by a time, and the rate, on
// hand-computed schedules.
func TestPacerSchedules(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		p     Pacer
		at    map[int64]time.Duration // k → At(k)
		due   map[time.Duration]int64 // d → Due(d)
		rates map[time.Duration]float64
	}{
		{"constant 100/s", ConstantPacer{Freq: 100},
			map[int64]time.Duration{0: 0, 1: 10 * ms, 100: time.Second},
			map[time.Duration]int64{0: 0, 10 * ms: 1, 15 * ms: 2, time.Second: 100},
			map[time.Duration]float64{0: 100, time.Hour: 100}},
		// 0 to 100/s over 1 s: sent(t) = 50·t², 50 sends in the ramp, then 100/s.
		{"ramp from 0", LinearPacer{From: 0, To: 100, Over: time.Second},
			map[int64]time.Duration{0: 0, 2: 200 * ms, 8: 400 * ms, 50: time.Second, 150: 2 * time.Second},
			map[time.Duration]int64{0: 0, 200 * ms: 2, 500 * ms: 13, time.Second: 50, 2 * time.Second: 150},
			map[time.Duration]float64{0: 0, 500 * ms: 50, time.Second: 100, time.Hour: 100}},
		// 100 to 300/s over 1 s: sent(t) = 100·t + 100·t², 200 sends in the ramp.
		{"ramp from 100", LinearPacer{From: 100, To: 300, Over: time.Second},
			map[int64]time.Duration{0: 0, 75: 500 * ms, 200: time.Second, 500: 2 * time.Second},
			map[time.Duration]int64{500 * ms: 75, time.Second: 200},
			map[time.Duration]float64{500 * ms: 200}},
		// A ramp down: 300 to 100/s over 1 s, sent(t) = 300·t − 100·t².
		{"ramp down", LinearPacer{From: 300, To: 100, Over: time.Second},
			map[int64]time.Duration{125: 500 * ms, 200: time.Second, 300: 2 * time.Second},
			map[time.Duration]int64{500 * ms: 125},
			map[time.Duration]float64{500 * ms: 200}},
		{"no ramp is constant", LinearPacer{To: 50},
			map[int64]time.Duration{1: 20 * ms, 50: time.Second},
			map[time.Duration]int64{time.Second: 50},
			map[time.Duration]float64{0: 50}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, want := range tc.at {
				if got := tc.p.At(k); absDiff(got, want) > time.Microsecond {
					t.Errorf("At(%d) = %v, want %v", k, got, want)
				}
			}
			for d, want := range tc.due {
				if got := tc.p.Due(d); got != want {
					t.Errorf("Due(%v) = %d, want %d", d, got, want)
				}
			}
			for d, want := range tc.rates {
				if got := tc.p.Rate(d); math.Abs(got-want) > 1e-9 {
					t.Errorf("Rate(%v) = %g, want %g", d, got, want)
				}
			}
		})
	}
}

// TestPacerAtAndDueAgree: At never goes back, and the sends due by At(k) are the k before
// it: the schedule the senders follow and the count the reports expect are one.
func TestPacerAtAndDueAgree(t *testing.T) {
	for _, p := range []Pacer{
		ConstantPacer{Freq: 1000},
		LinearPacer{From: 0, To: 1000, Over: 300 * time.Millisecond},
		LinearPacer{From: 10, To: 5000, Over: time.Second},
		LinearPacer{From: 2000, To: 100, Over: 2 * time.Second},
	} {
		prev := time.Duration(-1)
		for k := range int64(3000) {
			at := p.At(k)
			if at < prev {
				t.Fatalf("%+v: At(%d) = %v before At(%d) = %v", p, k, at, k-1, prev)
			}
			prev = at
			if at > 0 {
				if due := p.Due(at + time.Nanosecond); due < k || due > k+1 {
					t.Fatalf("%+v: Due just after At(%d) = %v is %d, want %d", p, k, at, due, k+1)
				}
			}
		}
	}
}

func absDiff(a, b time.Duration) time.Duration {
	if a > b {
		return a - b
	}
	return b - a
}

// TestRunFollowsRamp: an open-model HTTP run with a ramp reports it, and sends no request
// ahead of the ramp's schedule (the last of n is due At(n-1) after the first).
func TestRunFollowsRamp(t *testing.T) {
	srv, _ := newServer(t, http.HandlerFunc(hello))
	o := Options{Request: Request{URL: srv.URL}, Connections: 2, Rate: 1000, Ramp: 200 * time.Millisecond, Requests: 50}
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 50 || rep.Ramp != o.Ramp {
		t.Fatalf("sent %d, ramp %v; want 50 sent, ramp %v", rep.Sent, rep.Ramp, o.Ramp)
	}
	if last := newPacer(o.Rate, o.Ramp).At(49); rep.Elapsed < last {
		t.Errorf("50 requests in %v: ahead of the ramp, whose 50th is due at %v", rep.Elapsed, last)
	}
}

// ExampleLinearPacer shows a ramp's schedule: from 0 to 100 sends per second over a
// second, then 100 per second.
func ExampleLinearPacer() {
	p := LinearPacer{From: 0, To: 100, Over: time.Second}
	for _, k := range []int64{1, 8, 50, 150} {
		fmt.Printf("send %d at %v\n", k, p.At(k).Round(time.Millisecond))
	}
	fmt.Println("due in the first 500ms:", p.Due(500*time.Millisecond))
	// Output:
	// send 1 at 141ms
	// send 8 at 400ms
	// send 50 at 1s
	// send 150 at 2s
	// due in the first 500ms: 13
}
