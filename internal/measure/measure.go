// Package measure is the harness around every engine: the first call timed alone, warm-up
// (its calls, and more until it has lasted Options.WarmupTime), then N samples of k calls
// each (k grown until a sample lasts Options.MinSample, as testing.B grows b.N, and grown
// again with the samples started over when one lasts under half of it; a garbage
// collection before the warm-up and before the samples, as testing.B collects before each
// run) timed with a monotonic clock around the sample only, every call checked against the
// catalogue, and per call the min / median / max with the median's 95% confidence
// interval, beside the machine's load while the samples ran. A failure is a result, never
// a time.
package measure

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// Defaults used when Options leave a field at zero.
const (
	DefaultRuns   = 10
	DefaultWarmup = 1
	// DefaultMinSample is how long a sample lasts at least: calls shorter than it are
	// repeated k times within one sample, k grown until the sample lasts this long.
	DefaultMinSample = 10 * time.Millisecond
	// MaxCalls bounds the calls of one sample, as testing.B bounds b.N.
	MaxCalls = 1_000_000_000
	// DefaultWarmupTime is how long a warm-up lasts at least (Options.WarmupTime): a new
	// process runs its first hundreds of milliseconds slower than later (docs/VALIDATION.md
	// § Kernels: the harness against go test -bench), and the samples should not.
	DefaultWarmupTime = 500 * time.Millisecond
	// MaxRestarts bounds how often the samples start over with a larger k because a
	// sample lasted under half the sample minimum (the calls got faster after calibration).
	MaxRestarts = 3
	// GrowMargin is how far past the sample minimum calibration aims its next k (20%), and
	// MaxGrowth how many times k grows at most from one batch to the next, as testing.B
	// predicts b.N.
	GrowMargin = 1.2
	MaxGrowth  = 100
)

// Progress phases, in the order a measurement goes through them.
const (
	PhaseLoad      = "load"
	PhaseWarmup    = "warmup"
	PhaseCalibrate = "calibrate"
	PhaseRun       = "run"
)

// FailureStackOverflow is the Failure of a run that exhausted its engine's stack.
const FailureStackOverflow = "stack overflow"

// Options say how many runs make one measurement. A zero field means its default
// (DefaultRuns, DefaultWarmupTime, DefaultMinSample, no budget); a negative duration
// means none (no minimum warm-up time, one call per sample). Warmup is a count whose zero
// is a value, none, except in the zero Options, which mean the defaults: the zero value is
// ready to use. What a person types (0 for none) is turned into these by runner.Input.
type Options struct {
	// Runs is the number of timed samples.
	Runs int `json:"runs"`
	// Warmup is the number of untimed calls before them; 0 means none.
	Warmup int `json:"warmup"`
	// WarmupTime is how long a warm-up (Warmup of 1 or more) lasts at least: after its
	// Warmup calls, untimed batches of calls (grown toward the sample minimum) go on until
	// it has. Zero means DefaultWarmupTime; a negative value means no minimum (the Warmup
	// calls only).
	WarmupTime time.Duration `json:"warmup_time_ns,omitempty"`
	// MinSample is how long one sample lasts at least: a call shorter than it is repeated
	// k times in each sample (k found before the samples, as testing.B finds b.N) and the
	// sample's time divided by k. Zero means DefaultMinSample; a negative value means one
	// call per sample.
	MinSample time.Duration `json:"min_sample_ns,omitempty"`
	// Cold asks an engine with a compilation cache (engine.ColdStarter: wazero's compiler)
	// to compile from scratch, so that Setup.Compile is a cold start; engines without one
	// are unaffected.
	Cold bool `json:"cold,omitempty"`
	// Budget, when set, is the time the whole measurement should fit in, loading
	// included: a run that would not fit (judged by the longest run so far) is skipped,
	// warm-up runs first, then timed runs after the first. Result.Runs and Result.Warmup
	// say how many ran. Zero means no budget: every run runs.
	Budget time.Duration `json:"budget_ns,omitempty"`
}

