package measure

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
	_ "github.com/wasmgap/wasmgap/native"
)

// fakeEngine returns scripted values and errors, one per call, and counts its calls.
type fakeEngine struct {
	loadErr error
	setup   engine.Setup
	// results[i] is what the i-th Run returns; past the end, the last one repeats.
	results []fakeRun
	calls   int
	loaded  int
	closed  int
	// clock, when set, advances by cost on every Run (see withFakeClock), or by
	// costOf(i) on the i-th Run (from 0) when costOf is set.
	clock  *time.Time
	cost   time.Duration
	costOf func(call int) time.Duration
}

type fakeRun struct {
	value int64
	err   error
}

func (f *fakeEngine) Name() string { return "fake" }

func (f *fakeEngine) Load(context.Context) (engine.Setup, error) {
	f.loaded++
	return f.setup, f.loadErr
}

func (f *fakeEngine) Run(context.Context, *kernels.Kernel, []int) (int64, error) {
	r := f.results[min(f.calls, len(f.results)-1)]
	cost := f.cost
	if f.costOf != nil {
		cost = f.costOf(f.calls)
	}
	f.calls++
	if f.clock != nil {
		*f.clock = f.clock.Add(cost)
	}
	return r.value, r.err
}

func (f *fakeEngine) Close(context.Context) error { f.closed++; return nil }

// measureCase is one case of TestMeasure: an engine's scripted calls, the options, and
// what Measure makes of them.
type measureCase struct {
	name        string
	eng         *fakeEngine
	opts        Options
	wantFailure string
	wantCalls   int
	wantSamples int
	wantClosed  int
}

// measureCases are TestMeasure's cases, for a kernel whose expected value is want.
func measureCases(want int64) []measureCase {
	ok := fakeRun{value: want}
	// One call per sample and a warm-up of Warmup calls only, so that the calls are counted.
	oneCall := Options{MinSample: -1, WarmupTime: -1}
	return []measureCase{
		{name: "defaults", eng: &fakeEngine{results: []fakeRun{ok}}, opts: oneCall, wantCalls: 11, wantSamples: 10, wantClosed: 1},
		{name: "explicit runs and warm-up", eng: &fakeEngine{results: []fakeRun{ok}}, opts: Options{Runs: 3, Warmup: 2, MinSample: -1, WarmupTime: -1}, wantCalls: 5, wantSamples: 3, wantClosed: 1},
		{name: "no warm-up", eng: &fakeEngine{results: []fakeRun{ok}}, opts: Options{Runs: 2, Warmup: 0, MinSample: -1}, wantCalls: 2, wantSamples: 2, wantClosed: 1},
		{
			name:        "wrong value in warm-up",
			eng:         &fakeEngine{results: []fakeRun{{value: 7}}},
			opts:        oneCall,
			wantFailure: fmt.Sprintf("wrong result: got 7, want %d", want),
			wantCalls:   1, wantClosed: 1,
		},
		{
			name:        "wrong value in a timed run",
			eng:         &fakeEngine{results: []fakeRun{ok, ok, ok, {value: want + 1}}},
			opts:        oneCall,
			wantFailure: fmt.Sprintf("wrong result: got %d, want %d", want+1, want),
			wantCalls:   4, wantClosed: 1,
		},
		{
			name:        "stack overflow, wrapped",
			eng:         &fakeEngine{results: []fakeRun{{err: fmt.Errorf("call fib_it: %w", engine.ErrStackOverflow)}}},
			wantFailure: "stack overflow",
			wantCalls:   1, wantClosed: 1,
		},
		{
			name:        "other run error",
			eng:         &fakeEngine{results: []fakeRun{ok, {err: errors.New("out of memory")}}},
			wantFailure: "out of memory",
			wantCalls:   2, wantClosed: 1,
		},
		{
			name:        "load error",
			eng:         &fakeEngine{loadErr: errors.New("no module"), results: []fakeRun{ok}},
			wantFailure: "load failed: no module",
			wantCalls:   0, wantClosed: 0,
		},
	}
}

