package report

import (
	"slices"
	"testing"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report/formatcases"
)

// The baseline of a row and a ratio's interval as text follow formatcases' baselines.json,
// as the page's stats.ts and format.ts do.
func TestBaselineCases(t *testing.T) {
	cases, err := formatcases.Baselines()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases.Choices {
		if got := Baseline(c.Prefer, func(e string) bool { return slices.Contains(c.Timed, e) }); got != c.Want {
			t.Errorf("Baseline(%q, %v) = %q, want %q", c.Prefer, c.Timed, got, c.Want)
		}
	}
	for _, c := range cases.Intervals {
		if got := FormatRatioInterval(measure.Ratio{X: 1, Lo: c.Lo, Hi: c.Hi, Level: c.Level}); got != c.Text {
			t.Errorf("FormatRatioInterval(%v–%v, level %v) = %q, want %q", c.Lo, c.Hi, c.Level, got, c.Text)
		}
	}
}

// A cell's ratio to itself is never written, nor one against a failed cell; two cells of
// three executions each have an interval, and one of a single execution has none.
func TestBaseRatio(t *testing.T) {
	three := func(eng string, m float64) measure.Result {
		r := measure.Result{Engine: eng}
		for _, f := range []float64{0.97, 1, 1.03} {
			r.Executions = append(r.Executions, measure.Execution{Median: m * f})
		}
		r.Median, r.CI = measure.AcrossExecutions(r.Executions)
		return r
	}
	native, wazero := three("native", 100), three("wazero-compiler", 300)
	if _, ok := BaseRatio(native, native); ok {
		t.Error("a cell has a ratio to itself")
	}
	r, ok := BaseRatio(wazero, native)
	if !ok || !r.Valid() || r.Lo > 3 || r.Hi < 3 || r.Verdict() != measure.VerdictSlower {
		t.Errorf("BaseRatio(wazero, native) = %+v %v, want ×3 with an interval above 1", r, ok)
	}
	if _, ok := BaseRatio(wazero, measure.Result{Engine: "native", Failure: "stack overflow"}); ok {
		t.Error("a ratio against a failed cell")
	}
	if r, ok := BaseRatio(measure.Result{Engine: "yaegi", Median: 900}, native); !ok || r.Valid() || r.X < 8.9 || r.X > 9.1 {
		t.Errorf("BaseRatio of one execution = %+v %v, want ×9 without an interval", r, ok)
	}
}
