package custom

import (
	"context"
	"os/exec"
	"time"
)

// runGate counts the measured runs in flight, for the warm-up to keep out of their way.
// The zero value has none in flight.
type runGate struct {
	runs    int
	changed chan struct{} // closed and replaced at each change of runs (under Builder.mu)
	warming bool
}

// RunStarted tells the builder that a measured run has started: the cache warm-up does not
// start, or stops where it is, until every run started has ended (RunEnded). It is safe
// for concurrent use.
func (b *Builder) RunStarted() { b.addRuns(1) }

// RunEnded tells the builder that a measured run RunStarted announced has ended.
func (b *Builder) RunEnded() { b.addRuns(-1) }

func (b *Builder) addRuns(d int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gate.runs = max(0, b.gate.runs+d)
	if b.gate.changed != nil {
		close(b.gate.changed)
		b.gate.changed = nil
	}
}

// Warming reports whether the cache warm-up (Warm) is going, paused for runs included.
func (b *Builder) Warming() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gate.warming
}

// runsNow returns the runs in flight and a channel closed at their next change.
func (b *Builder) runsNow() (int, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gate.changed == nil {
		b.gate.changed = make(chan struct{})
	}
	return b.gate.runs, b.gate.changed
}

func (b *Builder) setWarming(on bool) {
	b.mu.Lock()
	b.gate.warming = on
	b.mu.Unlock()
}

// waitNoRuns returns once no run is in flight, or with ctx's error.
func (b *Builder) waitNoRuns(ctx context.Context) error {
	for {
		n, changed := b.runsNow()
		if n == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// pauseForRuns watches the runs in flight while cmd, a warm-up build, runs: it stops cmd's
// process group while any run goes on and continues it once none does. The build's time
// limit counts only the time it may run: when budget is spent, it calls expire. It returns
// when done is closed.
func (b *Builder) pauseForRuns(cmd *exec.Cmd, budget time.Duration, expire func(), done <-chan struct{}) {
	timer := time.NewTimer(budget)
	defer timer.Stop()
	since, paused := time.Now(), false
	for {
		n, changed := b.runsNow()
		switch {
		case n > 0 && !paused:
			timer.Stop()
			budget -= time.Since(since)
			paused = stopGroup(cmd) == nil
		case n == 0 && paused:
			_ = continueGroup(cmd)
			paused, since = false, time.Now()
			timer.Reset(max(budget, 0))
		}
		select {
		case <-changed:
		case <-timer.C:
			expire()
			if paused {
				_ = continueGroup(cmd)
			}
			return
		case <-done:
			if paused {
				_ = continueGroup(cmd)
			}
			return
		}
	}
}
