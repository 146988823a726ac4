package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// Read decodes a report written by Write in FormatJSON (`wasmgap bench --format json`),
// or says why the bytes are not one: not JSON, JSON of another shape, or a report without
// cells.
func Read(r io.Reader) (Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Report{}, err
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return Report{}, fmt.Errorf("not a JSON report (write one with `wasmgap bench --format json`): %w", err)
	}
	for _, key := range []string{"method", "environment", "results"} {
		if _, ok := probe[key]; !ok {
			var keys []string
			for k := range probe {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return Report{}, fmt.Errorf("not a `wasmgap bench --format json` report: it has no %q field (its fields are %s; a report has method, environment and results)", key, strings.Join(keys, ", "))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var rep Report
	if err := dec.Decode(&rep); err != nil {
		return Report{}, fmt.Errorf("not a `wasmgap bench --format json` report: %w", err)
	}
	if len(rep.Results) == 0 {
		return Report{}, errors.New("the report has no cells: nothing to compare")
	}
	for i, res := range rep.Results {
		if res.Kernel == "" || res.Engine == "" {
			return Report{}, fmt.Errorf("cell %d of the report names no kernel or engine", i+1)
		}
	}
	return rep, nil
}

// Change is one cell measured in two reports.
type Change struct {
	// Label and Engine name the cell: "fib_it(40)", "native".
	Label  string `json:"label"`
	Engine string `json:"engine"`
	// Old and New summarise each side (ns per call): the median and its 95% interval,
	// over the executions where the cell has two or more, else recomputed from the
	// samples.
	Old Side `json:"old"`
	New Side `json:"new"`
	// Delta is New's median over Old's, minus one: +0.25 is 25% slower.
	Delta float64 `json:"delta"`
	// Ratio is New over Old with its 95% interval from both sides' executions
	// (measure.RatioOf), when each side has two or more; nil otherwise.
	Ratio *measure.Ratio `json:"ratio,omitempty"`
	// P is the p-value of no change: with executions on both sides, Welch's t test on the
	// logarithms of the executions' medians (Ratio.P), so that two runs that differ only
	// by which processes they drew are not significant; with one process a side, the
	// Mann–Whitney U test of the two samples (benchstat's test). 1 when it cannot be
	// computed.
	P float64 `json:"p"`
	// Significant is true when P is below the comparison's α and, for the U test, both
	// sides have at least the samples it needs to reach it, as benchstat decides.
	Significant bool `json:"significant"`
	// Note says why a cell cannot be compared ("failed in the new run: …", "need ≥ 4
	// samples a side …"); such a cell is not significant.
	Note string `json:"note,omitempty"`
}

// Side is one report's summary of a cell.
type Side struct {
	Median     float64          `json:"median_ns"`
	CI         measure.Interval `json:"ci"`
	Samples    int              `json:"samples"`
	Executions int              `json:"executions,omitempty"`
	Calls      int              `json:"calls,omitempty"`
	Failure    string           `json:"failure,omitempty"`
}

// Comparison is the cells two reports share, in the old report's order, and the cells
// only one of them has.
type Comparison struct {
	Changes []Change `json:"changes"`
	OnlyOld []string `json:"only_old,omitempty"`
	OnlyNew []string `json:"only_new,omitempty"`
	// Alpha is the significance level the changes were judged at.
	Alpha float64 `json:"alpha"`
	// OldBusy and NewBusy count each report's cells measured busy (measure.Noise.Busy):
	// a change there may be the machine's.
	OldBusy int `json:"old_busy,omitempty"`
	NewBusy int `json:"new_busy,omitempty"`
}

// Alpha is the U test's significance level, benchstat's default.
const Alpha = 0.05

// CompareOptions tune Compare; the zero value is benchstat's default.
type CompareOptions struct {
	// Alpha is the significance level: a change is reported when the U test's p is
	// below it. Zero means Alpha (0.05); otherwise it must lie in (0, 1).
	Alpha float64
}

// SamplesNeeded is the number of samples a side the Mann–Whitney U test needs before
// any difference can reach a p below alpha: with n samples a side the smallest two-sided
// p, two samples that do not overlap at all, is 2 / C(2n, n) (0.1 for 3, 0.029 for 4).
func SamplesNeeded(alpha float64) int {
	const limit = 64
	minP := 2.0 // 2 / C(2n, n), updated from n-1 to n
	for n := 1; n <= limit; n++ {
		// C(2n, n) = C(2n-2, n-1) · (2n)(2n-1) / n²
		minP /= float64(2*n) * float64(2*n-1) / float64(n*n)
		if minP <= alpha {
			return n
		}
	}
	return limit
}

// cellKey names a cell: "fib_it(40) on native".
func cellKey(r measure.Result) string { return r.Label() + " on " + r.Engine }

func side(r measure.Result) Side {
	s := Side{Samples: len(r.Samples), Calls: r.Calls, Failure: r.Failure}
	switch {
	case r.Failed():
	case len(r.Executions) >= 2:
		s.Executions = len(r.Executions)
		s.Median, s.CI = measure.AcrossExecutions(r.Executions)
	case len(r.Samples) > 0:
		_, s.Median, _, s.CI = measure.Summarize(r.Samples)
	}
	return s
}

// busyCells counts a report's cells measured busy.
func busyCells(r Report) int {
	n := 0
	for _, c := range r.Results {
		if busy(c) {
			n++
		}
	}
	return n
}

// Compare matches the cells of two reports (same kernel, arguments and engine) and says
// for each how its median changed and whether the change is significant at Alpha, as
// CompareWith does with the zero options.
func Compare(old, new Report) (Comparison, error) {
	return CompareWith(old, new, CompareOptions{})
}

// CompareWith matches the cells of two reports (same kernel, arguments and engine) and
// says for each how its median changed and whether the change is significant, as
// benchstat decides it: the Mann–Whitney U test's p is below opt.Alpha and both sides
// have SamplesNeeded(opt.Alpha) samples. It fails when α is out of range or the reports
// have no cell in common.
func CompareWith(old, new Report, opt CompareOptions) (Comparison, error) {
	alpha := opt.Alpha
	if alpha == 0 {
		alpha = Alpha
	}
	if !(alpha > 0 && alpha < 1) {
		return Comparison{}, fmt.Errorf("alpha %v is out of range: a significance level lies between 0 and 1 (benchstat's default is %v)", opt.Alpha, Alpha)
	}
	c := Comparison{Alpha: alpha, OldBusy: busyCells(old), NewBusy: busyCells(new)}
	newCells := map[string]measure.Result{}
	var newOrder []string
	for _, r := range new.Results {
		k := cellKey(r)
		if _, dup := newCells[k]; !dup {
			newOrder = append(newOrder, k)
		}
		newCells[k] = r
	}
	seen := map[string]bool{}
	for _, o := range old.Results {
		k := cellKey(o)
		if seen[k] {
			continue
		}
		seen[k] = true
		n, ok := newCells[k]
		if !ok {
			c.OnlyOld = append(c.OnlyOld, k)
			continue
		}
		c.Changes = append(c.Changes, compareCell(o, n, alpha))
	}
	for _, k := range newOrder {
		if !seen[k] {
			c.OnlyNew = append(c.OnlyNew, k)
		}
	}
	if len(c.Changes) == 0 {
		return c, fmt.Errorf("the two reports have no cell in common (same kernel, arguments and engine): the first has %s; the second has %s",
			listCells(c.OnlyOld), listCells(c.OnlyNew))
	}
	return c, nil
}

func listCells(cells []string) string {
	if len(cells) > 6 {
		return strings.Join(cells[:6], ", ") + fmt.Sprintf(" and %d more", len(cells)-6)
	}
	return strings.Join(cells, ", ")
}

func compareCell(o, n measure.Result, alpha float64) Change {
	ch := Change{Label: o.Label(), Engine: o.Engine, Old: side(o), New: side(n), P: 1}
	switch {
	case o.Failed():
		ch.Note = "failed in the old run: " + o.Failure
		return ch
	case n.Failed():
		ch.Note = "failed in the new run: " + n.Failure
		return ch
	case len(o.Samples) == 0 || len(n.Samples) == 0:
		ch.Note = "no samples in the JSON"
		return ch
	}
	if ch.Old.Executions >= 2 && ch.New.Executions >= 2 {
		r := measure.RatioOf(n.Executions, o.Executions)
		ch.Ratio, ch.Delta, ch.P = &r, r.X-1, r.P()
		ch.Significant = ch.P < alpha
		return ch
	}
	if ch.Old.Median > 0 {
		ch.Delta = ch.New.Median/ch.Old.Median - 1
	}
	th := benchmath.Thresholds{CompareAlpha: alpha}
	// NewSample sorts what it is given: copies keep the runs' samples in the order they ran.
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(o.Samples), &th), benchmath.NewSample(slices.Clone(n.Samples), &th))
	if !math.IsNaN(cmp.P) {
		ch.P = cmp.P
	}
	if need := SamplesNeeded(alpha); len(o.Samples) < need || len(n.Samples) < need {
		ch.Note = fmt.Sprintf("~ need ≥ %d samples a side (%d and %d)", need, len(o.Samples), len(n.Samples))
		return ch
	}
	ch.Significant = ch.P < alpha
	return ch
}