func TestMeasure(t *testing.T) {
	k, err := kernels.Lookup("fib_it")
	if err != nil {
		t.Fatal(err)
	}
	args := []int{40}
	want := k.Expected(args) // 102334155
	for _, c := range measureCases(want) {
		t.Run(c.name, func(t *testing.T) {
			var phases []string
			r := Measure(context.Background(), c.eng, k, args, c.opts, func(phase string, done, total int) {
				phases = append(phases, fmt.Sprintf("%s %d/%d", phase, done, total))
			})
			checkMeasured(t, c, r, phases, want)
			if r.Kernel != "fib_it" || r.Engine != "fake" || !reflect.DeepEqual(r.Args, args) {
				t.Errorf("cell = %s on %s %v", r.Kernel, r.Engine, r.Args)
			}
		})
	}
}

// checkMeasured checks what Measure returned for c, and the progress it reported.
func checkMeasured(t *testing.T, c measureCase, r Result, phases []string, want int64) {
	t.Helper()
	if r.Failure != c.wantFailure {
		t.Errorf("Failure = %q, want %q", r.Failure, c.wantFailure)
	}
	if c.eng.calls != c.wantCalls {
		t.Errorf("Run called %d times, want %d", c.eng.calls, c.wantCalls)
	}
	if c.eng.closed != c.wantClosed {
		t.Errorf("Close called %d times, want %d", c.eng.closed, c.wantClosed)
	}
	if c.eng.loaded != 1 {
		t.Errorf("Load called %d times, want 1", c.eng.loaded)
	}
	if len(r.Samples) != c.wantSamples {
		t.Errorf("%d samples, want %d", len(r.Samples), c.wantSamples)
	}
	if r.Failed() != (c.wantFailure != "") {
		t.Errorf("Failed() = %v", r.Failed())
	}
	if r.Failed() && (r.Median != 0 || r.Min != 0 || r.Max != 0 || r.Samples != nil) {
		t.Errorf("a failure carries times: %+v", r)
	}
	if !r.Failed() {
		if r.Value != want || r.Expected != want {
			t.Errorf("Value, Expected = %d, %d; want %d", r.Value, r.Expected, want)
		}
		if !(r.Min <= r.Median && r.Median <= r.Max) {
			t.Errorf("min %v median %v max %v out of order", r.Min, r.Median, r.Max)
		}
		if last := phases[len(phases)-1]; last != fmt.Sprintf("run %d/%d", c.wantSamples, c.wantSamples) {
			t.Errorf("last progress %q; all: %v", last, phases)
		}
	}
}

func TestMeasureCancelled(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakeEngine{results: []fakeRun{{value: k.Expected([]int{40})}}}
	r := Measure(ctx, f, k, []int{40}, Options{}, nil)
	if f.calls != 0 || r.Failure != "cancelled: context canceled" {
		t.Errorf("after cancel: %d calls, Failure %q", f.calls, r.Failure)
	}
}

func TestMeasureSetupReported(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	setup := engine.Setup{Compile: 600 * time.Millisecond, Instantiate: 3 * time.Millisecond, Cached: true}
	f := &fakeEngine{setup: setup, results: []fakeRun{{value: k.Expected([]int{10})}}}
	if r := Measure(context.Background(), f, k, []int{10}, Options{Runs: 1}, nil); r.Setup != setup {
		t.Errorf("Setup = %+v, want %+v", r.Setup, setup)
	}
}

func TestStats(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		in               []time.Duration
		lo, median, high time.Duration
	}{
		{nil, 0, 0, 0},
		{[]time.Duration{5 * ms}, 5 * ms, 5 * ms, 5 * ms},
		{[]time.Duration{9 * ms, 1 * ms, 5 * ms}, 1 * ms, 5 * ms, 9 * ms},
		{[]time.Duration{4 * ms, 1 * ms, 2 * ms, 9 * ms}, 1 * ms, 3 * ms, 9 * ms},
	} {
		in := append([]time.Duration(nil), c.in...)
		lo, median, high := Stats(in)
		if lo != c.lo || median != c.median || high != c.high {
			t.Errorf("Stats(%v) = %v %v %v, want %v %v %v", c.in, lo, median, high, c.lo, c.median, c.high)
		}
		if !reflect.DeepEqual(in, c.in) {
			t.Errorf("Stats reordered its input: %v", in)
		}
	}
}

