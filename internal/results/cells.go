package results

import (
	"fmt"

	"github.com/wasmgap/wasmgap/internal/measure"
)

// DuplicateCellError is a run that holds one cell (a kernel with its arguments on an
// engine) more than once: a run counts once in the distribution of each of its cells, so
// it holds each cell once.
type DuplicateCellError struct {
	// Cell is the cell, "fib_it(30) on browser-js"; First and Second are the positions
	// (from 0) of its first two copies.
	Cell          string
	First, Second int
}

func (e *DuplicateCellError) Error() string {
	return fmt.Sprintf("cell %d is %s again (as cell %d): a run holds each kernel, arguments and engine once, so that it counts as one run", e.Second+1, e.Cell, e.First+1)
}

// CheckCells refuses cells that hold one cell twice (the same kernel, arguments and
// engine), with a *DuplicateCellError naming the first such. Save checks every run with it.
func CheckCells(cells []measure.Result) error {
	seen := make(map[string]int, len(cells))
	for i, r := range cells {
		key := r.Kernel + "\x00" + argsKey(r.Args) + "\x00" + r.Engine
		if first, ok := seen[key]; ok {
			return &DuplicateCellError{Cell: r.Label() + " on " + r.Engine, First: first, Second: i}
		}
		seen[key] = i
	}
	return nil
}
