package web

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report/formatcases"
)

// The page's statistics over executions (src/stats.ts: tQuantile, acrossExecutions, ratioOf,
// geoMean, verdict, processSpread) give formatcases' executions.json figures, as package
// measure does, and the same figures as measure to a relative 1e-12 (the same steps in the
// same order; only Math.log and math.Log may differ in a last bit).
func TestExecutionStatisticsAgreeWithMeasure(t *testing.T) {
	cases, err := formatcases.Executions()
	if err != nil {
		t.Fatal(err)
	}
	out := runNode(t, cases, `const s = await import(process.env.DIR + "/stats.mjs");
const ex = (es) => es.map((e) => ({ median_ns: e.median_ns, ci: e.ci ?? undefined, min_ns: e.min_ns ?? undefined, max_ns: e.max_ns ?? undefined }));
const r = (x) => ({ x: x.x, lo: x.lo, hi: x.hi, level: x.level, verdict: s.verdict(x) });
console.log(JSON.stringify({
  quantiles: input.quantiles.map((c) => s.tQuantile(c.p, c.df)),
  cells: input.cells.map((c) => s.acrossExecutions(ex(c.executions))),
  ratios: input.ratios.map((c) => r(s.ratioOf(ex(c.a), ex(c.b)))),
  geomeans: input.geomeans.map((c) => r(s.geoMean(c.pairs.map((p) => s.ratioOf(ex(p.a), ex(p.b)))))),
  spreads: input.spreads.map((c) => s.processSpread(ex(c.executions))),
}));`, "stats")
	var got struct {
		Quantiles []float64
		Cells     []struct {
			Median float64               `json:"median_ns"`
			CI     *formatcases.Interval `json:"ci"`
		}
		Ratios, GeoMeans []formatcases.Want
		Spreads          []struct {
			X         float64
			Dominates bool
		}
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Quantiles) != len(cases.Quantiles) || len(got.Cells) != len(cases.Cells) ||
		len(got.Ratios) != len(cases.Ratios) || len(got.GeoMeans) != len(cases.GeoMeans) || len(got.Spreads) != len(cases.Spreads) {
		t.Fatalf("node printed %q (%v)", out, err)
	}
	near := func(got, want, tol float64) bool {
		if want == 0 {
			return got == 0
		}
		return math.Abs(got-want) <= tol*math.Abs(want)
	}
	execs := func(cs []formatcases.Execution) []measure.Execution {
		var out []measure.Execution
		for _, c := range cs {
			e := measure.Execution{Median: c.Median, Min: c.Min, Max: c.Max}
			if c.CI != nil {
				e.CI = measure.Interval{Lo: c.CI.Lo, Hi: c.CI.Hi, Level: c.CI.Level}
			}
			out = append(out, e)
		}
		return out
	}
	// ratio checks the page's ratio against the expected figures and measure's.
	ratio := func(what string, got formatcases.Want, want formatcases.Want, m measure.Ratio) {
		if !near(got.X, want.X, 1e-9) || !near(got.Lo, want.Lo, 1e-9) || !near(got.Hi, want.Hi, 1e-9) || got.Level != want.Level || got.Verdict != want.Verdict {
			t.Errorf("%s in stats.ts = %+v, want %+v (formatcases)", what, got, want)
		}
		if !near(got.X, m.X, 1e-12) || !near(got.Lo, m.Lo, 1e-12) || !near(got.Hi, m.Hi, 1e-12) || got.Verdict != m.Verdict() {
			t.Errorf("%s in stats.ts = %+v, measure gives %+v (%s)", what, got, m, m.Verdict())
		}
	}
	for i, c := range cases.Quantiles {
		if !near(got.Quantiles[i], c.T, 1e-9) || !near(got.Quantiles[i], measure.TQuantile(c.P, c.DF), 1e-12) {
			t.Errorf("tQuantile(%v, %v) = %v in stats.ts, want %v (measure: %v)", c.P, c.DF, got.Quantiles[i], c.T, measure.TQuantile(c.P, c.DF))
		}
	}
	for i, c := range cases.Cells {
		g := got.Cells[i]
		var lo, hi float64
		if g.CI != nil {
			lo, hi = g.CI.Lo, g.CI.Hi
		}
		med, ci := measure.AcrossExecutions(execs(c.Executions))
		if !near(g.Median, c.Median, 1e-9) || (g.CI == nil) != (c.CI == nil) || (c.CI != nil && (!near(lo, c.CI.Lo, 1e-9) || !near(hi, c.CI.Hi, 1e-9))) ||
			!near(g.Median, med, 1e-12) || !near(lo, ci.Lo, 1e-12) || !near(hi, ci.Hi, 1e-12) {
			t.Errorf("cell %d: acrossExecutions = %v %+v in stats.ts, want %v %+v (measure: %v %+v)", i, g.Median, g.CI, c.Median, c.CI, med, ci)
		}
	}
	for i, c := range cases.Ratios {
		ratio("ratioOf", got.Ratios[i], c.Want, measure.RatioOf(execs(c.A), execs(c.B)))
	}
	for i, c := range cases.GeoMeans {
		var rs []measure.Ratio
		for _, p := range c.Pairs {
			rs = append(rs, measure.RatioOf(execs(p.A), execs(p.B)))
		}
		ratio("geoMean", got.GeoMeans[i], c.Want, measure.GeoMean(rs))
	}
	for i, c := range cases.Spreads {
		if g := got.Spreads[i]; !near(g.X, c.X, 1e-9) || g.Dominates != c.Dominates {
			t.Errorf("spread %d: processSpread = %+v in stats.ts, want ×%v %v", i, g, c.X, c.Dominates)
		}
	}
}

// The page chooses a row's baseline (src/stats.ts, baseline) and writes a ratio's interval
// (src/format.ts, ratioInterval) as report.Baseline and FormatRatioInterval do, on
// formatcases' baselines.json.
func TestBaselineAgreesWithReport(t *testing.T) {
	cases, err := formatcases.Baselines()
	if err != nil {
		t.Fatal(err)
	}
	out := runNode(t, cases, `const { baseline } = await import(process.env.DIR + "/stats.mjs");
const { ratioInterval } = await import(process.env.DIR + "/format.mjs");
console.log(JSON.stringify({
  choices: input.choices.map((c) => baseline(c.prefer, (e) => c.timed.includes(e)) ?? ""),
  intervals: input.intervals.map((c) => ratioInterval(c)),
}));`, "stats", "format")
	var got struct{ Choices, Intervals []string }
	if err := json.Unmarshal(out, &got); err != nil || len(got.Choices) != len(cases.Choices) || len(got.Intervals) != len(cases.Intervals) {
		t.Fatalf("node printed %q (%v)", out, err)
	}
	for i, c := range cases.Choices {
		if got.Choices[i] != c.Want {
			t.Errorf("baseline(%q, %v) = %q in stats.ts, want %q (formatcases)", c.Prefer, c.Timed, got.Choices[i], c.Want)
		}
	}
	for i, c := range cases.Intervals {
		if got.Intervals[i] != c.Text {
			t.Errorf("ratioInterval(%v–%v, level %v) = %q in format.ts, want %q (formatcases)", c.Lo, c.Hi, c.Level, got.Intervals[i], c.Text)
		}
	}
}