// The native engine through the harness: every kernel at small arguments gives its
// expected value.
func TestMeasureNative(t *testing.T) {
	for _, k := range kernels.All() {
		args := smallArgs(k)
		r := Measure(context.Background(), nativeEngine(t), k, args, Options{Runs: 2}, nil)
		if r.Failed() || r.Value != r.Expected {
			t.Errorf("%s: %+v", k.Label(args), r)
		}
	}
}

// smallArgs are arguments that make every kernel quick.
func smallArgs(k *kernels.Kernel) []int {
	switch k.Name {
	case "fib_it", "fib_rec":
		return []int{20}
	case "ack", "ack_while":
		return []int{2, 5}
	}
	if len(k.Params) == 2 {
		return []int{20_100, 100}
	}
	return []int{10_000}
}

func ExampleMeasure() {
	k, _ := kernels.Lookup("ack")
	e, _ := engine.New(engine.Native)
	r := Measure(context.Background(), e, k, []int{3, 5}, Options{Runs: 3}, nil)
	fmt.Println(r.Label(), "on", r.Engine, "=", r.Value, "failed:", r.Failed(), "samples:", len(r.Samples))
	// Output: ack(3, 5) on native = 253 failed: false samples: 3
}

// withFakeClock makes Measure read a clock that only the fake engine advances.
func withFakeClock(t *testing.T) *time.Time {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now = func() time.Time { return clock }
	t.Cleanup(func() { now = time.Now })
	return &clock
}

func TestMeasureBudget(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	ok := fakeRun{value: k.Expected([]int{40})}
	s := time.Second
	for _, c := range []struct {
		name                 string
		cost, budget         time.Duration
		opts                 Options
		wantWarmup, wantRuns int
	}{
		{name: "no budget", cost: 10 * s, opts: Options{Runs: 5, Warmup: 2}, wantWarmup: 2, wantRuns: 5},
		{name: "everything fits", cost: 1 * s, budget: 27 * s, opts: Options{Runs: 5, Warmup: 2}, wantWarmup: 2, wantRuns: 5},
		// 8s a run in 27s: warm-up (8), run (16), run (24); a fourth would end at 32.
		{name: "fewer timed runs", cost: 8 * s, budget: 27 * s, opts: Options{Runs: 5, Warmup: 1}, wantWarmup: 1, wantRuns: 2},
		// 15s a run: one warm-up (15); a second would end at 30, so the timed runs start;
		// the first always runs (30), a second would end at 45.
		{name: "warm-up skipped first", cost: 15 * s, budget: 27 * s, opts: Options{Runs: 5, Warmup: 3}, wantWarmup: 1, wantRuns: 1},
		{name: "at least one timed run", cost: 40 * s, budget: 27 * s, opts: Options{Runs: 5, Warmup: 1}, wantWarmup: 1, wantRuns: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := withFakeClock(t)
			f := &fakeEngine{results: []fakeRun{ok}, clock: clock, cost: c.cost}
			opts := c.opts
			opts.Budget = c.budget
			r := Measure(context.Background(), f, k, []int{40}, opts, nil)
			if r.Failed() || r.Warmup != c.wantWarmup || r.Runs != c.wantRuns || len(r.Samples) != c.wantRuns {
				t.Errorf("warm-up %d, runs %d, samples %d, failure %q; want %d, %d", r.Warmup, r.Runs, len(r.Samples), r.Failure, c.wantWarmup, c.wantRuns)
			}
			if r.Median != float64(c.cost) || r.Calls != 1 {
				t.Errorf("median %v ns with k = %d, want %v with k = 1", r.Median, r.Calls, c.cost)
			}
		})
	}
}

