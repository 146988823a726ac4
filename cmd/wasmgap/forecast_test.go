package main

import (
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

// The forecast says where its figures come from: this machine's stored runs, or a floor
// when nothing is stored (runner.Estimate gives each cell's).
func TestForecast(t *testing.T) {
	stored := measure.Result{Kernel: "fib_rec", Args: []int{20}, Engine: "native", Runs: 10, Calls: 1, Median: float64(10 * time.Millisecond), First: 10 * time.Millisecond}
	past := map[string][]measure.Result{"native fib_rec": {stored}}
	limit := time.Minute
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
