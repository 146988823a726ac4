package measure

import (
	"fmt"
	"math"
	"testing"

	"github.com/wasmgap/wasmgap/internal/report/formatcases"
)

// near reports whether got is want to a relative 1e-9 (both zero counts as near).
func near(got, want float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want) <= 1e-9*math.Abs(want)
}

func executions(cs []formatcases.Execution) []Execution {
	out := make([]Execution, len(cs))
	for i, c := range cs {
		out[i].Median, out[i].Min, out[i].Max = c.Median, c.Min, c.Max
		if c.CI != nil {
			out[i].CI = Interval{Lo: c.CI.Lo, Hi: c.CI.Hi, Level: c.CI.Level}
		}
	}
	return out
}

func checkRatio(t *testing.T, what string, got Ratio, want formatcases.Want) {
	t.Helper()
	if !near(got.X, want.X) || !near(got.Lo, want.Lo) || !near(got.Hi, want.Hi) || got.Level != want.Level || got.Verdict() != want.Verdict {
		t.Errorf("%s = ×%v (%v–%v, level %v, %q), want ×%v (%v–%v, level %v, %q)", what,
			got.X, got.Lo, got.Hi, got.Level, got.Verdict(), want.X, want.Lo, want.Hi, want.Level, want.Verdict)
	}
}

// The statistics over executions match formatcases' executions.json, whose figures were
// computed apart from this code; the page's stats.ts is checked on the same cases.
func TestExecutionStatistics(t *testing.T) {
	cases, err := formatcases.Executions()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases.Quantiles {
		if got := TQuantile(c.P, c.DF); !near(got, c.T) {
			t.Errorf("TQuantile(%v, %v) = %v, want %v", c.P, c.DF, got, c.T)
		}
	}
	for i, c := range cases.Cells {
		med, ci := AcrossExecutions(executions(c.Executions))
		want := Interval{}
		if c.CI != nil {
			want = Interval{Lo: c.CI.Lo, Hi: c.CI.Hi, Level: c.CI.Level}
		}
		if !near(med, c.Median) || !near(ci.Lo, want.Lo) || !near(ci.Hi, want.Hi) || ci.Level != want.Level {
			t.Errorf("cell %d: AcrossExecutions = %v %+v, want %v %+v", i, med, ci, c.Median, want)
		}
	}
	for i, c := range cases.Ratios {
		checkRatio(t, fmt.Sprintf("RatioOf case %d", i), RatioOf(executions(c.A), executions(c.B)), c.Want)
	}
	for i, c := range cases.GeoMeans {
		var rs []Ratio
		for _, p := range c.Pairs {
			rs = append(rs, RatioOf(executions(p.A), executions(p.B)))
		}
		checkRatio(t, fmt.Sprintf("GeoMean case %d", i), GeoMean(rs), c.Want)
	}
	for i, c := range cases.Spreads {
		x, dom := ProcessSpread(executions(c.Executions))
		if !near(x, c.X) || dom != c.Dominates {
			t.Errorf("spread %d: ProcessSpread = ×%v %v, want ×%v %v", i, x, dom, c.X, c.Dominates)
		}
	}
}

// A ratio whose interval spans 1 is never faster or slower, and none without an interval.
func TestVerdictNeedsAnInterval(t *testing.T) {
	for _, c := range []struct {
		r    Ratio
		want string
	}{
		{Ratio{X: 3}, VerdictUnclear},
		{Ratio{X: 3, Lo: 2, Hi: 4, Level: Confidence}, VerdictSlower},
		{Ratio{X: 0.5, Lo: 0.4, Hi: 0.6, Level: Confidence}, VerdictFaster},
		{Ratio{X: 1.5, Lo: 0.9, Hi: 2.5, Level: Confidence}, VerdictUnclear},
		{Ratio{X: 1, Lo: 1, Hi: 1, Level: Confidence}, VerdictUnclear},
	} {
		if got := c.r.Verdict(); got != c.want {
			t.Errorf("%+v.Verdict() = %q, want %q", c.r, got, c.want)
		}
	}
}

// A ratio's p-value is below 0.05 exactly when its 95% interval leaves out 1.
func TestRatioP(t *testing.T) {
	cases, err := formatcases.Executions()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases.Ratios {
		r := RatioOf(executions(c.A), executions(c.B))
		if p := r.P(); (p < 0.05) != (r.Verdict() != VerdictUnclear) || p < 0 || p > 1 {
			t.Errorf("ratio case %d: p = %v, verdict %q", i, p, r.Verdict())
		}
	}
}
