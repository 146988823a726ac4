package report

import (
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
)

// BrowserWasm is the page's own engine for kernels.wasm in the reader's browser, the
// baseline of a row without native.
const BrowserWasm = "browser-wasm"

// Baselines are the engines a row's × is taken against, in order, when the reader chose
// none or the chosen one has no time in the row: native, else the browser's wasm.
var Baselines = []string{engine.Native, BrowserWasm}

// Baseline is the one rule for the engine a row's ratios are taken against, for the CLI's
// table and CSV, the stored run's page and the page (web/src/stats.ts, baseline): prefer
// when it has a time in the row (timed), else the first of Baselines that has one; ""
// for none. Both are tested on formatcases' baselines.json.
func Baseline(prefer string, timed func(engine string) bool) string {
	if prefer != "" && timed(prefer) {
		return prefer
	}
	for _, b := range Baselines {
		if timed(b) {
			return b
		}
	}
	return ""
}

// BaseRatio is a cell's time over its row's baseline's, with its interval built from the
// two cells' executions (measure.RatioOf); false when no ratio is written: the cell is
// the baseline itself, or either cell has no time.
func BaseRatio(cell, base measure.Result) (measure.Ratio, bool) {
	if cell.Engine == base.Engine {
		return measure.Ratio{}, false
	}
	r := measure.RatioOf(cell.ExecutionsOf(), base.ExecutionsOf())
	return r, r.X > 0
}

// FormatRatioInterval renders a ratio's 95% interval as the page does (web/src/format.ts,
// ratioInterval): "2.90–3.20", each end as FormatRatio writes it without its ×; "" for a
// ratio without one.
func FormatRatioInterval(r measure.Ratio) string {
	if !r.Valid() {
		return ""
	}
	return strings.TrimPrefix(FormatRatio(r.Lo), "×") + "–" + strings.TrimPrefix(FormatRatio(r.Hi), "×")
}

// ratio is a cell's ratio to its row's baseline (Baseline with no choice: native, else the
// browser's wasm); false for none.
func (g grid) ratio(row, eng string) (measure.Ratio, bool) {
	base := Baseline("", func(e string) bool {
		c, ok := g.cells[[2]string{row, e}]
		return ok && !c.Failed() && c.Median > 0
	})
	c, ok := g.cells[[2]string{row, eng}]
	if base == "" || !ok || c.Failed() {
		return measure.Ratio{}, false
	}
	return BaseRatio(c, g.cells[[2]string{row, base}])
}

// ProcessVariation is how far a cell's executions spread, written as a ratio ("×1.40"),
// when that spread dominates their own samples' (measure.ProcessSpread): the reader is
// told "varies between processes: ×1.40" beside the interval. "" otherwise.
func ProcessVariation(r measure.Result) string {
	if r.Failed() {
		return ""
	}
	if x, dominates := measure.ProcessSpread(r.Executions); dominates {
		return FormatRatio(x)
	}
	return ""
}
