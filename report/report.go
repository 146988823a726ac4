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
	"slices"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/history"
	"github.com/wasmgap/wasmgap/measure"
)

// Report is everything one bench run produced.
type Report struct {
	Method      Method           `json:"method"`
	Environment Environment      `json:"environment"`
	Results     []measure.Result `json:"results"`
	// History, when not empty, is printed beside the live rows, labelled as historical.
	History []history.Figure `json:"history,omitempty"`
}

// Method says how the numbers were made; it is printed beside every table.
type Method struct {
	Runs    int           `json:"runs"`
	Warmup  int           `json:"warmup"`
	Timeout time.Duration `json:"timeout_ns"`
	// Timing describes the clock and what it times.
	Timing string `json:"timing"`
}

// DefaultTiming is the timing method of measure.Measure run in package runner's workers.
const DefaultTiming = "time.Now/time.Since (monotonic clock) around the kernel call only, " +
	"in a worker process per cell; value checked against the catalogue on every run; " +
	"median of the timed runs, min and max in the JSON; compile and instantiate reported apart"

// Formats a report can be written in.
const (
	FormatTable    = "table"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
	FormatGoBench  = "gobench"
)

// Formats lists the formats Write accepts.
func Formats() []string {
	return []string{FormatTable, FormatMarkdown, FormatJSON, FormatGoBench}
}

// Write writes the report in the named format, or says which formats exist.
func Write(w io.Writer, format string, r Report) error {
	switch format {
	case FormatTable:
		return writeText(w, r, false)
	case FormatMarkdown:
		return writeText(w, r, true)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case FormatGoBench:
		return writeGoBench(w, r)
	}
	return fmt.Errorf("unknown format %q: valid formats are %s", format, strings.Join(Formats(), ", "))
}

// grid is the live results arranged as the articles arrange them.
type grid struct {
	rows    []string // kernel labels, in order of first appearance
	engines []string // engines, in order of first appearance
	cells   map[[2]string]measure.Result
	// runs is the number of timed runs asked for: a cell with fewer says so.
	runs int
}

func arrange(results []measure.Result, runs int) grid {
	g := grid{cells: map[[2]string]measure.Result{}, runs: runs}
	for _, r := range results {
		label := r.Label()
		if !slices.Contains(g.rows, label) {
			g.rows = append(g.rows, label)
		}
		if !slices.Contains(g.engines, r.Engine) {
			g.engines = append(g.engines, r.Engine)
		}
		g.cells[[2]string{label, r.Engine}] = r
	}
	return g
}

// cell renders one live cell: the median, and its ratio to native from the same report.
func (g grid) cell(row, eng string) string {
	r, ok := g.cells[[2]string{row, eng}]
	if !ok {
		return "–"
	}
	if r.Failed() {
		return r.Failure
	}
	s := FormatDuration(r.Median)
	if base, ok := g.cells[[2]string{row, engine.Native}]; ok && eng != engine.Native && !base.Failed() && base.Median > 0 {
		s += " " + FormatRatio(float64(r.Median)/float64(base.Median))
	}
	if g.runs > 0 && r.Runs < g.runs {
		s += fmt.Sprintf(" (%d run", r.Runs)
		if r.Runs != 1 {
			s += "s"
		}
		s += ")"
	}
	return s
}

// FormatDuration renders a duration with three significant digits: "412ms", "1.23s".
func FormatDuration(d time.Duration) string {
	units := []struct {
		size time.Duration
		name string
	}{{time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "µs"}, {time.Nanosecond, "ns"}}
	for _, u := range units {
		if d >= u.size || u.size == time.Nanosecond {
			v := float64(d) / float64(u.size)
			switch {
			case v >= 100 || u.size == time.Nanosecond:
				return fmt.Sprintf("%.0f%s", v, u.name)
			case v >= 10:
				return fmt.Sprintf("%.1f%s", v, u.name)
			default:
				return fmt.Sprintf("%.2f%s", v, u.name)
			}
		}
	}
	return d.String()
}

// FormatRatio renders an engine/native ratio: "×0.93", "×3.1", "×240".
func FormatRatio(x float64) string {
	switch {
	case x < 1:
		return fmt.Sprintf("×%.2f", x)
	case x < 10:
		return fmt.Sprintf("×%.1f", x)
	}
	return fmt.Sprintf("×%.0f", x)
}

// setupRow summarises an engine's one-off costs over its cells.
type setupRow struct {
	engine              string
	loads, cached       int
	compile, instantiat time.Duration
}

func setups(results []measure.Result, engines []string) []setupRow {
	var out []setupRow
	for _, eng := range engines {
		var compile, inst []time.Duration
		row := setupRow{engine: eng}
		for _, r := range results {
			if r.Engine != eng || (r.Setup == engine.Setup{}) {
				continue
			}
			compile = append(compile, r.Setup.Compile)
			inst = append(inst, r.Setup.Instantiate)
			if r.Setup.Cached {
				row.cached++
			}
		}
		if len(compile) == 0 {
			continue
		}
		row.loads = len(compile)
		_, row.compile, _ = measure.Stats(compile)
		_, row.instantiat, _ = measure.Stats(inst)
		out = append(out, row)
	}
	return out
}

func (m Method) line() string {
	s := fmt.Sprintf("median of %s after %s", plural(m.Runs, "timed run"), plural(m.Warmup, "warm-up run"))
	if m.Timeout > 0 {
		s += fmt.Sprintf(", time limit %v per cell (runs that would not fit are skipped: such a cell says how many ran)", m.Timeout)
	}
	if m.Timing != "" {
		s += "; " + m.Timing
	}
	return s
}

func (e Environment) line() string {
	return fmt.Sprintf("%s, %d cores, GOMAXPROCS %d, %s %s/%s, wazero %s, yaegi %s, %s",
		e.CPU, e.Cores, e.GOMAXPROCS, e.Go, e.OS, e.Arch, e.Module("wazero"), e.Module("yaegi"),
		e.Time.UTC().Format(time.RFC3339))
}

// plural renders "1 run", "5 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
