package results

import (
	"context"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// ForecastRuns is how many of a machine's newest stored runs a forecast reads.
const ForecastRuns = 20

// ForecastCells reads the cells of machine's ForecastRuns newest stored runs (machine as
// MachineKey gives it), by engine and kernel ("native fib_rec"), the newest first: what a
// forecast reads (runner.Estimate), the CLI's before a bench and the page's before Run. A
// run that cannot be read is left out.
func ForecastCells(ctx context.Context, store *Store, machine string) (map[string][]measure.Result, error) {
	list, err := store.List(ctx, Filter{Machine: machine, Limit: ForecastRuns})
	if err != nil {
		return nil, err
	}
	cells := map[string][]measure.Result{}
	for _, sm := range list {
		run, err := store.Get(ctx, sm.ID)
		if err != nil {
			continue
		}
		for _, r := range run.Report.Results {
			key := r.Engine + " " + r.Kernel
			cells[key] = append(cells[key], r)
		}
	}
	return cells, nil
}
