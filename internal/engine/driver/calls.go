package driver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// The per-call mode of the line protocol, for the warm-up's series (package
// internal/warmup): the request
//
//	times <kernel> <samples> <group> <arg1> [<arg2>]
//
// asks the driver to make samples × group calls back to back (samples from 1 to
// MaxSamples, group from 1 to MaxReps), reading its monotonic clock between every group
// of calls, and to answer
//
//	times <first> <sum> <t1> ... <tN>
//
// with first and sum as for "ok", and the N = samples times in nanoseconds, in the order
// the samples ran; or "error <message>" as for any request. A driver without the mode
// answers "error" (too many fields, or an unknown kernel "times"); the caller then asks
// one ordinary request per sample.

// MaxSamples is the most samples one "times" request may ask for: its answer stays a line
// of a few kilobytes.
const MaxSamples = 1000

// Times is a driver's answer to CallTimes.
type Times struct {
	// First is the value of the first call; Sum the sum of every call's value.
	First, Sum int64
	// Samples are the times of the samples, measured inside the driver.
	Samples []time.Duration
}

// ErrNoTimes is returned (wrapped) by CallTimes when the driver does not serve the
// per-call mode.
var ErrNoTimes = errors.New("the driver has no per-call mode")

// CallTimes asks the driver for samples × group calls of k with args, each sample of
// group calls timed inside the driver. A driver without the mode makes it return an error
// that wraps ErrNoTimes, and stays usable.
func (p *Process) CallTimes(ctx context.Context, k *kernels.Kernel, args []int, samples, group int) (Times, error) {
	if err := k.Check(args); err != nil {
		return Times{}, fmt.Errorf("%s: %w", p.Name, err)
	}
	if samples < 1 || samples > MaxSamples {
		return Times{}, fmt.Errorf("%s: samples = %d is out of range: allowed 1 to %d", p.Name, samples, MaxSamples)
	}
	if group < 1 || group > MaxReps {
		return Times{}, fmt.Errorf("%s: group = %d is out of range: allowed 1 to %d", p.Name, group, MaxReps)
	}
	fields := []string{"times", k.Name, strconv.Itoa(samples), strconv.Itoa(group)}
	for _, a := range args {
		fields = append(fields, strconv.Itoa(a))
	}
	label := k.Label(args)
	p.mu.Lock()
	defer p.mu.Unlock()
	answer, err := p.roundTrip(ctx, strings.Join(fields, " "), label)
	if err != nil {
		var de *DriverError
		if errors.As(err, &de) && (strings.HasPrefix(de.Message, "too many fields") || strings.HasPrefix(de.Message, `unknown kernel "times"`)) {
			return Times{}, fmt.Errorf("%s: %w", p.Name, ErrNoTimes)
		}
		return Times{}, err
	}
	f := strings.Fields(answer)
	if len(f) == 3+samples && f[0] == "times" {
		t := Times{Samples: make([]time.Duration, samples)}
		first, err1 := strconv.ParseInt(f[1], 10, 64)
		sum, err2 := strconv.ParseInt(f[2], 10, 64)
		ok := err1 == nil && err2 == nil
		for i := range samples {
			ns, err := strconv.ParseInt(f[3+i], 10, 64)
			ok = ok && err == nil && ns >= 0
			t.Samples[i] = time.Duration(ns)
		}
		if ok {
			t.First, t.Sum = first, sum
			return t, nil
		}
	}
	p.stop()
	return Times{}, p.fail(fmt.Errorf("%s: %s: malformed answer %q: want \"times <first> <sum>\" and %d times in ns, or \"error <message>\"; the driver was stopped", p.Name, label, truncate(answer, 200), samples))
}

// RunTimedCalls makes samples × group calls in the driver, timed inside it one sample at a
// time (engine.CallTimer): in one "times" request when the driver serves it, else one
// request per sample. A stack overflow wraps engine.ErrStackOverflow.
func (e *Engine) RunTimedCalls(ctx context.Context, k *kernels.Kernel, args []int, samples, group int) (engine.TimedCalls, error) {
	if e.p == nil {
		return engine.TimedCalls{}, fmt.Errorf("%s: Run before Load", e.name)
	}
	if !e.noTimes {
		t, err := e.p.CallTimes(ctx, k, args, samples, group)
		switch {
		case err == nil:
			return engine.TimedCalls{First: t.First, Sum: t.Sum, Times: t.Samples, How: engine.TimedPerCall}, nil
		case !errors.Is(err, ErrNoTimes):
			return engine.TimedCalls{}, overflow(err)
		}
		e.noTimes = true
	}
	tc := engine.TimedCalls{How: engine.TimedPerRequest}
	for i := range samples {
		f, s, d, err := e.RunTimedBatch(ctx, k, args, group)
		if err != nil {
			return engine.TimedCalls{}, err
		}
		if i == 0 {
			tc.First = f
		}
		tc.Sum += s
		tc.Times = append(tc.Times, d)
	}
	return tc, nil
}

// overflow wraps engine.ErrStackOverflow around a driver's stack overflow.
func overflow(err error) error {
	if errors.Is(err, ErrStackOverflow) {
		return fmt.Errorf("%w: %w", engine.ErrStackOverflow, err)
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
