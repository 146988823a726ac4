package runner

import (
	"math"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
)

func estimatePlan(t *testing.T, args map[string]int) []Job {
	t.Helper()
	jobs, err := Plan{Engines: []string{"native"}, Kernels: []string{"fib_rec"}, Args: args, Options: measure.Options{Runs: 6, Warmup: 1}, Executions: 1}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// A cell stored at the same arguments gives its own time; at other arguments, its time
// scaled by the kernel's growth; with nothing stored, the forecast is a floor and says so.
func TestEstimate(t *testing.T) {
	stored := measure.Result{Kernel: "fib_rec", Args: []int{20}, Engine: "native", Runs: 10, Calls: 1, Median: float64(10 * time.Millisecond), First: 10 * time.Millisecond}
	past := map[string][]measure.Result{"native fib_rec": {stored}}
	limit := time.Minute

	same, ok := Estimate(estimatePlan(t, map[string]int{"n": 20})[0], past, limit)
	// 6 runs and one for calibration, the first call, a worker's start.
	if want := workerStart + 10*time.Millisecond + 7*10*time.Millisecond; !ok || same != want {
		t.Errorf("same arguments: %v (%v), want %v", same, ok, want)
	}
	larger, ok := Estimate(estimatePlan(t, map[string]int{"n": 25})[0], past, limit)
	scale := math.Pow(math.Phi, 5)
	if want := workerStart + time.Duration(8*scale*float64(10*time.Millisecond)); !ok || larger < want*99/100 || larger > want*101/100 {
		t.Errorf("fib_rec(25) from fib_rec(20): %v, want about %v", larger, want)
	}
	huge, _ := Estimate(estimatePlan(t, map[string]int{"n": 60})[0], past, limit)
	if want := workerStart + CellBudget(limit); huge != want {
		t.Errorf("fib_rec(60): %v, want its budget under the time limit, %v", huge, want)
	}

	// An engine with nothing stored: native's time of the kernel, said as a guess.
	wasmJobs, err := Plan{Engines: []string{"wazero-compiler"}, Kernels: []string{"fib_rec"}, Args: map[string]int{"n": 20}, Options: measure.Options{Runs: 6, Warmup: 1}, Executions: 1}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	floor := workerStart + measure.DefaultWarmupTime + 7*measure.DefaultMinSample
	if guess, ok := Estimate(wasmJobs[0], past, limit); ok || guess != max(same, floor) {
		t.Errorf("wazero-compiler with only native stored: %v (%v), want native's %v or the floor %v, not from its own runs", guess, ok, same, floor)
	}

	// Three executions: each its worker, first call and share of the runs (2 and one for
	// calibration); the floor of an engine with nothing stored counts each one's worker
	// and warm-up, and every sample with one per execution for calibration.
	three, err := Plan{Engines: []string{"native"}, Kernels: []string{"fib_rec"}, Args: map[string]int{"n": 20}, Options: measure.Options{Runs: 6, Warmup: 1}, Executions: 3}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := must(Estimate(three[0], past, limit)), 3*(workerStart+10*time.Millisecond+3*10*time.Millisecond); got != want {
		t.Errorf("three executions: %v, want %v", got, want)
	}
	three[0] = estimateJob(t, "wazero-compiler", 3)
	if got, want := must(Estimate(three[0], map[string][]measure.Result{}, limit)), 3*(workerStart+measure.DefaultWarmupTime)+9*measure.DefaultMinSample; got != want {
		t.Errorf("three executions, nothing stored: %v, want the floor %v", got, want)
	}
}

func must(d time.Duration, _ bool) time.Duration { return d }

func estimateJob(t *testing.T, eng string, executions int) Job {
	t.Helper()
	jobs, err := Plan{Engines: []string{eng}, Kernels: []string{"fib_rec"}, Args: map[string]int{"n": 20}, Options: measure.Options{Runs: 6, Warmup: 1}, Executions: executions}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	return jobs[0]
}
