// Package warmup says when a kernel's engine reaches its steady state, from the time of
// every call since the first: the analysis of "Virtual Machine Warmup Blows Hot and Cold"
// (Barrett et al., OOPSLA 2017) on each execution's series — outliers marked by Tukey's
// fences, changepoints found by PELT (Killick et al., 2012) on the cost of changes in mean
// and variance with a penalty of 15·ln(n), segments whose medians lie within a tolerance of
// the last one's taken as equal — and the classification of each execution as flat,
// warm-up, slowdown or no steady state, and of the (engine, kernel) pair as consistent,
// good inconsistent or bad inconsistent; beside it, the time to the steady state (calls
// and milliseconds), the steady median with its 95% interval, and the JetStream-style
// first, worst and average.
//
// The CLI (`wasmgap warmup`), the API (`POST /api/warmup`) and the page all call Analyze
// and Judge; the collection of the series lives with the engines (Collect, RunTimedCalls)
// and the worker processes (package runner), one fresh process per execution.
package warmup

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// Class is what an execution's series shows.
type Class string

// The classes of an execution, as Barrett et al. name them.
const (
	// Flat: no changepoint, or every segment equal to the last, or the first one equal to
	// the last and none faster than it (slower stretches between are transients).
	Flat Class = "flat"
	// Warmup: the steady state is faster than every earlier segment not equal to it.
	Warmup Class = "warm-up"
	// Slowdown: the steady state is slower than some earlier segment not equal to it.
	Slowdown Class = "slowdown"
	// NoSteadyState: the last change of level (past the tolerance) comes too late, within
	// the last SteadyShare of the samples, for what follows it to be called steady.
	NoSteadyState Class = "no steady state"
)

// Verdicts on a pair (engine, kernel) over its executions.
const (
	// Consistent: every execution has the same class (Pair.Class names it).
	Consistent = "consistent"
	// GoodInconsistent: the executions disagree, but each is flat or a warm-up.
	GoodInconsistent = "good inconsistent"
	// BadInconsistent: the executions disagree and one of them is a slowdown or has no
	// steady state.
	BadInconsistent = "bad inconsistent"
)

// The method's constants, as Barrett et al. chose them, and the ones they leave open.
const (
	// DefaultPenaltyFactor is c in PELT's penalty c·ln(n) per changepoint (Barrett et al.).
	DefaultPenaltyFactor = 15
	// DefaultTolerance is how far (relative to the last segment's median) an earlier
	// segment's median may lie and still be taken as equal to it. Barrett et al. compared
	// means within an absolute 1 ms on iterations of about a second; calls here last
	// nanoseconds to seconds, so the tolerance is relative, and medians, as a machine
	// shared with other work slows bursts of calls.
	DefaultTolerance = 0.05
	// DefaultSteadyShare is the share of the samples at the end that the steady state must
	// cover at least: Barrett et al. ran 2,000 iterations and called an execution with a
	// change in its last 500 "no steady state".
	DefaultSteadyShare = 0.25
	// DefaultMinSegment is the fewest samples a segment holds (PELT's minimum segment
	// length): a variance needs two, and a segment of two or three samples is noise, not a
	// phase of the engine.
	DefaultMinSegment = 5
	// OutlierWindow is the sliding window of Tukey's fences, and the number of first
	// samples that are outliers only when isolated (both neighbours inside the fences):
	// Barrett et al. never mark them, as warm-up happens there, but a machine shared with
	// other work preempts a call now and then, and one call 1,000 times slower than its
	// neighbours is the scheduler's, not a phase of the engine. The first call is never an
	// outlier.
	OutlierWindow = 200
	// OutlierFence is k in Tukey's far-out fences, Q1 − k·IQR and Q3 + k·IQR.
	OutlierFence = 3
	// WorstN is how many of the slowest calls after the first JetStream's "worst" averages.
	WorstN = 4
	// EarlyN is how many first samples Execution.Early averages.
	EarlyN = 10
	// MinSamples is the fewest samples Analyze accepts.
	MinSamples = 2 * DefaultMinSegment
	// MaxSamples bounds a series (PELT is quadratic in a series without changes: 10,000 samples take about a second).
	MaxSamples = 10_000
)

// relFloor is the smallest standard deviation, relative to a segment's mean, that the cost
// function assumes: no clock times a call better than that, and a series of equal values
// (synthetic, or a coarse clock) must not make a segment's cost minus infinity.
const relFloor = 1e-3

// Options tune Analyze. The zero value is the method as documented in the constants.
type Options struct {
	// PenaltyFactor is c in the penalty c·ln(n); zero means DefaultPenaltyFactor.
	PenaltyFactor float64 `json:"penalty_factor,omitempty"`
	// Tolerance is the relative tolerance of equal segments; zero means DefaultTolerance.
	Tolerance float64 `json:"tolerance,omitempty"`
	// SteadyShare is the share at the end the steady state must cover; zero means
	// DefaultSteadyShare.
	SteadyShare float64 `json:"steady_share,omitempty"`
	// MinSegment is PELT's minimum segment length; zero means DefaultMinSegment.
	MinSegment int `json:"min_segment,omitempty"`
}

