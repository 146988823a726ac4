package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// csvHeader names the columns of a report's CSV: one row per cell, times in nanoseconds
// per call, the ratio to the row's baseline (Baseline: native) with its 95% interval, the
// executions (worker processes) the cell was measured in; historical figures (--history) follow as rows of their own, source
// "historical".
var csvHeader = []string{
	"source", "kernel", "args", "engine", "median_ns", "ci_lo_ns", "ci_hi_ns", "min_ns", "max_ns",
	"ratio_to_native", "ratio_lo", "ratio_hi", "executions", "runs", "warmup", "calls_per_sample", "busy", "failure", "note",
}

// writeCSV writes the report as CSV (FormatCSV): the live cells in the table's order, then
// the historical figures, with the partial run's words in the note of every row.
func writeCSV(w io.Writer, r Report) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	g := arrange(r.Results, r.Engines, r.Method.Runs)
	ns := func(v float64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	for _, row := range g.rows {
		for _, eng := range g.engines {
			c, ok := g.cells[[2]string{row, eng}]
			if !ok {
				continue
			}
			var ratio, rlo, rhi string
			if x, ok := g.ratio(row, eng); ok {
				ratio = strconv.FormatFloat(x.X, 'g', 4, 64)
				if x.Valid() {
					rlo, rhi = strconv.FormatFloat(x.Lo, 'g', 4, 64), strconv.FormatFloat(x.Hi, 'g', 4, 64)
				}
			}
			var lo, hi float64
			if c.CI.Valid() {
				lo, hi = c.CI.Lo, c.CI.Hi
			}
			cw.Write([]string{
				"live", c.Kernel, argsText(c.Args), c.Engine, ns(c.Median), ns(lo), ns(hi), ns(c.Min), ns(c.Max),
				ratio, rlo, rhi, strconv.Itoa(len(c.ExecutionsOf())), strconv.Itoa(c.Runs), strconv.Itoa(c.Warmup), strconv.Itoa(c.Calls), strconv.FormatBool(busy(c)), c.Failure, r.Method.Partial,
			})
		}
	}
	for _, f := range r.History {
		median := ""
		if !f.Failed() {
			median = ns(f.Seconds * 1e9)
		}
		note := strings.TrimSpace(f.Hardware + "; " + f.Note)
		cw.Write([]string{"historical", f.Kernel, argsText(f.Args), f.Label, median, "", "", "", "", "", "", "", "", "", "", "", "", f.Failure, strings.TrimSuffix(note, ";")})
	}
	cw.Flush()
	return cw.Error()
}

func busy(r measure.Result) bool { return r.Noise != nil && r.Noise.Busy }

// argsText renders a cell's arguments for one CSV field: "50000 1000".
func argsText(args []int) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = strconv.Itoa(a)
	}
	return strings.Join(s, " ")
}

// writeComparisonCSV writes a comparison as CSV: one row per cell compared, each side's
// median and interval in nanoseconds per call.
func writeComparisonCSV(w io.Writer, c Comparison) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"kernel", "engine", "old_median_ns", "old_ci_lo_ns", "old_ci_hi_ns", "old_samples", "new_median_ns", "new_ci_lo_ns", "new_ci_hi_ns", "new_samples", "delta", "p", "significant", "note"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, ch := range c.Changes {
		cw.Write([]string{
			ch.Label, ch.Engine,
			f(ch.Old.Median), f(ch.Old.CI.Lo), f(ch.Old.CI.Hi), strconv.Itoa(ch.Old.Samples),
			f(ch.New.Median), f(ch.New.CI.Lo), f(ch.New.CI.Hi), strconv.Itoa(ch.New.Samples),
			f(ch.Delta), f(ch.P), strconv.FormatBool(ch.Significant), ch.Note,
		})
	}
	cw.Flush()
	return cw.Error()
}

// WriteCSV writes rows under a header as CSV: the one CSV writer of the tables that are
// not reports (the stored runs' list).
func WriteCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	cw.Write(header)
	cw.WriteAll(rows)
	return cw.Error()
}
