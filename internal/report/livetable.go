package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// textWidth is the width a paragraph is wrapped at when the reader's is not known.
const textWidth = 100

// units are the time units of the tables, the largest first.
var units = []struct {
	size float64
	name string
}{{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1, "ns"}}

// columnUnit is the one unit every median of a column can be written in with three
// significant digits and at most four before the point (9.44ms to 1010ms), or "" when
// the medians span too much for one.
func columnUnit(medians []float64) (string, float64) {
	if len(medians) == 0 {
		return "", 0
	}
	lo, hi := math.Inf(1), 0.0
	for _, m := range medians {
		lo, hi = min(lo, m), max(hi, m)
	}
	for _, u := range units {
		if lo/u.size >= 1 && hi/u.size < 10000 {
			return u.name, u.size
		}
	}
	return "", 0
}

// inUnit renders ns in a column's unit with three significant digits: "1010", "249",
// "9.44".
func inUnit(ns, size float64) string {
	v := ns / size
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// withUnit renders ns with its own unit, the number and the unit apart so that columns
// of them align: "38.9 ns", "1.01 s".
func withUnit(ns float64) string {
	num, unit, ok := strings.Cut(FormatNs(ns), " ")
	if !ok {
		return num
	}
	return num + " " + padRight(unit, 2) // "1.01 s " aligns with "249 ms"
}

// padLeft and padRight pad s with spaces to width runes.
func padLeft(s string, width int) string {
	return strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s))) + s
}

func padRight(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s)))
}

// writeLiveTable prints the live cells as the articles' tables read: each engine's
// medians aligned, in one unit given in the header where the column's values fit it, with
// the ratio to native beside them; under each row, a second line with each cell's interval
// and what to read with care (wide, fewer runs); "busy" once, in a footer naming the cells
// it touched; then a legend.
func writeLiveTable(d *doc, g grid) {
	type col struct {
		unit          string
		size          float64
		median, ratio []string // by row
		spread, rci   []string // by row: the second line's interval and ratio interval
		mw, rw        int
	}
	cols := make([]col, len(g.engines))
	anyInterval := false
	var busy []string
	for ci, eng := range g.engines {
		var medians []float64
		for _, row := range g.rows {
			if r, ok := g.cells[[2]string{row, eng}]; ok && !r.Failed() {
				medians = append(medians, r.Median)
			}
		}
		c := &cols[ci]
		c.unit, c.size = columnUnit(medians)
		for _, row := range g.rows {
			r, ok := g.cells[[2]string{row, eng}]
			var median, ratio, ratioCI, spread string
			switch {
			case !ok:
				median = g.absent(row, eng)
			case r.Failed():
				median = r.Failure
			default:
				if c.unit != "" {
					median = inUnit(r.Median, c.size)
				} else {
					median = withUnit(r.Median)
				}
				if x, ok := g.ratio(row, eng); ok {
					ratio, ratioCI = FormatRatio(x.X), FormatRatioInterval(x)
				}
				spread = cellSpread(r, g.runs)
				if r.CI.Valid() {
					anyInterval = true
				}
				if r.Noise != nil && r.Noise.Busy {
					busy = append(busy, row+" on "+eng)
				}
			}
			c.median, c.ratio, c.spread, c.rci = append(c.median, median), append(c.ratio, ratio), append(c.spread, spread), append(c.rci, ratioCI)
		}
	}
	// Without any interval (every cell under 6 runs) the second lines would only repeat
	// "±?": the legend says it once.
	for ci := range cols {
		c := &cols[ci]
		for i := range g.rows {
			if !anyInterval {
				c.spread[i] = strings.TrimSpace(strings.TrimPrefix(c.spread[i], "±?"))
			}
			c.mw = max(c.mw, utf8.RuneCountInString(c.median[i]), utf8.RuneCountInString(c.spread[i]))
			c.rw = max(c.rw, utf8.RuneCountInString(c.ratio[i]), utf8.RuneCountInString(c.rci[i]))
		}
	}
	header := []string{"kernel"}
	for ci, eng := range g.engines {
		h := eng
		if cols[ci].unit != "" {
			h += " (" + cols[ci].unit + ")"
		}
		header = append(header, h)
	}
	cell := func(c col, left, right string) string {
		if c.rw == 0 {
			return padLeft(left, c.mw)
		}
		return padLeft(left, c.mw) + " " + padRight(right, c.rw)
	}
	var rows [][]string
	for i, row := range g.rows {
		line, second := []string{row}, []string{""}
		hasSecond := false
		for _, c := range cols {
			line = append(line, cell(c, c.median[i], c.ratio[i]))
			second = append(second, cell(c, c.spread[i], c.rci[i]))
			hasSecond = hasSecond || c.spread[i] != "" || c.rci[i] != ""
		}
		rows = append(rows, line)
		if hasSecond {
			rows = append(rows, second)
		}
	}
	d.table(header, rows)

	legend := "each cell: the median time per call, then ×: its ratio to native's in this run"
	if anyInterval {
		legend += "; under it, ±: the half-width of the median's 95% confidence interval (±? under 6 runs), \"wide\" past ±5%, and ×'s 95% interval where both cells ran in 2 processes or more"
	} else {
		legend += "; no interval: each cell had under 6 runs (--runs 6 or more gives one)"
	}
	legend += "; \"varies ×N\": the cell's worker processes differ N-fold, more than each one's own samples do"
	legend += "; \"(n runs)\": fewer runs than asked fitted the time limit; k (calls per sample) and every sample: --format json"
	d.wrapped("legend", legend)
	if len(busy) > 0 {
		which := "all of them"
		if len(busy) < len(g.cells) {
			which = strings.Join(busy[:min(len(busy), 8)], ", ")
			if len(busy) > 8 {
				which += fmt.Sprintf(" and %d more", len(busy)-8)
			}
		}
		d.wrapped("busy", fmt.Sprintf("%d of %d cells were measured while other processes took over half a core (their times may be high): %s", len(busy), len(g.cells), which))
	}
	d.printf("\n")
}

// cellSpread is a cell's second line: its interval (Spread) and, when fewer runs than
// asked fitted the time limit, how many ran.
func cellSpread(r measure.Result, asked int) string {
	s := Spread(r)
	if v := ProcessVariation(r); v != "" {
		s += " varies " + v
	}
	if asked > 0 && r.Runs < asked {
		s += " (" + plural(r.Runs, "run") + ")"
	}
	return s
}

// wrapped prints a labelled paragraph wrapped at the doc's width (textWidth when it has
// none), its later lines indented: plain text only, Markdown wraps itself.
func (d *doc) wrapped(label, text string) {
	if d.md {
		d.para(label, text)
		return
	}
	width := d.width
	if width <= 0 {
		width = textWidth
	}
	d.printf("%s\n", wrap(label+": "+text, width, "  "))
}

// wrap breaks text at spaces into lines of at most width runes (a longer word stands
// alone), the lines after the first indented.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case line+1+n > width:
			b.WriteString("\n" + indent)
			line = utf8.RuneCountInString(indent)
		default:
			b.WriteString(" ")
			line++
		}
		b.WriteString(word)
		line += n
	}
	return b.String()
}

// short is the method in a few lines, for the text table: what each cell ran and how it
// was timed; Markdown and JSON carry the whole method (Method.line, Timing).
func (m Method) short() string {
	return m.counts() + "; each worker process of its own, the engines of a kernel taking turns, timed with a monotonic clock around the samples only, " +
		"every call checked against the catalogue; setup and the first call reported apart (Phases, First call). " +
		"The whole method: --format markdown or json."
}