// Defaults returns the usual numbers: DefaultRuns timed runs after DefaultWarmup warm-up.
func Defaults() Options { return Options{Runs: DefaultRuns, Warmup: DefaultWarmup} }

// WithDefaults returns the counts Measure uses: DefaultRuns for a zero Runs, DefaultWarmup
// as well when Warmup is zero too (the zero Options); no negative warm-up.
func (o Options) WithDefaults() Options {
	if o.Runs <= 0 {
		if o.Warmup == 0 {
			o.Warmup = DefaultWarmup
		}
		o.Runs = DefaultRuns
	}
	o.Warmup = max(o.Warmup, 0)
	return o
}

// SampleTarget is the time a sample lasts at least under these options: MinSample,
// DefaultMinSample for zero, and zero (one call per sample) for a negative MinSample.
func (o Options) SampleTarget() time.Duration {
	switch {
	case o.MinSample == 0:
		return DefaultMinSample
	case o.MinSample < 0:
		return 0
	}
	return o.MinSample
}

// WarmupTarget is how long a warm-up lasts at least under these options: WarmupTime,
// DefaultWarmupTime for zero, and zero (the Warmup calls only) for a negative WarmupTime
// or no warm-up at all.
func (o Options) WarmupTarget() time.Duration {
	switch {
	case o.Warmup <= 0 || o.WarmupTime < 0:
		return 0
	case o.WarmupTime == 0:
		return DefaultWarmupTime
	}
	return o.WarmupTime
}

// Result is one cell of a report: one kernel with its arguments on one engine.
type Result struct {
	Kernel string `json:"kernel"`
	Args   []int  `json:"args"`
	Engine string `json:"engine"`
	Runs   int    `json:"runs"`
	// Warmup is the warm-up calls counted by Options.Warmup that ran (a budget may skip
	// some); WarmedUp is how long the whole warm-up lasted, with the calls that made it
	// last Options.WarmupTime.
	Warmup   int           `json:"warmup"`
	WarmedUp time.Duration `json:"warmed_up_ns,omitempty"`
	Value    int64         `json:"value"`
	Expected int64         `json:"expected"`
	// Calls is k, the calls in each sample (1 when a call lasts the sample's minimum). It
	// is found by calibration and grown, the samples started over, when a sample lasts
	// under half the minimum (calls that got faster after their first ones).
	Calls int `json:"calls"`
	// Samples are the timed samples in the order they ran, each its time divided by
	// Calls: nanoseconds per call.
	Samples []float64 `json:"samples_ns,omitempty"`
	// Min, Median and Max are of Samples, in nanoseconds per call.
	Min    float64 `json:"min_ns"`
	Median float64 `json:"median_ns"`
	Max    float64 `json:"max_ns"`
	// CI is the 95% confidence interval of the median (see Summarize). With Executions,
	// Median is their geometric mean and CI its interval over them (AcrossExecutions), and
	// Samples, Min and Max are those of all executions together.
	CI Interval `json:"ci"`
	// Executions are the worker processes that measured the cell, one summary each, in
	// the order they ran; absent for a cell measured in one process (a browser cell, a
	// run stored before they were kept).
	Executions []Execution `json:"executions,omitempty"`
	// First is the very first call, timed alone before any warm-up: the engine's
	// cold start, apart from the steady state of the samples.
	First time.Duration `json:"first_ns,omitempty"`
	Setup engine.Setup  `json:"setup"`
	// Runtime is the version line of the runtime that ran the calls, for an engine whose
	// runtime is not this Go binary's (engine.Versioner: "gcc 12.2.0", "node v20.19.2
	// (V8 …)"); empty for the others.
	Runtime string `json:"runtime,omitempty"`
	// Noise is what else the machine did while the samples ran (nil where unknown).
	Noise *Noise `json:"noise,omitempty"`
	// Failure, when not empty, is what happened instead of a time: "stack overflow",
	// "timed out after 30s", "crashed: <reason>", "wrong result: got X, want Y".
	Failure string `json:"failure,omitempty"`
	// Lost names a later execution that reached the time limit ("timed out after 30s
	// (execution 2 of 3)"): the figures are over the executions before it, which ended.
	Lost string `json:"lost,omitempty"`
}

