// Package report turns measurements into what people read: a table shaped like the source
// articles' (kernels as rows, engines as columns, each cell the median with its ratio to
// native), the same in Markdown, JSON with every sample, and Go's benchmark format for
// benchstat. Every report carries its method and its environment, and can print the
// articles' historical figures beside the live rows.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/history"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
)

// Report is everything one bench run produced.
type Report struct {
	Method      Method           `json:"method"`
	Environment Environment      `json:"environment"`
	Results     []measure.Result `json:"results"`
	// Engines, when not empty, are the engines the run asked for, in the order of the
	// table's columns: an engine with no result (host_call alone, on an engine that does not
	// run kernels.wasm) keeps its column, its cells not applicable. Engines with results
	// that it does not name follow.
	Engines []string `json:"engines,omitempty"`
	// History, when not empty, is printed beside the live rows, labelled as historical.
	History []history.Figure `json:"history,omitempty"`
}

// Method says how the numbers were made; it is printed beside every table.
type Method struct {
	Runs   int `json:"runs"`
	Warmup int `json:"warmup"`
	// Executions is how many worker processes measured each cell, its runs spread over
	// them (0: one, before executions were kept).
	Executions int `json:"executions,omitempty"`
	// WarmupTime is how long a warm-up lasts at least (measure.Options.WarmupTime): calls
	// go on past Warmup until it has. Zero means the Warmup calls only.
	WarmupTime time.Duration `json:"warmup_time_ns,omitempty"`
	Timeout    time.Duration `json:"timeout_ns"`
	// MinSample is how long a sample lasts at least (measure.Options.MinSample): shorter
	// calls are repeated k times per sample. Zero means one call per sample.
	MinSample time.Duration `json:"min_sample_ns,omitempty"`
	// Cold is true when engines with a compilation cache compiled without it.
	Cold bool `json:"cold,omitempty"`
	// Timing describes the clock and what it times.
	Timing string `json:"timing"`
	// Partial, when set, says that the run stopped before its last cell and how ("stopped
	// by SIGTERM after 5 of 28 cells"): the report holds the cells done.
	Partial string `json:"partial,omitempty"`
}

// DefaultTiming is the timing method of measure.Measure run in package runner's workers.
const DefaultTiming = "time.Now/time.Since (monotonic clock) around each sample only, " +
	"in several worker processes per cell (executions, a kernel's engines taking turns), the cell's runs spread over them; a sample repeats the call k times (k grown, as testing.B grows b.N, " +
	"until a sample lasts the minimum, grown again with the samples started over if one lasts under half of it) " +
	"and reports its time divided by k; every call checked " +
	"(the first value of each sample against the catalogue, the sum of all against k × the expected value); " +
	"each execution's median of its samples, the cell's figure their geometric mean with a 95% Student's t interval " +
	"on their logarithms (one execution: the median of its samples with its order-statistics interval, as benchstat, " +
	"from 6 samples); × a ratio of geometric means with Welch's t interval, " +
	"min and max in the JSON; compile, instantiate and the first call reported apart; " +
	"load average, other processes' CPU time and the hypervisor's steal recorded per execution"

// Formats a report can be written in.
const (
	FormatTable    = "table"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
	FormatGoBench  = "gobench"
	// FormatCSV is one row per cell (WriteCSV), for a spreadsheet or a script.
	FormatCSV = "csv"
)

// Formats lists the formats Write accepts.
func Formats() []string {
	return []string{FormatTable, FormatMarkdown, FormatJSON, FormatCSV, FormatGoBench, FormatJIT, FormatJITMarkdown, FormatJITJSON, FormatJITCSV}
}

// Write writes the report in the named format, or says which formats exist.
func Write(w io.Writer, format string, r Report) error {
	return WriteWidth(w, format, r, 0)
}

