package load

import (
	"context"
	"fmt"
	"math"
	"time"
)

// A Pacer says when an open-model run sends: the intended time of each request (HTTP) or
// message (chat scenarios), counted from the start of the phase, as vegeta's Pacer does.
// Latency is measured from that intended time, so that a server that falls behind is
// charged for the wait it causes (wrk2's correction).
type Pacer interface {
	// At is the intended send time of the k-th send (k from 0) after the phase's start.
	At(k int64) time.Duration
	// Due is how many sends the pacer intends in the first d of a phase: the k with
	// At(k) < d.
	Due(d time.Duration) int64
	// Rate is the intended rate, in sends per second, at elapsed.
	Rate(elapsed time.Duration) float64
}

// ConstantPacer sends Freq times per second (wrk2 -R, vegeta's ConstantPacer).
type ConstantPacer struct {
	// Freq is the sends per second; it must be positive.
	Freq float64
}

// At is k / Freq.
func (p ConstantPacer) At(k int64) time.Duration {
	return time.Duration(float64(k) / p.Freq * float64(time.Second))
}

// Due is Freq × d, rounded up.
func (p ConstantPacer) Due(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(p.Freq * d.Seconds()))
}

// Rate is Freq.
func (p ConstantPacer) Rate(time.Duration) float64 { return p.Freq }

// LinearPacer ramps the rate linearly from From to To sends per second over Over, then
// sends at To (vegeta's LinearPacer, with an end): a run that finds the rate at which a
// server's latency turns. Over zero is ConstantPacer{To}.
type LinearPacer struct {
	// From is the rate at the start, 0 or more; To the rate at the end of the ramp and
	// after it, more than 0.
	From, To float64
	// Over is the ramp's length.
	Over time.Duration
}

// slope is the rate's growth in sends per second per second.
func (p LinearPacer) slope() float64 { return (p.To - p.From) / p.Over.Seconds() }

// rampSends is how many sends the ramp holds: the area under the rate, (From+To)/2 × Over.
func (p LinearPacer) rampSends() float64 { return (p.From + p.To) / 2 * p.Over.Seconds() }

// At solves sent(t) = k for t: within the ramp sent(t) = From·t + slope·t²/2, after it
// the ramp's sends plus To per second.
func (p LinearPacer) At(k int64) time.Duration {
	if p.Over <= 0 {
		return ConstantPacer{p.To}.At(k)
	}
	if k <= 0 {
		return 0
	}
	n := float64(k)
	if ramp := p.rampSends(); n >= ramp {
		return p.Over + time.Duration((n-ramp)/p.To*float64(time.Second))
	}
	a := p.slope()
	var t float64
	if a == 0 {
		t = n / p.From
	} else {
		// The root of a/2·t² + From·t − n = 0 that lies in the ramp, written so that it
		// stays exact as a nears 0.
		t = 2 * n / (p.From + math.Sqrt(p.From*p.From+2*a*n))
	}
	return time.Duration(t * float64(time.Second))
}

// Due is sent(d), rounded up.
func (p LinearPacer) Due(d time.Duration) int64 {
	if p.Over <= 0 {
		return ConstantPacer{p.To}.Due(d)
	}
	if d <= 0 {
		return 0
	}
	var sent float64
	if d >= p.Over {
		sent = p.rampSends() + p.To*(d-p.Over).Seconds()
	} else {
		t := d.Seconds()
		sent = p.From*t + p.slope()*t*t/2
	}
	return int64(math.Ceil(sent - 1e-9))
}

// Rate is the ramp's rate at elapsed, To after it.
func (p LinearPacer) Rate(elapsed time.Duration) float64 {
	if p.Over <= 0 || elapsed >= p.Over {
		return p.To
	}
	return p.From + p.slope()*max(elapsed, 0).Seconds()
}

// newPacer is the pacer of an open-model run at rate, ramped up from 0 over ramp when ramp
// is positive; nil for the closed model (rate 0).
func newPacer(rate float64, ramp time.Duration) Pacer {
	switch {
	case rate <= 0:
		return nil
	case ramp > 0:
		return LinearPacer{From: 0, To: rate, Over: ramp}
	}
	return ConstantPacer{Freq: rate}
}

// checkRamp is the rule both option sets follow for a ramp: never negative, and only with
// a rate to ramp up to.
func checkRamp(ramp time.Duration, rate float64) error {
	switch {
	case ramp < 0:
		return fmt.Errorf("ramp %v: must not be negative (0: the rate from the start)", ramp)
	case ramp > 0 && rate <= 0:
		return fmt.Errorf("ramp %v: needs a rate to ramp up to (-R)", ramp)
	}
	return nil
}

// waitFor waits until at, the intended time of a send, on timer (stopped, reused across
// sends). It returns false when ctx ends first.
func waitFor(ctx context.Context, timer *time.Timer, at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer.Reset(d)
	select {
	case <-ctx.Done():
		timer.Stop()
		return false
	case <-timer.C:
		return true
	}
}
