package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wasmgap/wasmgap/internal/history"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
)

// doc collects the report's parts and prints them as plain text or Markdown.
type doc struct {
	w  io.Writer
	md bool
	// width, when above 0, is the text's width in columns (a terminal's): a table wider
	// than it is wrapped, its columns printed in parts that each repeat the first column.
	width int
	err   error
}

func (d *doc) printf(format string, args ...any) {
	if d.err == nil {
		_, d.err = fmt.Fprintf(d.w, format, args...)
	}
}

// heading prints a section title.
func (d *doc) heading(title string) {
	if d.md {
		d.printf("### %s\n\n", title)
		return
	}
	d.printf("%s\n\n", title)
}

// para prints a labelled paragraph: "method: …".
func (d *doc) para(label, text string) {
	if d.md {
		d.printf("**%s:** %s\n\n", label, text)
		return
	}
	d.printf("%s: %s\n", label, text)
}

// table prints a header and rows, aligned in text, as a pipe table in Markdown.
func (d *doc) table(header []string, rows [][]string) {
	if d.md {
		esc := func(cells []string) string {
			out := make([]string, len(cells))
			for i, c := range cells {
				out[i] = strings.ReplaceAll(c, "|", `\|`)
			}
			return "| " + strings.Join(out, " | ") + " |\n"
		}
		d.printf("%s", esc(header))
		sep := make([]string, len(header))
		for i := range sep {
			sep[i] = "---"
			if i > 0 {
				sep[i] = "---:"
			}
		}
		d.printf("|%s|\n", strings.Join(sep, "|"))
		for _, r := range rows {
			d.printf("%s", esc(r))
		}
		d.printf("\n")
		return
	}
	widths := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for i, part := range columnParts(widths, d.width) {
		if i > 0 {
			d.printf("(continued)\n")
		}
		line := func(cells []string) {
			var b strings.Builder
			for _, i := range part {
				c := ""
				if i < len(cells) {
					c = cells[i]
				}
				pad := widths[i] - utf8.RuneCountInString(c)
				switch {
				case i == 0:
					b.WriteString(c + strings.Repeat(" ", pad))
				default:
					b.WriteString("   " + strings.Repeat(" ", pad) + c)
				}
			}
			d.printf("%s\n", strings.TrimRight(b.String(), " "))
		}
		line(header)
		for _, r := range rows {
			line(r)
		}
		d.printf("\n")
	}
}

// columnParts splits a text table's columns, of the given widths, into parts that each
// fit in width (0: no limit), each part led by the first column: the indices of each
// part's columns. A column wider than width alone still gets a part of its own.
func columnParts(widths []int, width int) [][]int {
	all := make([]int, len(widths))
	for i := range all {
		all[i] = i
	}
	total := 0
	for i, w := range widths {
		total += w
		if i > 0 {
			total += 3
		}
	}
	if width <= 0 || total <= width || len(widths) <= 2 {
		return [][]int{all}
	}
	var parts [][]int
	part, used := []int{0}, widths[0]
	for i := 1; i < len(widths); i++ {
		if len(part) > 1 && used+3+widths[i] > width {
			parts = append(parts, part)
			part, used = []int{0}, widths[0]
		}
		part = append(part, i)
		used += 3 + widths[i]
	}
	return append(parts, part)
}

func writeText(w io.Writer, r Report, md bool, width int) error {
	d := &doc{w: w, md: md, width: width}
	g := arrange(r.Results, r.Engines, r.Method.Runs)

	if r.Method.Partial != "" {
		d.para("partial run", r.Method.Partial+": the cells not run show –")
		if !md {
			d.printf("\n")
		}
	}
	d.heading("Kernels: median time per call (×ratio to native, same run, same machine)")
	header := append([]string{"kernel"}, g.engines...)
	if md {
		var rows [][]string
		for _, row := range g.rows {
			cells := []string{row}
			for _, eng := range g.engines {
				cells = append(cells, g.cell(row, eng))
			}
			rows = append(rows, cells)
		}
		d.table(header, rows)
	} else {
		writeLiveTable(d, g)
	}

	if s := setups(r.Results, g.engines); len(s) > 0 {
		d.heading("Phases: once per worker, not in the times above (median over the engine's cells): compile cold and from the cache, instantiate, the first call alone, then the steady state of the table above")
		var rows [][]string
		dur := func(ok bool, d time.Duration) string {
			if !ok {
				return "–"
			}
			return FormatDuration(d)
		}
		for _, s := range s {
			cache := "–" // no setup, or no cache to come from
			if s.caches {
				cache = fmt.Sprintf("%d of %d", s.cached, s.loads)
			}
			rows = append(rows, []string{s.engine, dur(s.hasCold, s.cold), dur(s.hasCache, s.fromCache), dur(s.hasSetup, s.instantiat),
				cache, dur(s.first > 0, s.first)})
		}
		d.table([]string{"engine", "compile, cold", "compile, cached", "instantiate", "from cache", "first call"}, rows)
	}

	if anyFirst(r.Results) {
		d.heading("First call: the very first call alone, before warm-up, beside the steady median of the table above")
		var rows [][]string
		for _, row := range g.rows {
			cells := []string{row}
			for _, eng := range g.engines {
				c, ok := g.cells[[2]string{row, eng}]
				switch {
				case !ok:
					cells = append(cells, g.absent(row, eng))
				case c.Failed() || c.First <= 0:
					cells = append(cells, "–")
				default:
					cells = append(cells, fmt.Sprintf("%s (steady %s)", FormatDuration(c.First), FormatNs(c.Median)))
				}
			}
			rows = append(rows, cells)
		}
		d.table(header, rows)
	}

	if md {
		d.para("method", r.Method.line())
	} else {
		d.wrapped("method", r.Method.short())
	}
	if n := noiseLine(r.Results); n != "" {
		d.para("machine", n)
	}
	d.para("environment", r.Environment.line())
	if len(r.History) > 0 {
		writeHistory(d, r.History, g)
	}
	return d.err
}