// WriteWidth is Write for a reader of the given width in columns (a terminal's; 0: no
// limit): a text table wider than it is wrapped, its engine columns printed in parts that
// each repeat the kernel column. Markdown, JSON and gobench are never wrapped.
func WriteWidth(w io.Writer, format string, r Report, width int) error {
	switch format {
	case FormatTable:
		return writeText(w, r, false, width)
	case FormatMarkdown:
		return writeText(w, r, true, 0)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case FormatGoBench:
		return writeGoBench(w, r)
	case FormatCSV:
		return writeCSV(w, r)
	case FormatJIT, FormatJITMarkdown, FormatJITJSON, FormatJITCSV:
		return writeJIT(w, format, r)
	}
	return fmt.Errorf("unknown format %q: valid formats are %s", format, strings.Join(Formats(), ", "))
}

// grid is the live results arranged as the articles arrange them.
type grid struct {
	rows    []string // kernel labels, in order of first appearance
	engines []string // engines, in order of first appearance
	cells   map[[2]string]measure.Result
	kernel  map[string]string // a row's kernel, by label
	// runs is the number of timed runs asked for: a cell with fewer says so.
	runs int
}

func arrange(results []measure.Result, engines []string, runs int) grid {
	g := grid{cells: map[[2]string]measure.Result{}, kernel: map[string]string{}, runs: runs}
	for _, e := range engines {
		if !slices.Contains(g.engines, e) {
			g.engines = append(g.engines, e)
		}
	}
	for _, r := range results {
		label := r.Label()
		if !slices.Contains(g.rows, label) {
			g.rows = append(g.rows, label)
			g.kernel[label] = r.Kernel
		}
		if !slices.Contains(g.engines, r.Engine) {
			g.engines = append(g.engines, r.Engine)
		}
		g.cells[[2]string{label, r.Engine}] = r
	}
	return g
}

// NotApplicable is the cell of a kernel an engine does not run (engine.Applies): host_call,
// the call from a host into kernels.wasm, on an engine without kernels.wasm.
const NotApplicable = "n/a"

// absent renders a cell the report has no result for: NotApplicable for a kernel the engine
// does not run, else "–".
func (g grid) absent(row, eng string) string {
	if k, err := kernels.Lookup(g.kernel[row]); err == nil && engine.Applies(eng, k) != nil {
		return NotApplicable
	}
	return "–"
}

// cell renders one live cell: the median per call with its interval's half-width, its ratio
// to the row's baseline (native) from the same report with its interval, its k, and the flags of a cell to read with care.
func (g grid) cell(row, eng string) string {
	r, ok := g.cells[[2]string{row, eng}]
	if !ok {
		return g.absent(row, eng)
	}
	if r.Failed() {
		return r.Failure
	}
	s := FormatNs(r.Median) + " " + Spread(r)
	if v := ProcessVariation(r); v != "" {
		s += " (varies between processes: " + v + ")"
	}
	if x, ok := g.ratio(row, eng); ok {
		s += " " + FormatRatio(x.X)
		if ci := FormatRatioInterval(x); ci != "" {
			s += " (" + ci + ")"
		}
	}
	if r.Calls > 1 {
		s += " k=" + strconv.Itoa(r.Calls)
	}
	if g.runs > 0 && r.Runs < g.runs {
		s += fmt.Sprintf(" (%d run", r.Runs)
		if r.Runs != 1 {
			s += "s"
		}
		s += ")"
	}
	if r.Noise != nil && r.Noise.Busy {
		s += " busy"
	}
	return s
}

// Spread renders a cell's 95% interval as a half-width in percent of its median: "±0.8%",
// "±7.2% wide" when it reaches past ±5% (measure.Result.Wide), "±36% wide" from 10% (a
// tenth says nothing there), "±?" when the samples are too few for an interval (fewer than
// 6). The number is the page's (web/src/stats.ts, spread): both are tested on the cases of
// package formatcases.
func Spread(r measure.Result) string {
	if !r.CI.Valid() || r.Median <= 0 {
		return "±?"
	}
	half := max(r.Median-r.CI.Lo, r.CI.Hi-r.Median) / r.Median * 100
	digits := 1
	if half >= 10 {
		digits = 0 // "±36%": past 10% a tenth says nothing
	}
	s := "±" + toFixed(half, digits) + "%"
	if r.Wide() {
		s += " wide"
	}
	return s
}

