package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// forecastRuns is how many of this machine's newest stored runs a forecast reads.
const forecastRuns = 20

// workerStart is what a cell costs besides its calls: a worker process started and its
// engine loaded, a few tenths of a second on two busy cores.
const workerStart = 300 * time.Millisecond

// storedCells reads this machine's newest stored cells from the store at dsn, by engine
// and kernel, the newest first; nil without a store. A store that cannot be read only
// loses the forecast, and says so.
func storedCells(dsn string, stderr io.Writer) map[string][]measure.Result {
	if dsn == "" {
		return nil
	}
	ctx := context.Background()
	store, err := results.Open(ctx, dsn)
	if err != nil {
		fmt.Fprintf(stderr, "wasmgap bench: no forecast from %s: %v\n", dsn, err)
		return nil
	}
	defer store.Close()
	machine := results.MachineKey(report.CurrentEnvironment())
	list, err := store.List(ctx, results.Filter{Machine: machine, Limit: forecastRuns})
	if err != nil {
		fmt.Fprintf(stderr, "wasmgap bench: no forecast from %s: %v\n", dsn, err)
		return nil
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
	return cells
}

// cellTime is how long a stored cell took, from what it recorded: its setup, its first
// call, its warm-up, and its samples (one more for calibration) of Calls calls each, at
// most its budget under the time limit.
func cellTime(r measure.Result, timeLimit time.Duration) time.Duration {
	if strings.HasPrefix(r.Failure, "timed out") {
		return timeLimit
	}
	calls := float64(max(r.Calls, 1)) * float64(r.Runs+1)
	d := r.Setup.Compile + r.Setup.Instantiate + r.First + r.WarmedUp + time.Duration(calls*r.Median)
	// A cell whose runs would outlast its budget runs fewer of them.
	return workerStart + min(d, runner.CellBudget(timeLimit))
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

// estimate is one cell's expected time and whether this machine's stored runs of its
// engine gave it. A cell of an engine with nothing stored here is guessed from native's
// stored time of the same kernel (most engines are slower), at least its floor: a worker,
// the method's warm-up and samples.
func estimate(job runner.Job, past map[string][]measure.Result, timeLimit time.Duration) (time.Duration, bool) {
	opts := job.Options()
	floor := min(workerStart+opts.WarmupTarget()+time.Duration(opts.Runs+1)*opts.SampleTarget(), timeLimit)
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
func storedEstimate(job runner.Job, stored []measure.Result, timeLimit time.Duration) (time.Duration, bool) {
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
	r.Runs = job.Options().Runs
	if !slices.Equal(r.Args, args) {
		scale := growth(r.Kernel, args) / growth(r.Kernel, r.Args)
		r.Median *= scale
		r.First = time.Duration(float64(r.First) * scale)
	}
	return cellTime(r, timeLimit), true
}

// forecastJobs says how many cells a bench runs and about how long it takes: "28 cells
// (14 kernels × native, wazero-compiler), about 1m20s from this machine's stored runs".
func forecastJobs(jobs []runner.Job, past map[string][]measure.Result, timeLimit time.Duration) string {
	var total time.Duration
	known := 0
	var engines, kernels []string
	for _, j := range jobs {
		d, ok := estimate(j, past, timeLimit)
		total += d
		if ok {
			known++
		}
		engines = appendNew(engines, j.Engine())
		kernels = appendNew(kernels, j.Kernel().Name)
	}
	on := strings.Join(engines, ", ")
	if len(engines) > 6 {
		on = plural(len(engines), "engine")
	}
	what := fmt.Sprintf("%s (%s on %s)", plural(len(jobs), "cell"), plural(len(kernels), "kernel"), on)
	switch {
	case known == len(jobs):
		return fmt.Sprintf("%s, about %s (from this machine's stored runs)", what, roundForecast(total))
	case known == 0:
		return fmt.Sprintf("%s, at least %s (no stored run of their engines on this machine: native's times where stored, else each cell's warm-up and samples)", what, roundForecast(total))
	}
	return fmt.Sprintf("%s, about %s or more (%d of them from this machine's stored runs, the rest guessed from native's or at their least)", what, roundForecast(total), known)
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// roundForecast renders a forecast as precisely as it can promise: tenths of a second
// under ten seconds, seconds under a minute, ten seconds under ten minutes, minutes above
// ("29m").
func roundForecast(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 10*time.Minute:
		return d.Round(10 * time.Second).String()
	}
	return fmt.Sprintf("%dm", int(d.Round(time.Minute).Minutes()))
}