// writeHistory prints the historical figures table by table, each with the live column of
// the report's first engine beside them.
func writeHistory(d *doc, figs []history.Figure, g grid) {
	if !d.md {
		d.printf("\n")
	}
	d.heading("Historical figures from the source articles: other machines, other years, " +
		"printed as published; not comparable to the live rows except as orders of magnitude")
	live := ""
	if len(g.engines) > 0 {
		live = g.engines[0]
	}
	for _, table := range history.Tables() {
		var in []history.Figure
		for _, f := range figs {
			if f.Table == table {
				in = append(in, f)
			}
		}
		if len(in) == 0 {
			continue
		}
		var cols []string
		hardware := map[string]string{}
		var kernelsIn []string
		for _, f := range in {
			if !slices.Contains(cols, f.Label) {
				cols = append(cols, f.Label)
				hardware[f.Label] = f.Hardware
			}
			if !slices.Contains(kernelsIn, f.Kernel) {
				kernelsIn = append(kernelsIn, f.Kernel)
			}
		}
		slices.SortStableFunc(kernelsIn, func(a, b string) int {
			return slices.Index(kernels.Names(), a) - slices.Index(kernels.Names(), b)
		})

		var hw []string
		for _, c := range cols {
			if !slices.Contains(hw, hardware[c]) {
				hw = append(hw, hardware[c])
			}
		}
		d.heading(fmt.Sprintf("historical: %s — %s — %q", table, strings.Join(hw, "; "), in[0].Article))

		header := []string{"kernel"}
		if live != "" {
			header = append(header, "this machine: "+live)
		}
		header = append(header, cols...)
		var notes []string
		var rows [][]string
		for _, name := range kernelsIn {
			var rowArgs []int
			for _, f := range in {
				if f.Kernel == name {
					rowArgs = f.Args
					break
				}
			}
			k := kernels.Kernel{Name: name}
			label := k.Label(rowArgs)
			cells := []string{label}
			if live != "" {
				cells = append(cells, g.cell(label, live))
			}
			for _, c := range cols {
				cells = append(cells, historicalCell(in, name, c, rowArgs, &notes))
			}
			rows = append(rows, cells)
		}
		d.table(header, rows)
		for i, n := range notes {
			if d.md {
				d.printf("%d. %s\n", i+1, n)
			} else {
				d.printf("  [%d] %s\n", i+1, n)
			}
		}
		if len(notes) > 0 {
			d.printf("\n")
		}
	}
}

// historicalCell renders the figure of one kernel in one column as published, with a
// note marker when the article's program differs.
func historicalCell(in []history.Figure, kernel, col string, rowArgs []int, notes *[]string) string {
	for _, f := range in {
		if f.Kernel != kernel || f.Label != col {
			continue
		}
		s := f.Text
		if f.Failed() {
			s = f.Failure
		} else if !strings.HasSuffix(s, "s") {
			s += "s"
		}
		if !slices.Equal(f.Args, rowArgs) {
			k := kernels.Kernel{Name: f.Kernel}
			s += " at " + k.Label(f.Args)
		}
		if f.Note != "" {
			*notes = append(*notes, fmt.Sprintf("%s, %s: %s", col, f.Kernel, f.Note))
			s += fmt.Sprintf(" [%d]", len(*notes))
		}
		return s
	}
	return ""
}

func anyFirst(results []measure.Result) bool {
	return slices.ContainsFunc(results, func(r measure.Result) bool { return r.First > 0 })
}

// noiseLine summarises the machine's noise over the cells: the load averages, the other
// processes' CPU, and how many cells were measured on a busy machine.
func noiseLine(results []measure.Result) string {
	var loads, others []float64
	busy := 0
	for _, r := range results {
		if r.Noise == nil {
			continue
		}
		loads = append(loads, r.Noise.Load1)
		others = append(others, r.Noise.OtherCPU)
		if r.Noise.Busy {
			busy++
		}
	}
	if len(loads) == 0 {
		return ""
	}
	return fmt.Sprintf("load average %.2f to %.2f, other processes %.2f to %.2f cores on average during the samples; %d of %d cells measured busy",
		slices.Min(loads), slices.Max(loads), slices.Min(others), slices.Max(others), busy, len(loads))
}