// Calls shorter than the sample's minimum are repeated: k grows until a sample lasts it,
// and the time per call is the sample's divided by k.
func TestMeasureCalibrates(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	for _, c := range []struct {
		name      string
		cost      time.Duration
		minSample time.Duration
		wantK     func(int) bool
	}{
		{"short calls are batched", time.Microsecond, 10 * time.Millisecond, func(k int) bool { return k >= 10_000 && k <= 12_000*100 }},
		{"long calls stay alone", 20 * time.Millisecond, 10 * time.Millisecond, func(k int) bool { return k == 1 }},
		{"calibration off", time.Microsecond, -1, func(k int) bool { return k == 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := withFakeClock(t)
			f := &fakeEngine{results: []fakeRun{{value: k.Expected([]int{40})}}, clock: clock, cost: c.cost}
			r := Measure(context.Background(), f, k, []int{40}, Options{Runs: 10, Warmup: 1, MinSample: c.minSample}, nil)
			if r.Failed() || !c.wantK(r.Calls) || len(r.Samples) != 10 {
				t.Fatalf("k = %d, %d samples, failure %q", r.Calls, len(r.Samples), r.Failure)
			}
			if r.Median != float64(c.cost) || r.Min != float64(c.cost) || r.Max != float64(c.cost) {
				t.Errorf("min, median, max = %v, %v, %v ns per call; want %v", r.Min, r.Median, r.Max, c.cost)
			}
			if r.First != c.cost {
				t.Errorf("first call %v, want %v", r.First, c.cost)
			}
			if !r.CI.Valid() || r.CI.Lo != float64(c.cost) || r.CI.Hi != float64(c.cost) || r.Wide() {
				t.Errorf("interval %+v (wide %v) of constant samples", r.CI, r.Wide())
			}
			if calls := f.calls; calls < 1+10*r.Calls {
				t.Errorf("%d calls for 10 samples of %d", calls, r.Calls)
			}
		})
	}
}

// Calls that get faster after their first ones (fresh memory, a JIT's later tier) leave
// calibration with too small a k: a sample lasting under half the minimum makes k grow and
// the samples start over, so that every sample kept lasts the minimum.
func TestMeasureRecalibratesWhenCallsGetFaster(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	want := k.Expected([]int{40})
	for _, c := range []struct {
		name         string
		costOf       func(int) time.Duration
		wantRestarts int
	}{
		// Five cold calls of 12 ms (the warm-up, calibration's, three samples), then 1 ms.
		{"cold start", func(i int) time.Duration {
			if i < 5 {
				return 12 * time.Millisecond
			}
			return time.Millisecond
		}, 1},
		// Ever faster calls (halving every 4 calls, down to 1 µs): the samples start over
		// MaxRestarts times, then stay.
		{"always faster", func(i int) time.Duration { return max(12*time.Millisecond>>min(i/4, 30), time.Microsecond) }, MaxRestarts},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := withFakeClock(t)
			f := &fakeEngine{results: []fakeRun{{value: want}}, clock: clock, costOf: c.costOf}
			// The samples start with calibration's last batch (run 1/10); each start over is
			// reported as run 0/10. The warm-up is its one call, so that the cold calls
			// reach calibration.
			var restarts int
			r := Measure(context.Background(), f, k, []int{40}, Options{Runs: 10, Warmup: 1, WarmupTime: -1, MinSample: 10 * time.Millisecond}, func(phase string, done, _ int) {
				if phase == PhaseRun && done == 0 {
					restarts++
				}
			})
			if r.Failed() || len(r.Samples) != 10 || r.Runs != 10 {
				t.Fatalf("%d samples, runs %d, failure %q", len(r.Samples), r.Runs, r.Failure)
			}
			if restarts != c.wantRestarts {
				t.Errorf("samples started over %d times, want %d", restarts, c.wantRestarts)
			}
			if c.wantRestarts == MaxRestarts {
				return
			}
			if r.Calls < 10 {
				t.Errorf("k = %d: samples of 1 ms calls last under the 10 ms minimum", r.Calls)
			}
			for i, s := range r.Samples {
				if s != float64(time.Millisecond) {
					t.Errorf("sample %d: %v ns per call, want the warm 1 ms (cold calls left out)", i, s)
				}
			}
		})
	}
}

