package measure

import (
	"math"

	"github.com/aclements/go-moremath/mathx"
)

// Execution is one worker process's measurement of a cell: the median of its samples with
// their 95% interval (Summarize), how many samples it took, and what the machine did
// meanwhile. The samples of one process vary less than the processes do (where the binary
// and the heap land, what the machine did that second: Kalibera and Jones, "Rigorous
// benchmarking in reasonable time", ISMM 2013), so a cell is measured in several
// executions and its figures are built over them (AcrossExecutions).
type Execution struct {
	// Median is the execution's median, in ns per call; CI its interval over the
	// execution's own samples.
	Median float64  `json:"median_ns"`
	CI     Interval `json:"ci"`
	// Min and Max are the execution's fastest and slowest samples.
	Min float64 `json:"min_ns,omitempty"`
	Max float64 `json:"max_ns,omitempty"`
	// Runs is the samples the execution took, Calls the calls in each.
	Runs  int `json:"runs"`
	Calls int `json:"calls,omitempty"`
	// Steal is the CPU time the hypervisor took from the machine while the samples ran,
	// in cores on average; Load1 the one-minute load average at their end; OtherCPU the
	// other processes' CPU time, in cores (Noise's). Zero where unknown.
	Steal    float64 `json:"steal"`
	Load1    float64 `json:"load1"`
	OtherCPU float64 `json:"other_cpu"`
	// Busy is Noise.Busy: other processes took more than BusyCPU cores.
	Busy bool `json:"busy,omitempty"`
}

// AcrossExecutions returns a cell's figure and its 95% interval over its executions: the
// geometric mean of the executions' medians, with Student's t interval on their
// logarithms (n-1 degrees of freedom), so that the interval covers what another set of
// processes would see, not only the samples of one. One execution keeps its own median and
// interval (over its samples); none gives zero.
func AcrossExecutions(execs []Execution) (center float64, ci Interval) {
	switch len(execs) {
	case 0:
		return 0, Interval{}
	case 1:
		return execs[0].Median, execs[0].CI
	}
	mean, v, ok := logMoments(execs)
	if !ok {
		return 0, Interval{}
	}
	n := float64(len(execs))
	half := TQuantile(1-(1-Confidence)/2, n-1) * math.Sqrt(v/n)
	return math.Exp(mean), Interval{Lo: math.Exp(mean - half), Hi: math.Exp(mean + half), Level: Confidence}
}

// logMoments returns the mean and the sample variance of the logarithms of the
// executions' medians; false when a median is not positive.
func logMoments(execs []Execution) (mean, variance float64, ok bool) {
	for _, e := range execs {
		if !(e.Median > 0) || math.IsInf(e.Median, 0) {
			return 0, 0, false
		}
		mean += math.Log(e.Median)
	}
	n := float64(len(execs))
	mean /= n
	if len(execs) < 2 {
		return mean, 0, true
	}
	for _, e := range execs {
		d := math.Log(e.Median) - mean
		variance += d * d
	}
	return mean, variance / (n - 1), true
}

