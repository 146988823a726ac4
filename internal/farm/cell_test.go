package farm

import (
	"context"
	"testing"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// A plan's executions travel with its cells, and an agent's cell runs in that many worker
// processes, as bench's does.
func TestCellKeepsItsExecutions(t *testing.T) {
	jobs, err := runner.Plan{Engines: []string{"native"}, Kernels: []string{"fib_it"}, Args: map[string]int{"fib_it.n": 10},
		Options: measure.Options{Runs: 4, Warmup: 1, WarmupTime: -1, MinSample: -1}, Executions: 2}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	cells, err := CellsOf(jobs)
	if err != nil || len(cells) != 1 || cells[0].Executions != 2 {
		t.Fatalf("cells %+v (%v), want one with 2 executions", cells, err)
	}
	r, err := runCell(context.Background(), cells[0], nil)
	if err != nil || r.Failed() || len(r.Executions) != 2 || r.Runs != 4 {
		t.Errorf("ran %+v (%v), want 4 runs in 2 worker processes", r, err)
	}
}
