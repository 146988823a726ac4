package farm

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

// This file is the farm's one contact with package runner: a plan's jobs become cells
// (CellsOf), and a cell runs exactly as bench runs it (runCell): through runner.Input's
// plan, its checks against the one table of bounds, and a worker process.

// CellsOf turns the checked jobs of a plan (runner.Plan.Jobs) into the cells an agent
// runs. User kernels do not travel: a farm runs the catalogue's kernels.
func CellsOf(jobs []runner.Job) ([]Cell, error) {
	cells := make([]Cell, 0, len(jobs))
	for _, j := range jobs {
		if j.Custom() != nil {
			return nil, fmt.Errorf("%s on %s: a farm runs the catalogue's kernels, not user kernels", j.Label(), j.Engine())
		}
		cells = append(cells, Cell{Engine: j.Engine(), Kernel: j.Kernel().Name, Args: j.Args(), Options: j.Options(), Timeout: j.Timeout(), Executions: j.Executions()})
	}
	return cells, nil
}

// runCell checks the cell as bench checks what a person typed (runner.Input.Plan, then
// Plan.Jobs: names, arguments' ranges, the bounds on runs and time) and runs it in a
// worker (runner.Run). A cell that does not check is an error naming what was wrong; a
// run that fails (time limit, crash, wrong value) is a result with its failure.
func runCell(ctx context.Context, c Cell, onProgress func(phase string, done, total int)) (measure.Result, error) {
	in := runner.Input{Engines: []string{c.Engine}, Kernels: []string{c.Kernel}, Cold: c.Options.Cold}
	in.Runs, in.Warmup = &c.Options.Runs, &c.Options.Warmup
	if c.Executions != 0 {
		in.Executions = &c.Executions
	}
	// runner.Input reads an absent duration as the default and zero as none; the plan
	// held zero for the default and a negative duration for none.
	asInput := func(d time.Duration) *time.Duration {
		switch {
		case d == 0:
			return nil
		case d < 0:
			d = 0
		}
		return &d
	}
	in.WarmupTime, in.MinSample, in.Timeout = asInput(c.Options.WarmupTime), asInput(c.Options.MinSample), asInput(c.Timeout)
	if c.Options.Budget != 0 {
		return measure.Result{}, fmt.Errorf("cell %s: a budget is the worker's to set from the time limit", c.Label())
	}
	// The arguments by position, named for this one kernel.
	if len(c.Args) > 0 {
		k, err := kernels.Lookup(c.Kernel)
		if err != nil {
			return measure.Result{}, fmt.Errorf("cell %s: %w", c.Label(), err)
		}
		if len(c.Args) != len(k.Params) {
			return measure.Result{}, fmt.Errorf("cell %s: %d arguments, %s takes %d", c.Label(), len(c.Args), c.Kernel, len(k.Params))
		}
		in.Args = map[string]string{}
		for i, p := range k.Params {
			in.Args[c.Kernel+"."+p.Name] = strconv.Itoa(c.Args[i])
		}
	}
	plan, err := in.Plan()
	if err != nil {
		return measure.Result{}, fmt.Errorf("cell %s: %w", c.Label(), err)
	}
	jobs, err := plan.Jobs()
	if err != nil {
		return measure.Result{}, fmt.Errorf("cell %s: %w", c.Label(), err)
	}
	if len(jobs) != 1 {
		return measure.Result{}, fmt.Errorf("cell %s: the plan holds %d cells, not one", c.Label(), len(jobs))
	}
	var opts runner.Options
	if onProgress != nil {
		opts.OnProgress = func(p runner.Progress) { onProgress(p.Phase, p.Done, p.Total) }
	}
	return runner.Run(ctx, jobs[0], opts)
}
