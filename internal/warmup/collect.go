package warmup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
)

// Defaults and bounds of a collection.
const (
	// DefaultSamples is the length of a series: as long as Barrett et al.'s 2,000
	// in-process iterations.
	DefaultSamples = 2000
	// DefaultBudget bounds the time of one execution's calls: the samples stop there even
	// when fewer than asked ran (CPython's fib_rec(20) takes milliseconds a call).
	DefaultBudget = 20 * time.Second
	// MaxBudget bounds Budget.
	MaxBudget = 5 * time.Minute
	// MaxGroup bounds the calls of one sample.
	MaxGroup = 1_000_000
	// maxChunk is the most samples one request to a CallTimer asks for: its answer stays
	// a line of a few kilobytes.
	maxChunk = 1000
)

// Collection says what one execution collects, its numbers checked already (against
// runner.Bounds, the one table). The zero value of a field means its default; a negative
// Budget means none (the samples run to their count, within the execution's time limit).
type Collection struct {
	// Samples is how many samples to time (DefaultSamples), each of Group calls (1).
	Samples int `json:"samples,omitempty"`
	Group   int `json:"group,omitempty"`
	// Budget stops the samples once the calls have lasted this long (DefaultBudget).
	Budget time.Duration `json:"budget_ns,omitempty"`
}

// WithDefaults fills the zero fields with their defaults.
func (c Collection) WithDefaults() Collection {
	if c.Samples == 0 {
		c.Samples = DefaultSamples
	}
	if c.Group == 0 {
		c.Group = 1
	}
	if c.Budget == 0 {
		c.Budget = DefaultBudget
	}
	return c
}

// Series is one execution's calls as an engine ran them: the times of its samples in the
// order they ran, and how they were taken.
type Series struct {
	// Times are the samples' times in ns per call (a sample's time divided by Group).
	Times []float64 `json:"times_ns"`
	// Group is the number of calls each sample timed.
	Group int `json:"group"`
	// Timer says how the samples were timed (engine.TimedPerCall, TimedPerRequest,
	// TimedByHost).
	Timer string `json:"timer"`
	// Setup is the engine's load, before the first call: Load's, or the runtime's when it
	// loads the kernel at the series' first request (engine.TimedCalls.Setup).
	Setup engine.Setup `json:"setup"`
	// Version is the runtime's version line, when the engine reports one.
	Version string `json:"version,omitempty"`
	// Stopped says why the samples stopped: "samples" (all ran) or "budget".
	Stopped string `json:"stopped,omitempty"`
	// Failure says why the execution has no series: a load error, a wrong value, a stack
	// overflow, a crash of the worker, a time limit.
	Failure string `json:"failure,omitempty"`
}

// Collect loads e and times the kernel's calls from the first, one sample of c.Group
// calls at a time, until c.Samples have run or c.Budget has passed: inside the runtime
// when e is an engine.CallTimer, else by this process's monotonic clock around each
// sample (engine.Batcher's loop when e has one). Every value is checked against the
// kernel's expected one; a failure is in Series.Failure. Call it in a fresh process: its
// first call is the process's first.
func Collect(ctx context.Context, e engine.Engine, k *kernels.Kernel, args []int, c Collection) Series {
	c = c.WithDefaults()
	s := Series{Group: c.Group, Stopped: "samples"}
	setup, err := e.Load(ctx)
	if err != nil {
		s.Failure = fmt.Sprintf("load: %v", err)
		return s
	}
	defer e.Close(ctx)
	s.Setup = setup
	if v, ok := e.(engine.Versioner); ok {
		s.Version = v.Version()
	}
	var want int64
	check := k.Expected != nil
	if check {
		want = k.Expected(args)
	}
	// verify checks a run of calls: its first value, and the sum of all of them.
	verify := func(first, sum int64, calls int) error {
		if !check {
			return nil
		}
		if first != want || sum != want*int64(calls) {
			return fmt.Errorf("%s returned %d (sum %d over %d calls), want %d each: a wrong result is never a time", k.Label(args), first, sum, calls, want)
		}
		return nil
	}
	ct, selfTimed := e.(engine.CallTimer)
	batcher, batches := e.(engine.Batcher)
	s.Timer = engine.TimedByHost
	perCall := float64(c.Group)
	start := time.Now()
	chunk := 1
	for len(s.Times) < c.Samples {
		if c.Budget > 0 && time.Since(start) >= c.Budget {
			s.Stopped = "budget"
			break
		}
		if selfTimed {
			n := min(chunk, c.Samples-len(s.Times))
			tc, err := ct.RunTimedCalls(ctx, k, args, n, c.Group)
			if err == nil {
				err = verify(tc.First, tc.Sum, n*c.Group)
			}
			if err != nil {
				return failed(s, err)
			}
			s.Timer = tc.How
			if tc.Setup != nil {
				// The runtime loaded the kernel at the first request (a browser's worker).
				s.Setup = *tc.Setup
			}
			times := tc.Times
			for _, d := range times {
				s.Times = append(s.Times, max(float64(d), 1)/perCall)
			}
			// Twice the samples each time, within a tenth of the budget left at the pace
			// of the last ones, so that the budget is kept and the pipe is seldom crossed.
			chunk = min(2*chunk, maxChunk)
			if pace := float64(sumDur(times)) / float64(len(times)); pace > 0 {
				left := float64(c.Budget-time.Since(start)) / 10
				chunk = max(1, min(chunk, int(left/pace)))
			}
			continue
		}
		var first, sum int64
		t0 := time.Now()
		if batches {
			first, sum, err = batcher.RunBatch(ctx, k, args, c.Group)
		} else {
			first, err = e.Run(ctx, k, args)
			if err == nil {
				sum, err = engine.RunRest(ctx, e, k, args, first, c.Group)
			}
		}
		d := time.Since(t0)
		if err == nil {
			err = verify(first, sum, c.Group)
		}
		if err != nil {
			return failed(s, err)
		}
		s.Times = append(s.Times, max(float64(d), 1)/perCall)
	}
	return s
}

// failed records why the series ended, the way the measurements say it.
func failed(s Series, err error) Series {
	s.Failure = err.Error()
	if errors.Is(err, engine.ErrStackOverflow) {
		s.Failure = measure.FailureStackOverflow + ": " + err.Error()
	}
	return s
}

func sumDur(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}