// Failed reports whether the cell holds a failure rather than times.
func (r Result) Failed() bool { return r.Failure != "" }

// Label renders the cell's call as the articles write it: "fib_rec(40)".
func (r Result) Label() string {
	k := kernels.Kernel{Name: r.Kernel}
	return k.Label(r.Args)
}

// WideLimit is how far (as a fraction of the median) a confidence interval may reach on
// either side before its cell is flagged as spread: ±5%.
const WideLimit = 0.05

// Wide reports whether the cell's times are too spread to trust to 5%: its interval
// reaches further than WideLimit from the median on either side. A cell without an
// interval (fewer samples than a 95% interval needs, 6) is not wide: how far it spreads is
// unknown, which its "±?" says.
func (r Result) Wide() bool {
	if r.Failed() || r.Median <= 0 || !r.CI.Valid() {
		return false
	}
	return r.CI.Lo < r.Median*(1-WideLimit) || r.CI.Hi > r.Median*(1+WideLimit)
}

// SelfMeasurer is implemented by an engine that runs the whole harness itself, in another
// runtime, and returns its result: the browser engines (internal/engine/browser), whose page runs the
// kernels in a Web Worker with the page's own harness (web/src/harness.ts: the same first
// call, warm-up, calibrated samples and checks as this package's), timed with the worker's
// clock. Measure hands such an engine the whole measurement; its Result has no Noise, as
// the meter (this process tree's CPU against the machine's) would count the browser's own
// processes as the machine's other work.
type SelfMeasurer interface {
	MeasureSelf(ctx context.Context, k *kernels.Kernel, args []int, opts Options, onProgress func(phase string, done, total int)) Result
}

// Measure loads the engine once, runs the kernel opts.Warmup times untimed (and on, in
// batches, until the warm-up has lasted opts.WarmupTarget()), finds the calls per sample k
// (Options.MinSample), then takes opts.Runs samples of k calls each, checking every call
// against k.Expected (the first value of each batch, and the sum of all as a checksum),
// and closes the engine. Arguments must already fit k.Params (k.Check). onProgress, if not
// nil, is called before and after each step with the phase ("load", "warmup", "calibrate",
// "run") and the steps done of the phase's total.
//
// The steps are named (steps.go): load, first call, warm-up, calibrate, sample, each
// batch of calls checked (check). Everything that goes wrong is reported in
// Result.Failure, with no times: a load error, a run error (engine.ErrStackOverflow
// becomes "stack overflow"), a wrong value, or a cancelled ctx.
func Measure(ctx context.Context, e engine.Engine, k *kernels.Kernel, args []int, opts Options, onProgress func(phase string, done, total int)) Result {
	opts = opts.WithDefaults()
	progress := func(phase string, done, total int) {
		if onProgress != nil {
			onProgress(phase, done, total)
		}
	}
	if err := engine.Applies(e.Name(), k); err != nil {
		// Never a time for a kernel the engine has no place to run (host_call off kernels.wasm).
		return Result{Kernel: k.Name, Args: append([]int(nil), args...), Engine: e.Name(), Runs: opts.Runs, Warmup: opts.Warmup, Failure: err.Error()}
	}
	if m, ok := e.(SelfMeasurer); ok {
		return m.MeasureSelf(ctx, k, args, opts, progress)
	}
	m := newMeasurement(ctx, e, k, args, opts, progress)
	m.run()
	return m.r
}

// Warm is Measure's load and warm-up steps alone, for a reader of what the warm-up left
// behind (package explain reads a JIT's code after it): it loads e and runs the warm-up
// opts asks for, as Measure would before its samples, and leaves e loaded for the caller
// to Close. The Result says how the warm-up went (Warmup, WarmedUp, First, Failure); on a
// failure e is closed already.
func Warm(ctx context.Context, e engine.Engine, k *kernels.Kernel, args []int, opts Options) Result {
	m := newMeasurement(ctx, e, k, args, opts.WithDefaults(), func(string, int, int) {})
	if !m.load() {
		return m.r
	}
	if !m.warmup() {
		_ = e.Close(context.WithoutCancel(ctx))
	}
	return m.r
}

