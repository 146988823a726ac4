package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// A cell is measured in several executions, each a fresh worker process: the samples of
// one process vary less than processes do (where the binary and the heap land, what the
// machine did that second), so the cell's figure and its interval are built over the
// executions (measure.AcrossExecutions), as Kalibera and Jones ("Rigorous benchmarking in
// reasonable time", ISMM 2013) repeat at the level that varies.

// DefaultExecutions and MaxExecutions bound the worker processes of one cell (Bounds):
// three give the interval over processes two degrees of freedom, the fewest that make it
// useful; each one costs a worker's start and its warm-up.
const (
	DefaultExecutions = 3
	MaxExecutions     = 20
)

// runsOfExecution is how many of a cell's runs its execution i (from 0) of executions
// takes: the runs spread over the executions as evenly as they go, the first ones taking
// one more, so that the cell takes the runs asked for (Job.Executions is never more than
// them).
func runsOfExecution(i, runs, executions int) int {
	n := runs / executions
	if i < runs%executions {
		n++
	}
	return n
}

// cell gathers one cell's executions as they end.
type cell struct {
	job   Job
	execs []measure.Result
	// failed is the first failed execution, which ends the cell; lost a later execution
	// that reached its time limit, which ends the cell too but keeps the executions before
	// it (their figures stand: the limit, not the engine, cut the next one short).
	failed *measure.Result
	lost   string
}

// done reports whether the cell needs no more executions.
func (c *cell) done() bool {
	return c.failed != nil || c.lost != "" || len(c.execs) >= c.job.Executions()
}

// run runs the cell's next execution.
func (c *cell) run(ctx context.Context, opts Options) error {
	i, n := len(c.execs), c.job.Executions()
	o := opts
	if opts.OnProgress != nil {
		o.OnProgress = func(p Progress) {
			p.Execution, p.Executions = i+1, n
			opts.OnProgress(p)
		}
	}
	r, err := runExecution(ctx, c.job, i, o)
	if err != nil {
		return err
	}
	c.add(r)
	return nil
}

// add takes the cell's next execution's result.
func (c *cell) add(r measure.Result) {
	i, n := len(c.execs), c.job.Executions()
	if r.Failed() {
		if n > 1 && i > 0 {
			r.Failure += fmt.Sprintf(" (execution %d of %d)", i+1, n)
			if strings.HasPrefix(r.Failure, "timed out") {
				c.lost = r.Failure
				return
			}
		}
		c.failed = &r
		return
	}
	c.execs = append(c.execs, r)
}

// result is the cell's result: its failure, or its executions merged (merge), with the
// one lost to the time limit named.
func (c *cell) result() measure.Result {
	if c.failed != nil {
		return *c.failed
	}
	r := merge(c.execs)
	r.Lost = c.lost
	return r
}

// merge makes one cell of its executions' results: every sample, in the order they ran,
// with the min and max over all; the median and its interval over the executions
// (measure.AcrossExecutions), each execution's own figures and noise in Executions; the
// first execution's setup, first call and warm-up (a cold start is the first process's);
// the noise averaged over the executions (busy when any was).
func merge(execs []measure.Result) measure.Result {
	if len(execs) == 0 {
		return measure.Result{}
	}
	r := execs[0]
	r.Samples, r.Runs, r.Executions = nil, 0, nil
	var noise measure.Noise
	noisy := 0
	for _, e := range execs {
		r.Samples = append(r.Samples, e.Samples...)
		r.Runs += e.Runs
		x := measure.Execution{Median: e.Median, CI: e.CI, Min: e.Min, Max: e.Max, Runs: e.Runs, Calls: e.Calls}
		if n := e.Noise; n != nil {
			x.Steal, x.Load1, x.OtherCPU, x.Busy = n.Steal, n.Load1, n.OtherCPU, n.Busy
			noise.Steal += n.Steal
			noise.OtherCPU += n.OtherCPU
			noise.FaultsPerCall += n.FaultsPerCall
			noise.Load1, noise.Cores = n.Load1, n.Cores
			noise.Busy = noise.Busy || n.Busy
			noisy++
		}
		r.Executions = append(r.Executions, x)
	}
	if len(execs) == 1 {
		r.Executions = nil // one process: its own figures are the cell's
		return r
	}
	if noisy > 0 {
		noise.Steal /= float64(noisy)
		noise.OtherCPU /= float64(noisy)
		noise.FaultsPerCall /= float64(noisy)
		r.Noise = &noise
	}
	r.Min, r.Max = slices.Min(r.Samples), slices.Max(r.Samples)
	r.Median, r.CI = measure.AcrossExecutions(r.Executions)
	return r
}

// CellsOptions configure RunCells. The zero value is ready to use.
type CellsOptions struct {
	// OnExecution, if set, is called before each execution with the index of its job and
	// the execution's number (from 0).
	OnExecution func(job, execution int)
	// OnProgress, if set, is called as a worker reports progress, with its job's index.
	OnProgress func(job int, p Progress)
	// OnCell, if set, is called with each cell's result once its row is done, in the
	// order of jobs.
	OnCell func(job int, r measure.Result)
}

// RunCells measures jobs (as Plan.Jobs orders them: a row's engines together), each in its
// executions, interleaved: the cells of one row (one kernel with its arguments) take turns,
// one execution each, in an order rotated every round (A B, B A, A B …), so that a drift
// of the machine falls on every engine of the row alike. It returns the cells done, in the
// order of jobs; when ctx ends, the rows done and ctx.Err().
func RunCells(ctx context.Context, jobs []Job, opts CellsOptions) ([]measure.Result, error) {
	var out []measure.Result
	for start := 0; start < len(jobs); {
		end := start + 1
		for end < len(jobs) && jobs[end].kernel == jobs[start].kernel && slices.Equal(jobs[end].args, jobs[start].args) {
			end++
		}
		row := make([]*cell, end-start)
		for i := range row {
			row[i] = &cell{job: jobs[start+i]}
		}
		for round := 0; ; round++ {
			ran := false
			for k := range row {
				i := (k + round) % len(row)
				c := row[i]
				if c.done() {
					continue
				}
				ran = true
				if opts.OnExecution != nil {
					opts.OnExecution(start+i, len(c.execs))
				}
				var o Options
				if opts.OnProgress != nil {
					o.OnProgress = func(p Progress) { opts.OnProgress(start+i, p) }
				}
				if err := c.run(ctx, o); err != nil {
					return out, err
				}
			}
			if !ran {
				break
			}
		}
		for i, c := range row {
			r := c.result()
			out = append(out, r)
			if opts.OnCell != nil {
				opts.OnCell(start+i, r)
			}
		}
		start = end
	}
	return out, nil
}
