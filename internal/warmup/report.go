package warmup

import (
	"fmt"
	"math"
)

// Method says how the series were taken and analysed: printed beside every warm-up table.
type Method struct {
	Executions int        `json:"executions"`
	Collection Collection `json:"collection"`
	// Penalty, Tolerance, SteadyShare, MinSegment and Outliers state the analysis.
	Penalty     string  `json:"penalty"`
	Tolerance   float64 `json:"tolerance"`
	SteadyShare float64 `json:"steady_share"`
	MinSegment  int     `json:"min_segment"`
	Outliers    string  `json:"outliers"`
	JetStream   string  `json:"jetstream"`
}

// NewMethod states the method for executions of collection c analysed with opts.
func NewMethod(executions int, c Collection, opts Options) Method {
	o, err := opts.withDefaults()
	if err != nil {
		o, _ = Options{}.withDefaults()
	}
	return Method{
		Executions:  executions,
		Collection:  c,
		Penalty:     fmt.Sprintf("PELT on the cost of changes in mean and variance, penalty %g·ln(n) per changepoint", o.PenaltyFactor),
		Tolerance:   o.Tolerance,
		SteadyShare: o.SteadyShare,
		MinSegment:  o.MinSegment,
		Outliers:    fmt.Sprintf("Tukey's fences (Q1 − %d·IQR, Q3 + %d·IQR) over a window of %d samples, the first %d never outliers", OutlierFence, OutlierFence, OutlierWindow, OutlierWindow),
		JetStream:   fmt.Sprintf("first sample; worst: mean of the %d slowest after it; average: mean of those after it", WorstN),
	}
}

// Run is one execution: its series as the engine timed it, and its analysis (nil when
// the series failed or is too short to analyse; Error says why).
type Run struct {
	Series
	Analysis *Execution `json:"analysis,omitempty"`
	Error    string     `json:"error,omitempty"`
}

// EngineResult is an engine's executions of the kernel and the verdict on the pair.
type EngineResult struct {
	Engine string `json:"engine"`
	Runs   []Run  `json:"runs"`
	// Pair is the verdict over the analysed runs; nil when none was analysed.
	Pair *Pair `json:"pair,omitempty"`
}

// NewEngineResult analyses each execution's series of an engine and judges the pair.
func NewEngineResult(name string, series []Series, opts Options) EngineResult {
	r := EngineResult{Engine: name}
	var execs []Execution
	for _, s := range series {
		run := Run{Series: s}
		switch {
		case s.Failure != "":
			run.Error = s.Failure
		default:
			x, err := Analyze(s.Times, s.Group, opts)
			if err != nil {
				run.Error = err.Error()
				break
			}
			run.Analysis = &x
			execs = append(execs, x)
		}
		r.Runs = append(r.Runs, run)
	}
	if len(execs) > 0 {
		p, _ := Judge(execs)
		r.Pair = &p
	}
	return r
}

// Summary is an engine's figures over its analysed runs, as the tables show them: the
// median over the executions of each figure.
type Summary struct {
	// Analysed counts the runs with an analysis, of Runs.
	Analysed, Runs int
	// Steady counts the runs with a steady state.
	Steady int
	// SteadyCalls and SteadyAfterNs are the medians over the runs with a steady state.
	SteadyCalls   float64
	SteadyAfterNs float64
	// SteadyMedian is the median of the runs' steady medians (ns per call).
	SteadyMedian float64
	// First, Early, Worst and Average are the medians over the analysed runs.
	First, Early, Worst, Average float64
}

// Summary sums an engine's runs up.
func (r EngineResult) Summary() Summary {
	s := Summary{Runs: len(r.Runs)}
	var calls, after, steady, first, early, worst, avg []float64
	for _, run := range r.Runs {
		x := run.Analysis
		if x == nil {
			continue
		}
		s.Analysed++
		first = append(first, x.First)
		early = append(early, x.Early)
		worst = append(worst, x.Worst)
		avg = append(avg, x.Average)
		if x.SteadyStart >= 0 {
			s.Steady++
			calls = append(calls, float64(x.SteadyCalls))
			after = append(after, x.SteadyAfterNs)
			steady = append(steady, x.SteadyMedian)
		}
	}
	s.SteadyCalls, s.SteadyAfterNs, s.SteadyMedian = medianOr(calls), medianOr(after), medianOr(steady)
	s.First, s.Early, s.Worst, s.Average = medianOr(first), medianOr(early), medianOr(worst), medianOr(avg)
	return s
}

// medianOr is the median of v, or NaN for none.
func medianOr(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return median(v)
}

// Report is a warm-up study: one kernel on several engines, several executions each.
type Report struct {
	Kernel  string         `json:"kernel"`
	Args    []int          `json:"args"`
	Label   string         `json:"label"`
	Method  Method         `json:"method"`
	Engines []EngineResult `json:"engines"`
}