// collect runs a garbage collection outside every timed window, as testing.B does before
// each run of a benchmark (runtime.GC in B.runN), so that the collector's work in the
// samples is that of the kernel's own allocations, paced as under `go test -bench` (the
// worker inherits GOGC and GOMEMLIMIT from its parent, as a test binary does), and not the
// debt of what ran before. An engine in another process (engine.SelfTimer) times itself:
// for it this only collects the worker's heap, which its times do not include. Tests
// replace it to count the collections.
var collect = runtime.GC

// grow returns the calls of the next calibration batch after reps calls took d: reps
// itself when d reached the target (or k is at MaxCalls), else a prediction GrowMargin
// past the target, at most MaxGrowth times reps, as testing.B predicts b.N.
func grow(reps int, d, target time.Duration) int {
	if d >= target || reps >= MaxCalls {
		return reps
	}
	per := max(float64(d)/float64(reps), 1)
	next := int(min(GrowMargin*float64(target)/per, MaxGrowth*float64(reps), MaxCalls))
	return max(next, reps+1)
}

// fitsFor says whether a batch of next calls, after one of reps calls took d, likely ends
// within budget, elapsed being spent.
func fitsFor(budget, elapsed, d time.Duration, reps, next int) bool {
	if budget <= 0 {
		return true
	}
	predicted := time.Duration(float64(d) / float64(reps) * float64(next))
	return elapsed+predicted <= budget
}

func perCall(d time.Duration, reps int) float64 { return float64(d) / float64(reps) }

// now is the clock; tests replace it to make budgets deterministic.
var now = time.Now

func checkCtx(ctx context.Context, r *Result) bool {
	if err := ctx.Err(); err != nil {
		r.Failure = fmt.Sprintf("cancelled: %v", err)
		return false
	}
	return true
}

// Interval is a confidence interval of a median, in nanoseconds per call.
type Interval struct {
	Lo float64 `json:"lo_ns"`
	Hi float64 `json:"hi_ns"`
	// Level is the interval's confidence (0.95, or more where the order statistics give
	// no exact 95%); zero when the samples are too few for a 95% interval (fewer than 6).
	Level float64 `json:"level,omitempty"`
}

// Valid reports whether the interval exists.
func (i Interval) Valid() bool { return i.Level > 0 }

// Confidence is the level of the intervals Summarize computes.
const Confidence = 0.95

// Summarize returns the minimum, median and maximum of samples and the 95% confidence
// interval of the median: the distribution-free order-statistics interval (the sample
// values whose ranks a binomial(n, ½) distribution places around the median with at least
// 95% probability), as benchstat computes it (golang.org/x/perf/benchmath.AssumeNothing).
// It needs 6 samples; with fewer the interval is left zero.
func Summarize(samples []float64) (lo, median, hi float64, ci Interval) {
	if len(samples) == 0 {
		return 0, 0, 0, Interval{}
	}
	// NewSample sorts the values it is given: it gets a copy, so that the caller's
	// samples stay in the order they ran.
	s := slices.Clone(samples)
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(s, &benchmath.DefaultThresholds), Confidence)
	lo, hi = s[0], s[len(s)-1]
	if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) && !math.IsNaN(sum.Lo) {
		ci = Interval{Lo: sum.Lo, Hi: sum.Hi, Level: sum.Confidence}
	}
	return lo, sum.Center, hi, ci
}

// Stats returns the minimum, median and maximum of samples (zero for none). The median
// of an even count is the mean of the two middle samples.
func Stats(samples []time.Duration) (lo, median, hi time.Duration) {
	if len(samples) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return s[0], median, s[n-1]
}

// expected is k's expected value for args, or 0 when k has none.
func expected(k *kernels.Kernel, args []int) int64 {
	if k.Expected == nil {
		return 0
	}
	return k.Expected(args)
}
