package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/runner"
)

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
	cells, err := results.ForecastCells(ctx, store, results.MachineKey(report.CurrentEnvironment()))
	if err != nil {
		fmt.Fprintf(stderr, "wasmgap bench: no forecast from %s: %v\n", dsn, err)
		return nil
	}
	return cells
}

// forecastJobs says how many cells a bench runs and about how long it takes: "28 cells
// (14 kernels × native, wazero-compiler), about 1m20s from this machine's stored runs".
func forecastJobs(jobs []runner.Job, past map[string][]measure.Result, timeLimit time.Duration) string {
	var total time.Duration
	known := 0
	var engines, kernels []string
	for _, j := range jobs {
		d, ok := runner.Estimate(j, past, timeLimit)
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
