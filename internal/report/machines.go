package report

import (
	"io"
	"math"
	"slices"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
)

// MachineRow is one cell of a plan measured on several machines: its median on each
// machine, its ratio to native on the same machine, and how far that ratio moves from
// machine to machine.
type MachineRow struct {
	Kernel string
	Args   []int
	Engine string
	// Medians are per machine, in the order of the reports; NaN where the machine has no
	// time for the cell (absent, failed).
	Medians []float64
	// Ratios are each cell's ratio to its row's baseline on the same machine (BaseRatio:
	// native, else the browser's wasm); NaN where either is missing. The baseline's own
	// row has none.
	Ratios []float64
	// Spread is half the range of the ratios over their median, in percent: how much the
	// gap depends on the machine. NaN with fewer than two ratios.
	Spread float64
}

// Machines sets reports of one plan, each from a machine, side by side: a row per cell
// (kernel and arguments, then engine, in the first report's order), native's first.
func Machines(reps []Report) []MachineRow {
	type key struct{ label, engine string }
	var order []key
	rows := map[key]*MachineRow{}
	cells := make([]map[key]measure.Result, len(reps))
	for i, rep := range reps {
		cells[i] = map[key]measure.Result{}
		for _, r := range rep.Results {
			k := key{r.Label(), r.Engine}
			row := rows[k]
			if row == nil {
				row = &MachineRow{Kernel: r.Kernel, Args: r.Args, Engine: r.Engine, Medians: nanSlice(len(reps)), Ratios: nanSlice(len(reps))}
				rows[k] = row
				order = append(order, k)
			}
			if !r.Failed() && r.Median > 0 {
				row.Medians[i] = r.Median
				cells[i][k] = r
			}
		}
	}
	var out []MachineRow
	// Native's row first for each kernel: the baseline the others' ratios divide by.
	slices.SortStableFunc(order, func(a, b key) int {
		if a.label != b.label {
			return 0
		}
		return boolRank(b.engine == engine.Native) - boolRank(a.engine == engine.Native)
	})
	for _, k := range order {
		row := rows[k]
		var ratios []float64
		for i := range reps {
			base := Baseline("", func(e string) bool { _, ok := cells[i][key{k.label, e}]; return ok })
			c, ok := cells[i][k]
			switch {
			case !ok:
			case base == k.engine:
				ratios = append(ratios, row.Medians[i]) // the baseline's spread is its times'
			case base != "":
				if r, ok := BaseRatio(c, cells[i][key{k.label, base}]); ok {
					row.Ratios[i] = r.X
					ratios = append(ratios, r.X)
				}
			}
		}
		row.Spread = spreadOf(ratios)
		out = append(out, *row)
	}
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

// spreadOf is half the range of xs over their median, in percent; NaN for fewer than
// two.
func spreadOf(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	_, median, _, _ := measure.Summarize(slices.Clone(xs))
	return (hi - lo) / 2 / median * 100
}

// FormatMachineSpread renders a spread across machines as a cell's spread is written:
// "±4.2%", "±15%"; "" for none.
func FormatMachineSpread(pct float64) string {
	if math.IsNaN(pct) || math.IsInf(pct, 0) {
		return ""
	}
	digits := 1
	if pct >= 10 {
		digits = 0
	}
	return "±" + toFixed(pct, digits) + "%"
}

// MachineTable is Machines' rows as text, a column per machine named by names, each
// cell the baseline's median or an engine's ratio to it on that machine ("—" for none),
// the spread across machines last: what the CLI prints (WriteMachines) and the page
// shows (GET /api/results/machines).
func MachineTable(names []string, reps []Report) (header []string, rows [][]string) {
	header = append(append([]string{"cell", "engine"}, names...), "across machines")
	for _, row := range Machines(reps) {
		cells := []string{measure.Result{Kernel: row.Kernel, Args: row.Args}.Label(), row.Engine}
		for i := range reps {
			v := "—"
			switch {
			case !math.IsNaN(row.Ratios[i]):
				v = FormatRatio(row.Ratios[i])
			case !math.IsNaN(row.Medians[i]) && slices.Contains(Baselines, row.Engine):
				v = FormatNs(row.Medians[i]) // the baseline: its time
			}
			cells = append(cells, v)
		}
		rows = append(rows, append(cells, FormatMachineSpread(row.Spread)))
	}
	return header, rows
}

// WriteMachines writes MachineTable as text, or Markdown when markdown.
func WriteMachines(w io.Writer, names []string, reps []Report, markdown bool) error {
	d := &doc{w: w, md: markdown}
	d.heading("Machines side by side: native's median, each engine's ×native on the same machine, the spread across machines")
	d.table(MachineTable(names, reps))
	d.printf("\n")
	return d.err
}
