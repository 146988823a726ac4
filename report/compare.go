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

	"github.com/wasmgap/wasmgap/measure"
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
	// Old and New summarise each side's samples (ns per call): the median and its 95%
	// interval, recomputed from the samples.
	Old Side `json:"old"`
	New Side `json:"new"`
	// Delta is New's median over Old's, minus one: +0.25 is 25% slower.
	Delta float64 `json:"delta"`
	// P is the Mann–Whitney U test's p-value of the two samples (benchstat's test); 1 when
	// it cannot be computed.
	P float64 `json:"p"`
	// Significant is true when both sides have an interval and the intervals do not
	// overlap: the change is larger than either run's own spread.
	Significant bool `json:"significant"`
	// Note says why a cell cannot be compared ("failed in the new run: …", "too few
	// samples: …"); such a cell is not significant.
	Note string `json:"note,omitempty"`
}

// Side is one report's summary of a cell.
type Side struct {
	Median  float64          `json:"median_ns"`
	CI      measure.Interval `json:"ci"`
	Samples int              `json:"samples"`
	Calls   int              `json:"calls,omitempty"`
	Failure string           `json:"failure,omitempty"`
}

// Comparison is the cells two reports share, in the old report's order, and the cells
// only one of them has.
type Comparison struct {
	Changes []Change `json:"changes"`
	OnlyOld []string `json:"only_old,omitempty"`
	OnlyNew []string `json:"only_new,omitempty"`
}

// Alpha is the U test's significance level, benchstat's default.
const Alpha = 0.05

// cellKey names a cell: "fib_it(40) on native".
func cellKey(r measure.Result) string { return r.Label() + " on " + r.Engine }

func side(r measure.Result) Side {
	s := Side{Samples: len(r.Samples), Calls: r.Calls, Failure: r.Failure}
	if !r.Failed() && len(r.Samples) > 0 {
		_, s.Median, _, s.CI = measure.Summarize(r.Samples)
	}
	return s
}

// Compare matches the cells of two reports (same kernel, arguments and engine) and says
// for each how its median changed and whether the change is significant: both 95%
// intervals of the medians exist and do not overlap, as benchstat reads "~" into
// overlapping ones; the U test's p-value is given beside. It fails when the reports have
// no cell in common.
func Compare(old, new Report) (Comparison, error) {
	var c Comparison
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
		c.Changes = append(c.Changes, compareCell(o, n))
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

func compareCell(o, n measure.Result) Change {
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
	if ch.Old.Median > 0 {
		ch.Delta = ch.New.Median/ch.Old.Median - 1
	}
	th := benchmath.DefaultThresholds
	// NewSample sorts what it is given: copies keep the runs' samples in the order they ran.
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(o.Samples), &th), benchmath.NewSample(slices.Clone(n.Samples), &th))
	if !math.IsNaN(cmp.P) {
		ch.P = cmp.P
	}
	if !ch.Old.CI.Valid() || !ch.New.CI.Valid() {
		ch.Note = fmt.Sprintf("too few samples for 95%% intervals (%d and %d: 6 needed)", len(o.Samples), len(n.Samples))
		return ch
	}
	ch.Significant = ch.Old.CI.Hi < ch.New.CI.Lo || ch.New.CI.Hi < ch.Old.CI.Lo
	return ch
}

// Verdict renders a change as people read it: "+102.3%", "−4.1%", or
// "~ no significant difference", or the note of a cell that cannot be compared.
func (ch Change) Verdict() string {
	switch {
	case ch.Note != "":
		return ch.Note
	case !ch.Significant:
		return "~ no significant difference"
	}
	return fmt.Sprintf("%+.1f%%", ch.Delta*100)
}

// WriteComparison writes a comparison as a table (FormatTable), Markdown or JSON, with
// the two reports' environments and a line on how significance is judged.
func WriteComparison(w io.Writer, format string, c Comparison, oldName, newName string, old, new Report) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	case FormatTable, FormatMarkdown:
	default:
		return fmt.Errorf("unknown format %q: valid formats are %s", format, strings.Join([]string{FormatTable, FormatMarkdown, FormatJSON}, ", "))
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
	d.para("method", "a change is significant when the two medians' 95% confidence intervals (order statistics, recomputed from each cell's samples) do not overlap; "+
		"\"~\" where they overlap, as benchstat prints it; p is the Mann–Whitney U test's (benchstat's test, significance at 0.05) for reference")
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