// withDefaults fills the zero fields and checks the others.
func (o Options) withDefaults() (Options, error) {
	if o.PenaltyFactor == 0 {
		o.PenaltyFactor = DefaultPenaltyFactor
	}
	if o.Tolerance == 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.SteadyShare == 0 {
		o.SteadyShare = DefaultSteadyShare
	}
	if o.MinSegment == 0 {
		o.MinSegment = DefaultMinSegment
	}
	switch {
	case !(o.PenaltyFactor > 0) || math.IsInf(o.PenaltyFactor, 0):
		return o, fmt.Errorf("penalty factor %v: want a positive number", o.PenaltyFactor)
	case !(o.Tolerance > 0 && o.Tolerance < 1):
		return o, fmt.Errorf("tolerance %v: want a share between 0 and 1", o.Tolerance)
	case !(o.SteadyShare > 0 && o.SteadyShare < 1):
		return o, fmt.Errorf("steady share %v: want a share between 0 and 1", o.SteadyShare)
	case o.MinSegment < 2:
		return o, fmt.Errorf("minimum segment %d: want 2 or more samples", o.MinSegment)
	}
	return o, nil
}

// Segment is a run of samples between two changepoints, [Start, End).
type Segment struct {
	Start int `json:"start"`
	End   int `json:"end"`
	// Mean and SD are the segment's mean and standard deviation in ns per call, outliers
	// replaced (as PELT saw them); Median is the median of its samples as they ran, the
	// level that segments are compared by (a burst of preempted calls moves a mean, not a
	// median).
	Mean   float64 `json:"mean_ns"`
	SD     float64 `json:"sd_ns"`
	Median float64 `json:"median_ns"`
	// Steady says the segment is part of the steady state: the last segment and the run
	// of segments equal to it before it, or every segment of a flat series.
	Steady bool `json:"steady,omitempty"`
}

// Execution is the analysis of one execution's series.
type Execution struct {
	// Samples is the length of the series; Group the calls each sample timed.
	Samples int `json:"samples"`
	Group   int `json:"group"`
	// Outliers are the indices of the samples Tukey's fences marked; PELT saw the
	// window's median in their place.
	Outliers []int `json:"outliers,omitempty"`
	// Changepoints are the indices of the samples where a new segment starts.
	Changepoints []int     `json:"changepoints"`
	Segments     []Segment `json:"segments"`
	Class        Class     `json:"class"`
	// SteadyStart is the index of the sample where the steady state starts (0 for a flat
	// series), or -1 when there is none.
	SteadyStart int `json:"steady_start"`
	// SteadyCalls is the number of calls before the steady state (SteadyStart × Group);
	// SteadyAfterNs the time they took, in ns. Both are zero without a steady state.
	SteadyCalls   int     `json:"steady_calls"`
	SteadyAfterNs float64 `json:"steady_after_ns"`
	// SteadyMedian is the median time per call in the steady state, with its 95%
	// interval (measure.Summarize); zero without a steady state.
	SteadyMedian float64          `json:"steady_median_ns"`
	SteadyCI     measure.Interval `json:"steady_ci"`
	// First, Worst and Average are JetStream's scores: the first sample, the mean of the
	// WorstN slowest samples after it, the mean of the samples after it (ns per call).
	First   float64 `json:"first_ns"`
	Worst   float64 `json:"worst_ns"`
	Average float64 `json:"average_ns"`
	// Early is the mean of the first EarlyN samples (ns per call).
	Early float64 `json:"early_ns"`
	// TotalNs is the time of every call of the series.
	TotalNs float64 `json:"total_ns"`
}

