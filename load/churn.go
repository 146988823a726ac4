package load

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// churn runs the churn scenario from start: users log in at the pacer's times, each on a
// connection of its own, wait for their first event (the chat's welcome, Centrifugo's connect
// reply) and log out, at most LoginConcurrency at once. A login's latency runs from when it
// was due to its first event, so that a server that falls behind is charged for the wait it
// causes.
func (s *scenario) churn(ctx context.Context, start time.Time) *Report {
	o := s.o
	s.setPhase("run")
	m := NewMetrics()
	var mu sync.Mutex // m
	var wg sync.WaitGroup
	gate := make(chan struct{}, o.loginConcurrency())
	pacer := newPacer(o.Rate, o.Ramp)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
logins:
	for k := range len(s.sendTimes) {
		at := pacer.At(int64(k))
		due := start.Add(at)
		if o.Duration > 0 && at >= o.Duration || !waitFor(ctx, timer, due) {
			break
		}
		select {
		case gate <- struct{}{}:
		case <-ctx.Done():
			break logins
		}
		n := s.nodes[k%len(s.nodes)]
		wg.Go(func() {
			defer func() { <-gate }()
			res := Result{Intended: due, Start: time.Now()}
			welcomed, err := s.churnOne(ctx, n, fmt.Sprintf("lt%sc%d", s.run, k))
			res.Latency, res.Service, res.Err = welcomed.Sub(due), welcomed.Sub(res.Start), err
			mu.Lock()
			m.Add(&res, DefaultLateAfter)
			mu.Unlock()
			s.sent.Add(1)
			if err != nil {
				s.sendErrs.Add(1)
			}
		})
	}
	wg.Wait()
	rep := &Report{Scenario: o.Scenario, Target: s.targetList(), Method: "log in over " + o.Transport + ", log out at the first event",
		Model: "open", Connections: o.loginConcurrency(), Rate: o.Rate, Ramp: o.Ramp, Requests: o.Messages, Duration: o.Duration,
		GOMAXPROCS: runtime.GOMAXPROCS(0), Started: start}
	rep.fill(m, time.Since(start))
	return rep
}

// churnOne logs nick in at n, waits at most the run's timeout for its first event, logs it out
// and says when the event came.
func (s *scenario) churnOne(ctx context.Context, n *node, nick string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	sub := &subscriber{t: n.stream, nick: nick, transport: s.o.Transport, timeout: s.timeout}
	var first time.Time
	err := sub.connect(ctx, func(event) {
		if first.IsZero() {
			first = time.Now()
			cancel()
		}
	})
	switch {
	case !first.IsZero():
		return first, nil
	case ctx.Err() != nil:
		return time.Now(), fmt.Errorf("log %s in: no first event within %s", nick, s.timeout)
	case err == nil:
		err = errStreamEnded
	}
	return time.Now(), fmt.Errorf("log %s in: %w", nick, err)
}