// Verdict renders a change as people read it: "+102.3%", "−4.1%", or "~" with the
// p-value ("~ no significant difference (p=0.394)"), or the note of a cell that cannot be compared.
func (ch Change) Verdict() string {
	switch {
	case ch.Note != "":
		return ch.Note
	case !ch.Significant:
		return fmt.Sprintf("~ no significant difference (p=%.3f)", ch.P)
	}
	return fmt.Sprintf("%+.1f%%", ch.Delta*100)
}

// ComparisonFormats lists the formats WriteComparison accepts.
func ComparisonFormats() []string {
	return []string{FormatTable, FormatMarkdown, FormatJSON, FormatCSV}
}

// WriteComparison writes a comparison as a table (FormatTable), Markdown, JSON or CSV, with
// the two reports' environments and a line on how significance is judged.
func WriteComparison(w io.Writer, format string, c Comparison, oldName, newName string, old, new Report) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	case FormatCSV:
		return writeComparisonCSV(w, c)
	case FormatTable, FormatMarkdown:
	default:
		return fmt.Errorf("unknown format %q: valid formats are %s", format, strings.Join(ComparisonFormats(), ", "))
	}
	d := &doc{w: w, md: format == FormatMarkdown}
	d.heading(fmt.Sprintf("Change per cell: %s → %s (median time per call, ± its 95%% interval)", oldName, newName))
	var rows [][]string
	for _, ch := range c.Changes {
		rows = append(rows, []string{ch.Label, ch.Engine, sideText(ch.Old), sideText(ch.New), ch.Verdict(), pText(ch)})
	}
	d.table([]string{"kernel", "engine", oldName, newName, "change", "p"}, rows)
	sig := 0
	for _, ch := range c.Changes {
		if ch.Significant {
			sig++
		}
	}
	d.para("cells", fmt.Sprintf("%d compared, %d changed significantly", len(c.Changes), sig))
	if len(c.OnlyOld) > 0 {
		d.para("only in "+oldName, strings.Join(c.OnlyOld, ", "))
	}
	if len(c.OnlyNew) > 0 {
		d.para("only in "+newName, strings.Join(c.OnlyNew, ", "))
	}
	d.para("method", fmt.Sprintf("a change is reported when its p is below α = %g, otherwise \"~\" with its p, as benchstat prints it: "+
		"for cells measured in 2 or more worker processes a side, Welch's t test on the logarithms of the processes' medians "+
		"(two runs that differ only by which processes they drew are not significant), each side the geometric mean of its processes' medians ± its 95%% interval over them; "+
		"for a cell of one process a side, the Mann–Whitney U test of the samples (benchstat's test, which cannot tell process luck from a change), "+
		"with at least %d samples a side (fewer cannot reach that p), each side's median ± its 95%% interval recomputed from its samples", c.Alpha, SamplesNeeded(c.Alpha)))
	for _, b := range []struct {
		name string
		busy int
		of   Report
	}{{oldName, c.OldBusy, old}, {newName, c.NewBusy, new}} {
		if b.busy > 0 {
			d.para("caution", fmt.Sprintf("%s: %d of %d cells measured busy (other processes took over half a core): a change there may be the machine's, not the code's", b.name, b.busy, len(b.of.Results)))
		}
	}
	d.para(oldName, old.Environment.line())
	d.para(newName, new.Environment.line())
	return d.err
}

func sideText(s Side) string {
	if s.Failure != "" {
		return s.Failure
	}
	if s.Samples == 0 {
		return "–"
	}
	r := measure.Result{Median: s.Median, CI: s.CI}
	return FormatNs(s.Median) + " " + Spread(r)
}

func pText(ch Change) string {
	if ch.Note != "" && ch.P == 1 {
		return ""
	}
	return fmt.Sprintf("%.3f", ch.P)
}
