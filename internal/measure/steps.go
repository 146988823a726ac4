package measure

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// measurement is one Measure in progress: what it measures, the Result it fills, and what
// its steps share (the clock's start, the longest batch so far, the calls the noise meter
// counts).
type measurement struct {
	ctx      context.Context
	e        engine.Engine
	k        *kernels.Kernel
	args     []int
	opts     Options
	progress func(phase string, done, total int)
	r        Result

	checked   bool // k has expected values (a user's kernel has none: the page compares tiers)
	target    time.Duration
	batcher   engine.Batcher
	selfTimer engine.SelfTimer

	begin   time.Time
	longest time.Duration // the longest batch so far, what the budget judges by
	calls   int           // made since the noise meter started
	called  bool          // the first call is made
}

func newMeasurement(ctx context.Context, e engine.Engine, k *kernels.Kernel, args []int, opts Options, progress func(string, int, int)) *measurement {
	m := &measurement{
		ctx: ctx, e: e, k: k, args: args, opts: opts, progress: progress,
		checked: k.Expected != nil,
		target:  opts.SampleTarget(),
		begin:   now(),
		r: Result{
			Kernel:   k.Name,
			Args:     append([]int(nil), args...),
			Engine:   e.Name(),
			Runs:     opts.Runs,
			Warmup:   opts.Warmup,
			Expected: expected(k, args),
		},
	}
	m.batcher, _ = e.(engine.Batcher)
	m.selfTimer, _ = e.(engine.SelfTimer)
	return m
}

// run goes through the steps in order, stopping at the first that fails (its failure is
// in m.r).
func (m *measurement) run() {
	if !m.load() {
		return
	}
	defer m.e.Close(context.WithoutCancel(m.ctx))
	collect() // the loader's garbage, as testing.B collects before a benchmark's first run
	if !m.warmup() {
		return
	}
	meter := startNoise()
	m.calls = 0
	reps, firstSample, ok := m.calibrate()
	if !ok {
		return
	}
	// The warm-up's and calibration's garbage, as testing.B collects before each run: the
	// timed samples start from a collected heap, at the collector's steady pace.
	collect()
	samples, ok := m.sample(reps, firstSample)
	if !ok {
		return
	}
	m.r.Noise = meter.stop(m.calls)
	m.r.Samples = samples
	m.r.Runs = len(samples)
	m.r.Min, m.r.Median, m.r.Max, m.r.CI = Summarize(samples)
}

// load is the load step: the engine's Load (cold when Options.Cold asks an engine with a
// cache), its setup times, and its runtime's version.
func (m *measurement) load() bool {
	m.progress(PhaseLoad, 0, 1)
	if c, ok := m.e.(engine.ColdStarter); ok && m.opts.Cold {
		c.DisableCache()
	}
	setup, err := m.e.Load(m.ctx)
	m.r.Setup = setup
	if err != nil {
		m.r.Failure = fmt.Sprintf("load failed: %v", err)
		return false
	}
	if v, ok := m.e.(engine.Versioner); ok {
		m.r.Runtime = v.Version()
	}
	m.progress(PhaseLoad, 1, 1)
	return true
}

// firstCall is the first-call step: the very first call, timed alone (Result.First), its
// value the cell's (Result.Value), and the expected one for a kernel without a catalogue
// value. It is the warm-up's first call, or without a warm-up calibration's first batch.
func (m *measurement) firstCall() (time.Duration, bool) {
	first, sum, d, err := m.call(1)
	m.called = true
	m.r.First = d
	// The cell's value is the very first call's, whatever k turns out to be: a kernel
	// without an expected value (a user's) is compared across engines by it.
	m.r.Value = first
	if !m.checked && err == nil {
		m.r.Expected = first
	}
	return d, m.check(first, sum, 1, err)
}

// batch times reps calls together (after the first call) and checks them.
func (m *measurement) batch(reps int) (time.Duration, bool) {
	first, sum, d, err := m.call(reps)
	return d, m.check(first, sum, reps, err)
}

// call runs reps calls the fastest way the engine offers and times them: the engine's
// own clock (engine.SelfTimer), one batch (engine.Batcher), or Run in a loop.
func (m *measurement) call(reps int) (first, sum int64, d time.Duration, err error) {
	var selfTimed time.Duration
	start := now()
	switch {
	case m.selfTimer != nil:
		first, sum, selfTimed, err = m.selfTimer.RunTimedBatch(m.ctx, m.k, m.args, reps)
	case m.batcher != nil:
		first, sum, err = m.batcher.RunBatch(m.ctx, m.k, m.args, reps)
	default:
		first, err = m.e.Run(m.ctx, m.k, m.args)
		sum = first
		for i := 1; i < reps && err == nil; i++ {
			var v int64
			v, err = m.e.Run(m.ctx, m.k, m.args)
			sum += v
		}
	}
	d = now().Sub(start)
	m.calls += reps
	if m.selfTimer != nil && err == nil {
		d = selfTimed
	}
	m.longest = max(m.longest, d)
	return first, sum, d, err
}

// check is the check step of every batch: an error becomes the cell's failure (a stack
// overflow by its name), and so does a first value other than the expected one or a sum
// of the reps values other than reps times it.
func (m *measurement) check(first, sum int64, reps int, err error) bool {
	switch {
	case errors.Is(err, engine.ErrStackOverflow):
		m.r.Failure = FailureStackOverflow
	case err != nil:
		m.r.Failure = err.Error()
	case !m.checked:
	case first != m.r.Expected:
		m.r.Value = first
		m.r.Failure = fmt.Sprintf("wrong result: got %d, want %d", first, m.r.Expected)
	case sum != int64(reps)*m.r.Expected:
		m.r.Failure = fmt.Sprintf("wrong result: the %d calls of a sample sum to %d, want %d × %d", reps, sum, reps, m.r.Expected)
	}
	return m.r.Failure == ""
}

