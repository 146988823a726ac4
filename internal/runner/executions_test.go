package runner

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// A row's cells take turns, one execution each, in an order rotated every round; each
// cell comes back once, with its executions' figures, in the order of the jobs.
func TestRunCellsInterleaves(t *testing.T) {
	jobs, err := Plan{Engines: []string{"native", "yaegi"}, Kernels: []string{"fib_it", "ack"}, Args: map[string]int{"fib_it.n": 10, "ack.m": 1, "ack.n": 1},
		Options: measure.Options{Runs: 2, Warmup: 1, WarmupTime: -1, MinSample: -1}, Executions: 2}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	var cells []int
	res, err := RunCells(context.Background(), jobs, CellsOptions{
		OnExecution: func(job, execution int) {
			order = append(order, fmt.Sprintf("%s %s %d", jobs[job].Label(), jobs[job].Engine(), execution))
		},
		OnCell: func(job int, r measure.Result) { cells = append(cells, job) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"fib_it(10) native 0", "fib_it(10) yaegi 0", "fib_it(10) yaegi 1", "fib_it(10) native 1",
		"ack(1, 1) native 0", "ack(1, 1) yaegi 0", "ack(1, 1) yaegi 1", "ack(1, 1) native 1",
	}
	if !slices.Equal(order, want) {
		t.Errorf("executions ran in the order\n%q\nwant\n%q", order, want)
	}
	if !slices.Equal(cells, []int{0, 1, 2, 3}) || len(res) != 4 {
		t.Fatalf("cells %v, %d results; want each of the 4 once, in order", cells, len(res))
	}
	for i, r := range res {
		if r.Failed() || r.Engine != jobs[i].Engine() || len(r.Executions) != 2 || r.Runs != 2 || len(r.Samples) != 2 {
			t.Errorf("cell %d: %+v; want %s with 2 executions of 1 run each", i, r, jobs[i].Engine())
		}
	}
}

// Merged executions keep every sample and each one's figures and noise; the cell's
// median is their geometric mean, its interval over them.
func TestMergeExecutions(t *testing.T) {
	exec := func(median float64, busy bool) measure.Result {
		return measure.Result{Kernel: "fib_it", Engine: "native", Runs: 2, Calls: 5, Samples: []float64{median * 0.99, median * 1.01},
			Median: median, Min: median * 0.99, Max: median * 1.01, Noise: &measure.Noise{Load1: 1, OtherCPU: 0.2, Steal: 0.1, Cores: 2, Busy: busy}}
	}
	r := merge([]measure.Result{exec(100, false), exec(121, true), exec(110, false)})
	med, ci := measure.AcrossExecutions(r.Executions)
	if r.Runs != 6 || len(r.Samples) != 6 || len(r.Executions) != 3 || r.Median != med || r.CI != ci || !r.CI.Valid() ||
		r.Min != 99 || r.Max != exec(121, true).Max || r.Noise == nil || !r.Noise.Busy || r.Executions[1].Steal != 0.1 || !r.Executions[1].Busy {
		t.Errorf("merged: %+v", r)
	}
	if one := merge([]measure.Result{exec(100, false)}); one.Executions != nil || one.Median != 100 {
		t.Errorf("one execution: %+v, want its own figures and no executions", one)
	}
}

// A later execution cut short by the time limit ends the cell but keeps the executions
// before it, named in Lost; any other failure, or a first execution's, is the cell's.
func TestLaterTimeoutKeepsExecutions(t *testing.T) {
	jobs, err := Plan{Engines: []string{"native"}, Kernels: []string{"fib_it"}, Executions: 3}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	ok := func(median float64) measure.Result {
		return measure.Result{Kernel: "fib_it", Engine: "native", Runs: 2, Samples: []float64{median, median}, Median: median}
	}
	failed := func(why string) measure.Result {
		return measure.Result{Kernel: "fib_it", Engine: "native", Failure: why}
	}
	c := &cell{job: jobs[0]}
	for _, r := range []measure.Result{ok(100), ok(110), failed("timed out after 30s")} {
		c.add(r)
	}
	if r := c.result(); !c.done() || r.Failed() || len(r.Executions) != 2 || r.Runs != 4 || r.Lost != "timed out after 30s (execution 3 of 3)" {
		t.Errorf("a third execution timed out: done %v, %+v; want the two before it, the third named in Lost", c.done(), r)
	}
	for _, first := range [][]measure.Result{
		{failed("timed out after 30s")},
		{ok(100), failed("wrong result: got 1, want 2")},
		{ok(100), failed("stack overflow")},
	} {
		c := &cell{job: jobs[0]}
		for _, r := range first {
			c.add(r)
		}
		if r := c.result(); !c.done() || !r.Failed() || r.Lost != "" {
			t.Errorf("after %v: done %v, %+v; want the cell failed", first, c.done(), r)
		}
	}
}