// A process's first hundreds of milliseconds are slower than later: the warm-up lasts
// Options.WarmupTime, so that the samples are the later, steady calls.
func TestMeasureWarmsUpForWarmupTime(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	want := k.Expected([]int{40})
	for _, c := range []struct {
		name         string
		opts         Options
		wantWarmedUp time.Duration // at least
		wantWarmup   int
		wantMedian   time.Duration
	}{
		{"default", Options{Runs: 10, Warmup: 1}, DefaultWarmupTime, 1, time.Millisecond},
		{"longer", Options{Runs: 10, Warmup: 2, WarmupTime: 2 * time.Second}, 2 * time.Second, 2, time.Millisecond},
		// Without a minimum the samples are the slow early calls.
		{"calls only", Options{Runs: 10, Warmup: 1, WarmupTime: -1}, 0, 1, 1300 * time.Microsecond},
		// No warm-up is none, whatever WarmupTime says.
		{"no warm-up", Options{Runs: 10, Warmup: 0, WarmupTime: time.Second}, 0, 0, 1300 * time.Microsecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := withFakeClock(t)
			start := *clock
			// Calls of 1.3 ms for the process's first 400 ms, then of 1 ms.
			f := &fakeEngine{results: []fakeRun{{value: want}}, clock: clock, costOf: func(int) time.Duration {
				if clock.Sub(start) < 400*time.Millisecond {
					return 1300 * time.Microsecond
				}
				return time.Millisecond
			}}
			var warmups []string
			c.opts.MinSample = 10 * time.Millisecond
			r := Measure(context.Background(), f, k, []int{40}, c.opts, func(phase string, done, total int) {
				if phase == PhaseWarmup {
					warmups = append(warmups, fmt.Sprintf("%d/%d", done, total))
				}
			})
			if r.Failed() || len(r.Samples) != 10 {
				t.Fatalf("%d samples, failure %q", len(r.Samples), r.Failure)
			}
			if r.Warmup != c.wantWarmup || r.WarmedUp < c.wantWarmedUp || (c.wantWarmedUp == 0 && r.WarmedUp > 3*time.Millisecond) {
				t.Errorf("Warmup %d, WarmedUp %v; want %d calls counted, at least %v (none past the calls without a minimum)", r.Warmup, r.WarmedUp, c.wantWarmup, c.wantWarmedUp)
			}
			// Progress counts the counted calls only: the page shows "warmup 1/1".
			if last := warmups[len(warmups)-1]; last != fmt.Sprintf("%d/%d", c.wantWarmup, c.opts.Warmup) {
				t.Errorf("warm-up progress %v", warmups)
			}
			if r.Median != float64(c.wantMedian) {
				t.Errorf("median %v ns per call, want %v", r.Median, c.wantMedian)
			}
		})
	}
}

// A budget ends the warm-up before its time: the timed samples come first.
func TestMeasureBudgetShortensWarmupTime(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	clock := withFakeClock(t)
	f := &fakeEngine{results: []fakeRun{{value: k.Expected([]int{40})}}, clock: clock, cost: 100 * time.Millisecond}
	r := Measure(context.Background(), f, k, []int{40}, Options{Runs: 3, Warmup: 1, WarmupTime: 5 * time.Second, Budget: time.Second}, nil)
	if r.Failed() || len(r.Samples) < 1 {
		t.Fatalf("%d samples, failure %q", len(r.Samples), r.Failure)
	}
	// Calls of 100 ms: the warm-up stops where one more batch and the three samples
	// would pass the budget.
	if r.WarmedUp < 300*time.Millisecond || r.WarmedUp > 700*time.Millisecond || len(r.Samples) != 3 {
		t.Errorf("warmed up %v with a budget of 1s, then %d samples; want 300-700 ms, then 3", r.WarmedUp, len(r.Samples))
	}
}

// A wrong value that is not the first of its sample is caught by the checksum.
func TestMeasureChecksum(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	want := k.Expected([]int{40})
	clock := withFakeClock(t)
	f := &fakeEngine{results: []fakeRun{{value: want}, {value: want}, {value: want}, {value: want + 1}, {value: want}}, clock: clock, cost: time.Millisecond}
	r := Measure(context.Background(), f, k, []int{40}, Options{Runs: 3, Warmup: 1, MinSample: 5 * time.Millisecond}, nil)
	if !strings.Contains(r.Failure, "sum to") {
		t.Errorf("failure %q, want the checksum's", r.Failure)
	}
}

// A sample budget stops calibration: the cell reports a shorter sample rather than none.
func TestMeasureBudgetStopsCalibration(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	clock := withFakeClock(t)
	f := &fakeEngine{results: []fakeRun{{value: k.Expected([]int{40})}}, clock: clock, cost: 10 * time.Millisecond}
	r := Measure(context.Background(), f, k, []int{40}, Options{Runs: 10, Warmup: 0, MinSample: 10 * time.Second, Budget: time.Second}, nil)
	if r.Failed() || r.Runs < 1 || clock.Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) > time.Second {
		t.Errorf("runs %d, k %d, failure %q, took %v of a 1s budget", r.Runs, r.Calls, r.Failure, clock.Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	}
}