// Analyze finds the changepoints of one execution's series (times in ns per call, one
// sample of group calls each, in the order they ran) and classifies it.
func Analyze(times []float64, group int, opts Options) (Execution, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Execution{}, err
	}
	n := len(times)
	if n < MinSamples {
		return Execution{}, fmt.Errorf("a series of %d samples: the analysis needs %d or more", n, MinSamples)
	}
	if n > MaxSamples {
		return Execution{}, fmt.Errorf("a series of %d samples: the analysis takes %d at most", n, MaxSamples)
	}
	if group < 1 {
		return Execution{}, fmt.Errorf("group of %d calls per sample: want 1 or more", group)
	}
	for i, t := range times {
		if !(t > 0) || math.IsInf(t, 0) {
			return Execution{}, fmt.Errorf("sample %d is %v ns: every time must be a positive number", i, t)
		}
	}
	x := Execution{Samples: n, Group: group, SteadyStart: -1}

	clean, outliers := replaceOutliers(times)
	x.Outliers = outliers
	cps := PELT(clean, o.PenaltyFactor*math.Log(float64(n)), o.MinSegment)
	x.Changepoints = append([]int{}, cps...) // [] rather than null in JSON
	bounds := append(append([]int{0}, cps...), n)
	for i := 0; i+1 < len(bounds); i++ {
		m, sd := meanSD(clean[bounds[i]:bounds[i+1]])
		x.Segments = append(x.Segments, Segment{Start: bounds[i], End: bounds[i+1], Mean: m, SD: sd, Median: median(times[bounds[i]:bounds[i+1]])})
	}
	x.classify(o)

	x.First = times[0]
	rest := slices.Clone(times[1:])
	x.Average = mean(rest)
	slices.Sort(rest)
	x.Worst = mean(rest[max(0, len(rest)-WorstN):])
	x.Early = mean(times[:min(EarlyN, n)])
	for _, t := range times {
		x.TotalNs += t * float64(group)
	}
	if x.SteadyStart >= 0 {
		x.SteadyCalls = x.SteadyStart * group
		for _, t := range times[:x.SteadyStart] {
			x.SteadyAfterNs += t * float64(group)
		}
		_, x.SteadyMedian, _, x.SteadyCI = measure.Summarize(times[x.SteadyStart:])
	}
	return x, nil
}

// classify finds the steady state among the segments and names the execution's class.
func (x *Execution) classify(o Options) {
	segs := x.Segments
	last := segs[len(segs)-1]
	tol := o.Tolerance * last.Median
	equal := func(s Segment) bool { return math.Abs(s.Median-last.Median) <= tol }
	// The steady state: the last segment and the run of equal segments before it.
	first := len(segs) - 1
	for first > 0 && equal(segs[first-1]) {
		first--
	}
	// A steady state that starts in the last SteadyShare of the samples is none. Barrett
	// et al. apply the rule to the last changepoint; here it applies to the trailing run
	// of equal segments, so that a change within the tolerance (a neighbour's load on a
	// shared machine shifts the level by a few percent) is not taken for the engine's.
	start := segs[first].Start
	if float64(x.Samples-start) < o.SteadyShare*float64(x.Samples) {
		x.Class = NoSteadyState
		return
	}
	x.Class = Flat
	// An engine that ran at its steady speed from the first call, with slower stretches
	// between (bursts of preempted calls on a shared machine), is flat: the steady state
	// starts at its first call, and the slower stretches are transients, not a warm-up.
	if equal(segs[0]) && !slices.ContainsFunc(segs[:first], func(s Segment) bool { return !equal(s) && s.Median < last.Median }) {
		first, start = 0, 0
	}
	for i := first; i < len(segs); i++ {
		segs[i].Steady = true
	}
	x.SteadyStart = start
	for _, s := range segs[:first] {
		switch {
		case equal(s):
		case s.Median < last.Median:
			x.Class = Slowdown
			return
		default:
			x.Class = Warmup
		}
	}
}

// Pair is the verdict on an (engine, kernel) pair over its executions.
type Pair struct {
	// Verdict is Consistent, GoodInconsistent or BadInconsistent.
	Verdict string `json:"verdict"`
	// Class is the executions' class when they agree, "" otherwise.
	Class Class `json:"class,omitempty"`
	// Good says every execution is flat or a warm-up (a steady state of peak
	// performance, the traditional view of warm-up).
	Good bool `json:"good"`
	// Classes counts the executions of each class.
	Classes map[Class]int `json:"classes"`
}

// Judge gives the verdict on a pair from the analyses of its executions.
func Judge(execs []Execution) (Pair, error) {
	if len(execs) == 0 {
		return Pair{}, errors.New("no execution to judge: want 1 or more")
	}
	p := Pair{Classes: map[Class]int{}, Good: true}
	for _, x := range execs {
		p.Classes[x.Class]++
		if x.Class != Flat && x.Class != Warmup {
			p.Good = false
		}
	}
	switch {
	case len(p.Classes) == 1:
		p.Verdict, p.Class = Consistent, execs[0].Class
	case p.Good:
		p.Verdict = GoodInconsistent
	default:
		p.Verdict = BadInconsistent
	}
	return p, nil
}

// Words says an execution's result as the page and the CLI write it: "steady after 1,240
// calls, 38 ms", "flat", "no steady state".
func (x Execution) Words() string {
	switch {
	case x.Class == NoSteadyState:
		return "no steady state"
	case x.Class == Flat:
		return "flat"
	}
	return fmt.Sprintf("%s, steady after %s calls, %s", x.Class, thousands(x.SteadyCalls), millis(x.SteadyAfterNs))
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// millis writes ns as milliseconds with two significant decimals below 10 ms.
func millis(ns float64) string {
	ms := ns / 1e6
	switch {
	case ms >= 10:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func meanSD(v []float64) (m, sd float64) {
	m = mean(v)
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	if len(v) > 1 {
		sd = math.Sqrt(ss / float64(len(v)-1))
	}
	return m, sd
}