// FormatDuration renders a duration as FormatNs does: "412 ms", "1.23 s".
func FormatDuration(d time.Duration) string { return FormatNs(float64(d)) }

// FormatNs renders nanoseconds as people read them, with three significant digits and no
// trailing zeros: "812 ns", "14.7 ns", "4.56 µs", "31 ns", "1.23 s"; "—" for NaN and ±Inf.
// It is the page's rule (web/src/format.ts, duration): both are tested on the cases of
// package formatcases.
func FormatNs(ns float64) string {
	switch {
	case math.IsNaN(ns) || math.IsInf(ns, 0):
		return "—"
	case ns < 1e3:
		return sigDigits(ns) + " ns"
	case ns < 1e6:
		return sigDigits(ns/1e3) + " µs"
	case ns < 1e9:
		return sigDigits(ns/1e6) + " ms"
	}
	return sigDigits(ns/1e9) + " s"
}

// sigDigits renders v with three significant digits and without trailing zeros, as the
// page's sig does: 0 digits after the point from 100 on, 1 from 10 on, 2 below.
func sigDigits(v float64) string {
	switch {
	case v >= 1e5:
		return exponent(v)
	case v >= 100:
		return toFixed(v, 0)
	case v >= 10:
		return strings.TrimSuffix(toFixed(v, 1), ".0")
	}
	return strings.TrimSuffix(strings.TrimRight(toFixed(v, 2), "0"), ".")
}

// toFixed is JavaScript's Number.prototype.toFixed for finite v: the exact value of v
// rounded to digits after the point, halves away from zero (Go's 'f' format rounds an
// exact half to even: 0.125 is "0.12" there and "0.13" in a browser).
// exponent writes a figure of 100,000 or more with three significant digits and its power
// of ten, as the page's expo does: 6.037e21 → "6.04e21", 100000 → "1e5" (an interval
// over two busy processes can reach that far; its digits in full would widen a table).
func exponent(v float64) string {
	m, e, _ := strings.Cut(strconv.FormatFloat(v, 'e', 2, 64), "e")
	m = strings.TrimSuffix(strings.TrimRight(m, "0"), ".")
	return m + "e" + strings.TrimLeft(strings.TrimPrefix(e, "+"), "0")
}

func toFixed(v float64, digits int) string {
	return new(big.Rat).SetFloat64(v).FloatString(digits)
}

// Grouped renders a decimal integer with its digits in threes for reading, as the page
// does (web/src/format.ts, grouped): "75430" → "75 430", the groups joined by a narrow
// no-break space (U+202F) so that a number never breaks across lines. Text that is not a
// decimal integer comes back as it is. Both are tested on the cases of package formatcases.
func Grouped(decimal string) string {
	sign, digits := "", decimal
	if strings.HasPrefix(digits, "-") {
		sign, digits = "-", digits[1:]
	}
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return decimal
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(d)
	}
	return b.String()
}

// FormatRatio renders a ratio to a baseline as the page does (web/src/format.ts, ratio):
// "×0.93", "×3.04", "×22.2", "×240"; "" for none (zero, negative, NaN or ±Inf). Both are
// tested on the cases of package formatcases.
func FormatRatio(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0) || x <= 0:
		return ""
	case x >= 1e5:
		return "×" + exponent(x)
	case x >= 100:
		return "×" + toFixed(x, 0)
	case x >= 10:
		return "×" + toFixed(x, 1)
	}
	return "×" + toFixed(x, 2)
}

