package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/runner"
)

func forecastPlan(t *testing.T, args map[string]int) []runner.Job {
	t.Helper()
	jobs, err := runner.Plan{Engines: []string{"native"}, Kernels: []string{"fib_rec"}, Args: args, Options: measure.Options{Runs: 6, Warmup: 1}}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// A cell stored at the same arguments gives its own time; at other arguments, its time
// scaled by the kernel's growth; with nothing stored, the forecast is a floor and says so.
func TestForecast(t *testing.T) {
	stored := measure.Result{Kernel: "fib_rec", Args: []int{20}, Engine: "native", Runs: 10, Calls: 1, Median: float64(10 * time.Millisecond), First: 10 * time.Millisecond}
	past := map[string][]measure.Result{"native fib_rec": {stored}}
	limit := time.Minute

	same, ok := estimate(forecastPlan(t, map[string]int{"n": 20})[0], past, limit)
	// 6 runs and one for calibration, the first call, a worker's start.
	if want := workerStart + 10*time.Millisecond + 7*10*time.Millisecond; !ok || same != want {
		t.Errorf("same arguments: %v (%v), want %v", same, ok, want)
	}
	larger, ok := estimate(forecastPlan(t, map[string]int{"n": 25})[0], past, limit)
	scale := math.Pow(math.Phi, 5)
	if want := workerStart + time.Duration(8*scale*float64(10*time.Millisecond)); !ok || larger < want*99/100 || larger > want*101/100 {
		t.Errorf("fib_rec(25) from fib_rec(20): %v, want about %v", larger, want)
	}
	huge, _ := estimate(forecastPlan(t, map[string]int{"n": 60})[0], past, limit)
	if want := workerStart + runner.CellBudget(limit); huge != want {
		t.Errorf("fib_rec(60): %v, want its budget under the time limit, %v", huge, want)
	}

	// An engine with nothing stored: native's time of the kernel, said as a guess.
	wasmJobs, err := runner.Plan{Engines: []string{"wazero-compiler"}, Kernels: []string{"fib_rec"}, Args: map[string]int{"n": 20}, Options: measure.Options{Runs: 6, Warmup: 1}}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	floor := workerStart + measure.DefaultWarmupTime + 7*measure.DefaultMinSample
	if guess, ok := estimate(wasmJobs[0], past, limit); ok || guess != max(same, floor) {
		t.Errorf("wazero-compiler with only native stored: %v (%v), want native's %v or the floor %v, not from its own runs", guess, ok, same, floor)
	}
	if got := forecastJobs(forecastPlan(t, map[string]int{"n": 20}), past, limit); !strings.HasPrefix(got, "1 cell (1 kernel on native), about ") || !strings.Contains(got, "from this machine's stored runs") {
		t.Errorf("forecast with a stored cell: %q", got)
	}
	if got := forecastJobs(forecastPlan(t, nil), nil, limit); !strings.Contains(got, "at least") || !strings.Contains(got, "no stored run") {
		t.Errorf("forecast with nothing stored: %q", got)
	}
}

func TestRoundForecast(t *testing.T) {
	for d, want := range map[time.Duration]string{
		4240 * time.Millisecond:         "4.2s",
		42400 * time.Millisecond:        "42s",
		220 * time.Second:               "3m40s",
		29*time.Minute + 10*time.Second: "29m",
	} {
		if got := roundForecast(d); got != want {
			t.Errorf("roundForecast(%v) = %q, want %q", d, got, want)
		}
	}
}
