package runner

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
)

// A cell's expected time from this machine's stored cells: the CLI's forecast before a
// bench and the page's before Run (POST /api/forecast) read it here.

// workerStart is what a cell costs besides its calls: a worker process started and its
// engine loaded, a few tenths of a second on two busy cores.
const workerStart = 300 * time.Millisecond

// cellTime is how long a cell like the stored r takes in executions worker processes of
// runs samples in all: in each, the setup, the first call and the warm-up r recorded, and
// its share of the samples (one more for calibration) of Calls calls each, at most its
// budget under the time limit.
func cellTime(r measure.Result, runs, executions int, timeLimit time.Duration) time.Duration {
	executions = max(executions, 1)
	if strings.HasPrefix(r.Failure, "timed out") {
		return timeLimit * time.Duration(executions)
	}
	var total time.Duration
	for i := range executions {
		calls := float64(max(r.Calls, 1)) * float64(runsOfExecution(i, runs, executions)+1)
		d := r.Setup.Compile + r.Setup.Instantiate + r.First + r.WarmedUp + time.Duration(calls*r.Median)
		// An execution whose runs would outlast its budget runs fewer of them.
		total += workerStart + min(d, CellBudget(timeLimit))
	}
	return total
}

// growth is how a kernel's work grows with its arguments, up to a constant: the
// recursions' exponentials, the loops' product of their sizes. Only ratios at two sizes
// of one kernel are used.
func growth(kernel string, args []int) float64 {
	switch kernel {
	case "fib_rec":
		return math.Pow(math.Phi, float64(args[0]))
	case "ack", "ack_while":
		if args[0] >= 3 {
			return math.Pow(4, float64(args[1]))
		}
		return float64(args[1]+1) * float64(args[0]+1)
	}
	g := 1.0
	for _, a := range args {
		g *= float64(max(a, 1))
	}
	return g
}

// Estimate is one cell's expected time and whether this machine's stored runs of its
// engine gave it. A cell of an engine with nothing stored here is guessed from native's
// stored time of the same kernel (most engines are slower), at least its floor: a worker,
// the method's warm-up and samples.
func Estimate(job Job, past map[string][]measure.Result, timeLimit time.Duration) (time.Duration, bool) {
	opts := job.Options().WithDefaults()
	n := job.Executions()
	floor := time.Duration(n)*min(workerStart+opts.WarmupTarget(), timeLimit) + time.Duration(opts.Runs+n)*opts.SampleTarget()
	if d, ok := storedEstimate(job, past[job.Engine()+" "+job.Kernel().Name], timeLimit); ok {
		return d, true
	}
	if d, ok := storedEstimate(job, past[engine.Native+" "+job.Kernel().Name], timeLimit); ok {
		return max(d, floor), false
	}
	return floor, false
}

// storedEstimate is a cell's time from stored cells of its kernel: one at the same
// arguments, else the newest at others scaled by the kernel's growth.
func storedEstimate(job Job, stored []measure.Result, timeLimit time.Duration) (time.Duration, bool) {
	args := job.Args()
	var best *measure.Result
	for i := range stored {
		r := &stored[i]
		if slices.Equal(r.Args, args) {
			best = r
			break
		}
		if best == nil && !r.Failed() && r.Median > 0 && len(r.Args) == len(args) {
			best = r
		}
	}
	if best == nil {
		return 0, false
	}
	r := *best
	if !slices.Equal(r.Args, args) {
		scale := growth(r.Kernel, args) / growth(r.Kernel, r.Args)
		r.Median *= scale
		r.First = time.Duration(float64(r.First) * scale)
	}
	return cellTime(r, job.Options().WithDefaults().Runs, job.Executions(), timeLimit), true
}