func TestSummarize(t *testing.T) {
	ten := []float64{10, 11, 9, 10, 12, 10, 10, 30, 10, 9}
	lo, med, hi, ci := Summarize(ten)
	if want := []float64{10, 11, 9, 10, 12, 10, 10, 30, 10, 9}; !slices.Equal(ten, want) {
		t.Errorf("Summarize reordered its samples to %v: Result.Samples keeps the order they ran in", ten)
	}
	if lo != 9 || med != 10 || hi != 30 {
		t.Errorf("min, median, max = %v %v %v", lo, med, hi)
	}
	// n = 10: ranks 2 and 9 (1-based) give 97.9%: of 9 9 10 10 10 10 10 11 12 30, 9 and 12.
	if !ci.Valid() || ci.Lo != 9 || ci.Hi != 12 || ci.Level < 0.95 {
		t.Errorf("interval %+v, want 9 to 12 at ≥ 95%%", ci)
	}
	if _, _, _, ci := Summarize(ten[:5]); ci.Valid() {
		t.Errorf("5 samples give an interval %+v: a 95%% one needs 6", ci)
	}
	r := Result{Median: 100, CI: Interval{Lo: 94, Hi: 101, Level: 0.95}}
	if !r.Wide() {
		t.Errorf("an interval reaching 6%% below the median is not wide")
	}
	r.CI.Lo = 96
	if r.Wide() {
		t.Errorf("an interval within ±4%% is wide")
	}
	// 3 to 5 samples give no interval: the spread is unknown ("±?"), not wide.
	r.CI = Interval{}
	if r.Wide() {
		t.Errorf("a cell without an interval is wide")
	}
}

// On Linux every cell records the machine's load and the other processes' CPU time.
func TestMeasureRecordsNoise(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("noise is read from /proc")
	}
	k, _ := kernels.Lookup("fib_it")
	r := Measure(context.Background(), nativeEngine(t), k, []int{40}, Options{Runs: 6, MinSample: time.Millisecond}, nil)
	if r.Noise == nil || r.Noise.Cores < 1 || r.Noise.Load1 < 0 || r.Noise.OtherCPU < 0 {
		t.Errorf("noise %+v", r.Noise)
	}
}

// coldEngine is a fake engine with a cache that Options.Cold turns off.
type coldEngine struct {
	fakeEngine
	disabled bool
}

func (c *coldEngine) DisableCache() { c.disabled = true }

func TestMeasureCold(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	for _, cold := range []bool{false, true} {
		e := &coldEngine{fakeEngine: fakeEngine{results: []fakeRun{{value: k.Expected([]int{40})}}}}
		r := Measure(context.Background(), e, k, []int{40}, Options{Runs: 1, MinSample: -1, Cold: cold}, nil)
		if r.Failed() || e.disabled != cold {
			t.Errorf("Cold %v: cache disabled %v, failure %q", cold, e.disabled, r.Failure)
		}
	}
}

// selfTimedEngine runs in "another process": every call costs pipe time on the harness's
// clock, but the engine reports only the calls' own time.
type selfTimedEngine struct {
	fakeEngine
	pipe, call time.Duration
	batches    int
}

func (s *selfTimedEngine) RunTimedBatch(ctx context.Context, k *kernels.Kernel, args []int, reps int) (first, sum int64, elapsed time.Duration, err error) {
	s.batches++
	*s.clock = s.clock.Add(s.pipe)
	for i := range reps {
		v, err := s.Run(ctx, k, args)
		if err != nil {
			return first, sum, 0, err
		}
		if i == 0 {
			first = v
		}
		sum += v
	}
	*s.clock = s.clock.Add(s.pipe)
	return first, sum, time.Duration(reps) * s.call, nil
}