// setupRow summarises an engine's phases over its cells: the medians of its cold and
// cached compilations, instantiations and first calls.
type setupRow struct {
	engine                             string
	loads, cached                      int
	cold, fromCache, instantiat, first time.Duration
	hasCold, hasCache, hasSetup        bool
	// caches: some of the engine's cells came from a compilation cache, so that "from
	// cache" counts something. An engine with no cache (an interpreter, a runtime that
	// compiles anew each time) shows none; nor does one whose cache was cold or turned
	// off (--cold), whose compilations the "compile, cold" column shows.
	caches bool
}

func setups(results []measure.Result, engines []string) []setupRow {
	var out []setupRow
	for _, eng := range engines {
		var cold, cached, inst, first []time.Duration
		row := setupRow{engine: eng}
		for _, r := range results {
			if r.Engine != eng {
				continue
			}
			if r.First > 0 {
				first = append(first, r.First)
			}
			if (r.Setup == engine.Setup{}) {
				continue
			}
			row.loads++
			inst = append(inst, r.Setup.Instantiate)
			if r.Setup.Cached {
				cached = append(cached, r.Setup.Compile)
			} else {
				cold = append(cold, r.Setup.Compile)
			}
		}
		if row.loads == 0 && len(first) == 0 {
			continue
		}
		row.cached = len(cached)
		row.hasCold, row.hasCache, row.hasSetup = len(cold) > 0, len(cached) > 0, row.loads > 0
		row.caches = row.hasCache
		_, row.cold, _ = measure.Stats(cold)
		_, row.fromCache, _ = measure.Stats(cached)
		_, row.instantiat, _ = measure.Stats(inst)
		_, row.first, _ = measure.Stats(first)
		out = append(out, row)
	}
	return out
}

// line is the whole method, beside a Markdown table: counts, the timing and the legend.
func (m Method) line() string {
	s := m.counts()
	if m.Timing != "" {
		s += "; " + m.Timing
	}
	s += "; ±: half-width of the 95% confidence interval (over the executions, or of one execution's median: ±? under 6 samples), \"wide\" past ±5%; \"busy\": other processes took over half a core"
	return s
}

// counts says what each cell ran: its samples, warm-up, sample minimum, time limit.
func (m Method) counts() string {
	s := fmt.Sprintf("median of %s after %s", plural(m.Runs, "timed sample"), plural(m.Warmup, "warm-up call"))
	if m.Executions > 1 {
		s = fmt.Sprintf("%s per cell, the geometric mean of their medians, %s spread over %d worker processes each warmed up by %s",
			plural(m.Runs, "timed sample"), "the samples", m.Executions, plural(m.Warmup, "call"))
	}
	if m.Warmup > 0 && m.WarmupTime > 0 {
		s += fmt.Sprintf(" and more until the warm-up lasted %v", m.WarmupTime)
	}
	if m.MinSample > 0 {
		s += fmt.Sprintf(", each sample at least %v (k calls per sample)", m.MinSample)
	} else {
		s += ", one call per sample"
	}
	if m.Timeout > 0 {
		s += fmt.Sprintf(", time limit %v per worker process (runs that would not fit are skipped: such a cell says how many ran)", m.Timeout)
	}
	if m.Cold {
		s += ", compiled without the on-disk cache (cold)"
	}
	return s
}

func (e Environment) line() string {
	s := fmt.Sprintf("%s, %d cores, GOMAXPROCS %d, %s %s/%s, wazero %s, yaegi %s",
		e.CPU, e.Cores, e.GOMAXPROCS, e.Go, e.OS, e.Arch, e.Module("wazero"), e.Module("yaegi"))
	if len(e.Runtimes) > 0 {
		rts := make([]string, len(e.Runtimes))
		for i, r := range e.Runtimes {
			rts[i] = r.Engine + ": " + r.Version
		}
		s += "; runtimes: " + strings.Join(rts, ", ") + ";"
	} else {
		s += ","
	}
	return s + " " + e.Time.UTC().Format(time.RFC3339)
}

// plural renders "1 run", "5 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