// warmup is the warm-up step: the first call and Options.Warmup-1 more, one at a time,
// then untimed batches until the warm-up has lasted Options.WarmupTarget.
func (m *measurement) warmup() bool {
	m.progress(PhaseWarmup, 0, m.opts.Warmup)
	m.r.Warmup = 0
	warmStart := now()
	for i := range m.opts.Warmup {
		if !checkCtx(m.ctx, &m.r) {
			return false
		}
		if i > 0 && !m.fits() {
			break
		}
		if !m.warmupCall() {
			return false
		}
		m.r.Warmup++
		m.progress(PhaseWarmup, i+1, m.opts.Warmup)
	}
	if !m.warmFor(warmStart, m.opts.WarmupTarget()) {
		return false
	}
	if m.r.Warmup > 0 {
		m.r.WarmedUp = now().Sub(warmStart)
	}
	return true
}

// warmupCall makes one counted warm-up call: the first call, or one more.
func (m *measurement) warmupCall() bool {
	if !m.called {
		_, ok := m.firstCall()
		return ok
	}
	_, ok := m.batch(1)
	return ok
}

// warmFor goes on warming up until the warm-up has lasted d: a new process (a worker, a Web
// Worker) runs its first hundreds of milliseconds slower than later, as the first of go
// test -bench -count runs does, and a median of samples taken then would be too. Its
// batches grow toward the sample minimum, so that a nanosecond call's warm-up is calls,
// not clock reads; a clock that does not move (a test's) ends it. Under a budget it leaves
// the time the samples likely take.
func (m *measurement) warmFor(start time.Time, d time.Duration) bool {
	for reps := 1; now().Sub(start) < d; {
		if !checkCtx(m.ctx, &m.r) {
			return false
		}
		if !m.leavesRoomForSamples() {
			break
		}
		took, ok := m.batch(reps)
		if !ok {
			return false
		}
		if took <= 0 {
			break
		}
		reps = grow(reps, took, m.target)
	}
	return true
}

// calibrate is the calibration step: k grows until a batch lasts the sample minimum, as
// testing.B grows b.N. The last batch, at the k kept, is the first sample.
func (m *measurement) calibrate() (reps int, firstSample float64, ok bool) {
	reps = 1
	m.progress(PhaseCalibrate, 0, 1)
	for {
		if !checkCtx(m.ctx, &m.r) {
			return 0, 0, false
		}
		var d time.Duration
		if !m.called {
			d, ok = m.firstCall()
		} else {
			d, ok = m.batch(reps)
		}
		if !ok {
			return 0, 0, false
		}
		next := grow(reps, d, m.target)
		if next == reps || !fitsFor(m.opts.Budget, now().Sub(m.begin), d, reps, next) {
			m.r.Calls = reps
			m.progress(PhaseCalibrate, 1, 1)
			return reps, perCall(d, reps), true
		}
		reps = next
	}
}

// sample is the sampling step: Options.Runs samples of reps calls, the first of them
// calibration's last batch, each its time per call. A sample under half the minimum (the
// calls got faster than calibration saw them) grows k and starts the samples over, at most
// MaxRestarts times.
func (m *measurement) sample(reps int, firstSample float64) ([]float64, bool) {
	samples := []float64{firstSample}
	m.progress(PhaseRun, len(samples), m.opts.Runs)
	restarts := 0
	for len(samples) < m.opts.Runs {
		if !checkCtx(m.ctx, &m.r) {
			return nil, false
		}
		if !m.fits() {
			break
		}
		d, ok := m.batch(reps)
		if !ok {
			return nil, false
		}
		if next := grow(reps, d, m.target); m.startsOver(d, reps, next, restarts) {
			// A sample this short times the clock and the moment more than the kernel
			// (its first calls paid for fresh memory, or a JIT's later tier took over): k
			// grows from its pace, as testing.B runs again until a run lasts -benchtime.
			reps, m.r.Calls = next, next
			samples = samples[:0]
			restarts++
			m.progress(PhaseRun, 0, m.opts.Runs)
			continue
		}
		samples = append(samples, perCall(d, reps))
		m.progress(PhaseRun, len(samples), m.opts.Runs)
	}
	return samples, true
}

// startsOver says whether a sample of reps calls that took d starts the samples over at
// next calls per sample, after done restarts: it lasted under half the minimum, the restarts
// are not spent, and the larger samples likely fit the budget.
func (m *measurement) startsOver(d time.Duration, reps, next, done int) bool {
	return d < m.target/2 && done < MaxRestarts && next > reps && fitsFor(m.opts.Budget, now().Sub(m.begin), d, reps, next)
}

// fits says whether one more batch is likely to end within the budget.
func (m *measurement) fits() bool {
	return m.opts.Budget <= 0 || now().Sub(m.begin)+m.longest <= m.opts.Budget
}

// leavesRoomForSamples says whether one more warm-up batch likely leaves the budget the
// time the samples take.
func (m *measurement) leavesRoomForSamples() bool {
	samples := time.Duration(m.opts.Runs) * max(m.target, m.longest)
	return m.opts.Budget <= 0 || now().Sub(m.begin)+m.longest+samples <= m.opts.Budget
}