// An engine that times itself (engine.SelfTimer) is timed by its own clock: the pipe's
// round trip around each batch is not in its samples.
func TestMeasureSelfTimed(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	clock := withFakeClock(t)
	e := &selfTimedEngine{pipe: 50 * time.Microsecond, call: 2 * time.Microsecond}
	e.fakeEngine = fakeEngine{results: []fakeRun{{value: k.Expected([]int{40})}}, clock: clock, cost: 0}
	r := Measure(context.Background(), e, k, []int{40}, Options{Runs: 6, Warmup: 1, MinSample: time.Millisecond}, nil)
	if r.Failed() {
		t.Fatal(r.Failure)
	}
	if r.Median != float64(2*time.Microsecond) {
		t.Errorf("median %v ns per call, want the engine's own 2000 (the pipe's 100 µs a batch left out)", r.Median)
	}
	if r.Calls < 500 || e.batches == 0 || e.fakeEngine.calls < 6*r.Calls {
		t.Errorf("k = %d in %d batches of %d calls: want samples of at least 1 ms of the engine's time", r.Calls, e.batches, e.fakeEngine.calls)
	}
}

// versionedEngine is a fake engine in "another runtime", which names its version once
// loaded.
type versionedEngine struct{ fakeEngine }

func (v *versionedEngine) Version() string {
	if v.loaded == 0 {
		return ""
	}
	return "fake 1.2.3"
}

// A cell records the version of an engine's runtime (engine.Versioner), read after Load.
func TestMeasureRecordsRuntime(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	e := &versionedEngine{fakeEngine{results: []fakeRun{{value: k.Expected([]int{40})}}}}
	r := Measure(context.Background(), e, k, []int{40}, Options{Runs: 1, MinSample: -1}, nil)
	if r.Failed() || r.Runtime != "fake 1.2.3" {
		t.Errorf("runtime %q, failure %q; want fake 1.2.3", r.Runtime, r.Failure)
	}
	r = Measure(context.Background(), &fakeEngine{results: e.results}, k, []int{40}, Options{Runs: 1, MinSample: -1}, nil)
	if r.Runtime != "" {
		t.Errorf("an engine without a version: runtime %q", r.Runtime)
	}
}

// As testing.B collects garbage before each run, Measure collects before the warm-up and
// between the calibration and the timed samples, never inside a timed batch.
func TestMeasureCollectsOutsideSamples(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	var events []string
	orig := collect
	collect = func() { events = append(events, "gc") }
	t.Cleanup(func() { collect = orig })
	clock := withFakeClock(t)
	e := &fakeEngine{results: []fakeRun{{value: k.Expected([]int{40})}}, clock: clock, cost: 4 * time.Millisecond}
	r := Measure(context.Background(), e, k, []int{40}, Options{Runs: 3, Warmup: 1, MinSample: 10 * time.Millisecond}, func(phase string, done, total int) {
		events = append(events, fmt.Sprintf("%s %d/%d", phase, done, total))
	})
	if r.Failed() {
		t.Fatal(r.Failure)
	}
	got := strings.Join(events, ", ")
	want := "load 0/1, load 1/1, gc, warmup 0/1, warmup 1/1, calibrate 0/1, calibrate 1/1, gc, run 1/3, run 2/3, run 3/3"
	if got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
}

// TestWarmLeavesTheEngineLoaded: Warm is the load and warm-up steps alone: the warm-up's
// calls, no samples, the engine left open; a failed warm-up closes it and says why.
func TestWarmLeavesTheEngineLoaded(t *testing.T) {
	k, _ := kernels.Lookup("fib_it")
	want := k.Expected([]int{10})
	e := &fakeEngine{results: []fakeRun{{value: want}}}
	r := Warm(context.Background(), e, k, []int{10}, Options{Warmup: 3, WarmupTime: -1})
	if r.Failure != "" || r.Warmup != 3 || e.calls != 3 || e.loaded != 1 || e.closed != 0 || len(r.Samples) != 0 {
		t.Errorf("warm-up of 3: %+v, %d calls, %d loads, %d closes; want 3 calls, loaded, not closed, no samples", r, e.calls, e.loaded, e.closed)
	}
	e = &fakeEngine{results: []fakeRun{{value: want + 1}}}
	r = Warm(context.Background(), e, k, []int{10}, Options{Warmup: 3, WarmupTime: -1})
	if !strings.HasPrefix(r.Failure, "wrong result") || e.closed != 1 {
		t.Errorf("a wrong value: %q, %d closes; want the failure and the engine closed", r.Failure, e.closed)
	}
}

// nativeEngine is the registered native engine.
func nativeEngine(t *testing.T) engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Native)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