// Ratio is the ratio of two cells' times with its 95% interval (Level 0: none, X alone
// known), and what a geometric mean of ratios needs: the logarithm of X, the variance of
// that estimate and its degrees of freedom.
type Ratio struct {
	X     float64 `json:"x"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Level float64 `json:"level,omitempty"`
	Log   float64 `json:"log"`
	Var   float64 `json:"var"`
	DF    float64 `json:"df"`
}

// Valid reports whether the ratio has an interval.
func (r Ratio) Valid() bool { return r.Level > 0 }

// RatioOf returns a's time over b's from their executions: exp of the difference of the
// mean logarithms of the executions' medians (the ratio of the cells' geometric means),
// with Welch's t interval on that difference (Welch–Satterthwaite degrees of freedom). It
// has an interval when both cells have two executions or more; zero X when either has no
// positive median.
func RatioOf(a, b []Execution) Ratio {
	ma, va, oka := logMoments(a)
	mb, vb, okb := logMoments(b)
	if !oka || !okb || len(a) == 0 || len(b) == 0 {
		return Ratio{}
	}
	r := Ratio{X: math.Exp(ma - mb), Log: ma - mb}
	if len(a) < 2 || len(b) < 2 {
		return r
	}
	sa, sb := va/float64(len(a)), vb/float64(len(b))
	r.Var = sa + sb
	if r.Var > 0 {
		r.DF = r.Var * r.Var / (sa*sa/float64(len(a)-1) + sb*sb/float64(len(b)-1))
	} else {
		r.DF = float64(len(a) + len(b) - 2)
	}
	return r.withInterval()
}

// withInterval sets the ratio's 95% interval from its Log, Var and DF.
func (r Ratio) withInterval() Ratio {
	half := TQuantile(1-(1-Confidence)/2, r.DF) * math.Sqrt(r.Var)
	r.Lo, r.Hi, r.Level = math.Exp(r.Log-half), math.Exp(r.Log+half), Confidence
	return r
}

// GeoMean returns the geometric mean of ratios (one engine's × native over the kernels
// run, as JetStream scores) with its 95% interval: the mean of the logarithms, whose
// variance is the sum of theirs over n², with Welch–Satterthwaite's degrees of freedom
// (the kernels are a fixed set: the interval is the measurement's, not a sample of
// kernels'). It has an interval when every ratio has one; zero for none or a ratio
// without X.
func GeoMean(rs []Ratio) Ratio {
	if len(rs) == 0 {
		return Ratio{}
	}
	var g Ratio
	all := true
	var dfDen float64
	for _, r := range rs {
		if !(r.X > 0) {
			return Ratio{}
		}
		g.Log += r.Log
		g.Var += r.Var
		all = all && r.Valid()
		if r.Var > 0 {
			dfDen += r.Var * r.Var / r.DF
		}
	}
	n := float64(len(rs))
	g.Log /= n
	g.X = math.Exp(g.Log)
	if !all {
		return Ratio{X: g.X, Log: g.Log}
	}
	if dfDen > 0 {
		g.DF = g.Var * g.Var / dfDen
	} else {
		for _, r := range rs {
			g.DF += r.DF
		}
	}
	g.Var /= n * n
	return g.withInterval()
}

// P is the two-sided p-value of the ratio's being 1 (its logarithm 0) by Welch's t test
// on the executions' logarithms: below 0.05 exactly when its 95% interval leaves out 1.
// 1 for a ratio without an interval.
func (r Ratio) P() float64 {
	switch {
	case !r.Valid():
		return 1
	case r.Var <= 0:
		if r.Log == 0 {
			return 1
		}
		return 0
	}
	return 2 * (1 - tCDF(math.Abs(r.Log)/math.Sqrt(r.Var), r.DF))
}

// The verdicts of a ratio: a ratio whose interval spans 1, or that has none, is never
// called faster or slower.
const (
	VerdictSlower  = "slower"
	VerdictFaster  = "faster"
	VerdictUnclear = "no clear difference"
)

// Verdict says what the ratio a/b supports: VerdictSlower when its whole interval is
// above 1 (a takes longer than b), VerdictFaster when below, VerdictUnclear when it spans
// 1 or there is no interval.
func (r Ratio) Verdict() string {
	switch {
	case !r.Valid():
		return VerdictUnclear
	case r.Lo > 1:
		return VerdictSlower
	case r.Hi < 1:
		return VerdictFaster
	}
	return VerdictUnclear
}

// ProcessSpread returns how far a cell's executions spread (the largest median over the
// smallest) and whether that spread dominates: two executions' own ranges do not overlap
// (each one's interval, or its min–max where it has too few samples for one), so the
// processes differ by more than each one's samples do, and the reader is told "varies
// between processes: ×1.40" beside the interval.
func ProcessSpread(execs []Execution) (x float64, dominates bool) {
	if len(execs) < 2 {
		return 0, false
	}
	lo, hi := math.Inf(1), 0.0
	for _, e := range execs {
		lo, hi = min(lo, e.Median), max(hi, e.Median)
	}
	if !(lo > 0) {
		return 0, false
	}
	for i, a := range execs {
		for _, b := range execs[i+1:] {
			alo, ahi, aok := a.own()
			blo, bhi, bok := b.own()
			if aok && bok && (ahi < blo || bhi < alo) {
				dominates = true
			}
		}
	}
	return hi / lo, dominates
}

// own is the range of an execution's own samples that ProcessSpread compares: its
// interval, else its min–max; false for neither.
func (e Execution) own() (lo, hi float64, ok bool) {
	switch {
	case e.CI.Valid():
		return e.CI.Lo, e.CI.Hi, true
	case e.Max > 0:
		return e.Min, e.Max, true
	}
	return 0, 0, false
}

// TQuantile returns the p quantile (0.5 ≤ p < 1) of Student's t distribution with df
// degrees of freedom (df > 0, fractional allowed), by bisection of its distribution
// function (the regularized incomplete beta function, by its continued fraction). The
// page's stats.ts computes it by the same steps, so the two agree to the last digits.
func TQuantile(p, df float64) float64 {
	if !(df > 0) || !(p >= 0.5) || p >= 1 {
		return math.NaN()
	}
	hi := 1.0
	for tCDF(hi, df) < p && hi < 1e12 {
		hi *= 2
	}
	lo := 0.0
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if tCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// tCDF is Student's t distribution function at t ≥ 0, through the regularized incomplete
// beta function (Numerical Recipes' continued fraction, as stats.ts computes it).
func tCDF(t, df float64) float64 {
	return 1 - 0.5*mathx.BetaInc(df/(df+t*t), df/2, 0.5)
}

// ExecutionsOf returns the cell's executions: Executions, or for a cell measured in one
// process before executions were kept (a stored run, a browser cell) one made of its median
// and interval; none for a failed cell or one without a median.
func (r Result) ExecutionsOf() []Execution {
	if r.Failed() || !(r.Median > 0) {
		return nil
	}
	if len(r.Executions) > 0 {
		return r.Executions
	}
	return []Execution{{Median: r.Median, CI: r.CI, Runs: r.Runs, Calls: r.Calls}}
}
