// Package measure is the harness around every engine: warm-up, N timed runs with a
// monotonic clock around the call only, the result checked against the catalogue, and
// min / median / max. A failure is a result, never a time.
package measure

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// Defaults used when Options leave a field at zero.
const (
	DefaultRuns   = 5
	DefaultWarmup = 1
)

// Progress phases, in the order a measurement goes through them.
const (
	PhaseLoad   = "load"
	PhaseWarmup = "warmup"
	PhaseRun    = "run"
)

// FailureStackOverflow is the Failure of a run that exhausted its engine's stack.
const FailureStackOverflow = "stack overflow"

// Options say how many runs make one measurement. Runs and Warmup are counts taken as
// given (Warmup 0 means no warm-up), except that Options with both at zero mean the
// defaults: the zero value is ready to use.
type Options struct {
	// Runs is the number of timed runs.
	Runs int `json:"runs"`
	// Warmup is the number of untimed runs before them; 0 means none.
	Warmup int `json:"warmup"`
	// Budget, when set, is the time the whole measurement should fit in, loading
	// included: a run that would not fit (judged by the longest run so far) is skipped,
	// warm-up runs first, then timed runs after the first. Result.Runs and Result.Warmup
	// say how many ran. Zero means no budget: every run runs.
	Budget time.Duration `json:"budget_ns,omitempty"`
}

// Defaults returns the usual numbers: DefaultRuns timed runs after DefaultWarmup warm-up.
func Defaults() Options { return Options{Runs: DefaultRuns, Warmup: DefaultWarmup} }

// WithDefaults returns the counts Measure uses: Defaults() (Budget kept) when Runs and
// Warmup are both zero; otherwise o itself, with at least one timed run and no negative
// warm-up.
func (o Options) WithDefaults() Options {
	if o.Runs == 0 && o.Warmup == 0 {
		d := Defaults()
		d.Budget = o.Budget
		return d
	}
	o.Runs = max(o.Runs, 1)
	o.Warmup = max(o.Warmup, 0)
	return o
}

// Result is one cell of a report: one kernel with its arguments on one engine.
type Result struct {
	Kernel   string `json:"kernel"`
	Args     []int  `json:"args"`
	Engine   string `json:"engine"`
	Runs     int    `json:"runs"`
	Warmup   int    `json:"warmup"`
	Value    int64  `json:"value"`
	Expected int64  `json:"expected"`
	// Samples are the timed runs, in the order they ran.
	Samples []time.Duration `json:"samples_ns,omitempty"`
	Min     time.Duration   `json:"min_ns"`
	Median  time.Duration   `json:"median_ns"`
	Max     time.Duration   `json:"max_ns"`
	Setup   engine.Setup    `json:"setup"`
	// Failure, when not empty, is what happened instead of a time: "stack overflow",
	// "timed out after 30s", "crashed: <reason>", "wrong result: got X, want Y".
	Failure string `json:"failure,omitempty"`
}

// Failed reports whether the cell holds a failure rather than times.
func (r Result) Failed() bool { return r.Failure != "" }

// Label renders the cell's call as the articles write it: "fib_rec(40)".
func (r Result) Label() string {
	k := kernels.Kernel{Name: r.Kernel}
	return k.Label(r.Args)
}

// Measure loads the engine once, runs the kernel opts.Warmup times untimed and opts.Runs
// times timed, checking every value against k.Expected, and closes the engine. Arguments
// must already fit k.Params (k.Check). onProgress, if not nil, is called before and after
// each step with the phase ("load", "warmup", "run") and the steps done of the phase's total.
//
// Everything that goes wrong is reported in Result.Failure, with no times: a load error,
// a run error (engine.ErrStackOverflow becomes "stack overflow"), a wrong value, or a
// cancelled ctx.
func Measure(ctx context.Context, e engine.Engine, k *kernels.Kernel, args []int, opts Options, onProgress func(phase string, done, total int)) Result {
	opts = opts.WithDefaults()
	progress := func(phase string, done, total int) {
		if onProgress != nil {
			onProgress(phase, done, total)
		}
	}
	r := Result{
		Kernel:   k.Name,
		Args:     append([]int(nil), args...),
		Engine:   e.Name(),
		Runs:     opts.Runs,
		Warmup:   opts.Warmup,
		Expected: expected(k, args),
	}
	checked := k.Expected != nil // a user's kernel (package custom) has none: the page compares tiers

	begin := now()
	var longest time.Duration
	// fits says whether one more run is likely to end within the budget.
	fits := func() bool {
		return opts.Budget <= 0 || now().Sub(begin)+longest <= opts.Budget
	}

	progress(PhaseLoad, 0, 1)
	setup, err := e.Load(ctx)
	r.Setup = setup
	if err != nil {
		r.Failure = fmt.Sprintf("load failed: %v", err)
		return r
	}
	defer e.Close(context.WithoutCancel(ctx))
	progress(PhaseLoad, 1, 1)

	run := func() (time.Duration, bool) {
		start := now()
		v, err := e.Run(ctx, k, args)
		d := now().Sub(start)
		longest = max(longest, d)
		r.Value = v
		switch {
		case errors.Is(err, engine.ErrStackOverflow):
			r.Failure = FailureStackOverflow
		case err != nil:
			r.Failure = err.Error()
		case !checked:
			r.Expected = v
		case v != r.Expected:
			r.Failure = fmt.Sprintf("wrong result: got %d, want %d", v, r.Expected)
		}
		return d, r.Failure == ""
	}

	progress(PhaseWarmup, 0, opts.Warmup)
	r.Warmup = 0
	for i := range opts.Warmup {
		if !checkCtx(ctx, &r) {
			return r
		}
		if i > 0 && !fits() {
			break
		}
		if _, ok := run(); !ok {
			return r
		}
		r.Warmup++
		progress(PhaseWarmup, i+1, opts.Warmup)
	}

	samples := make([]time.Duration, 0, opts.Runs)
	progress(PhaseRun, 0, opts.Runs)
	for i := range opts.Runs {
		if !checkCtx(ctx, &r) {
			return r
		}
		if i > 0 && !fits() {
			break
		}
		d, ok := run()
		if !ok {
			return r
		}
		samples = append(samples, d)
		progress(PhaseRun, i+1, opts.Runs)
	}
	r.Samples = samples
	r.Runs = len(samples)
	r.Min, r.Median, r.Max = Stats(samples)
	return r
}

// now is the clock; tests replace it to make budgets deterministic.
var now = time.Now

func checkCtx(ctx context.Context, r *Result) bool {
	if err := ctx.Err(); err != nil {
		r.Failure = fmt.Sprintf("cancelled: %v", err)
		return false
	}
	return true
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
