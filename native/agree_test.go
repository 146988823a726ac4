package native_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/measure"
	"github.com/wasmgap/wasmgap/runner"
)

var (
	defaultArgs = flag.Bool("default-args", false, "compare at the catalogue's default arguments (the articles' sizes) instead of small ones")
	within      = flag.Float64("within", 0, "the largest relative difference allowed between the harness's median and testing.Benchmark's ns/op (0: a factor of 2, a bound that holds on a busy machine)")
)

// TestMain lets this test binary serve as the workers that runner.Run starts.
func TestMain(m *testing.M) {
	runner.ServeWorkerIfRequested()
	os.Exit(m.Run())
}

// smallArgs make every kernel take well under a millisecond.
func smallArgs(k *kernels.Kernel) []int {
	switch k.Name {
	case "fib_it":
		return []int{40}
	case "fib_rec":
		return []int{20}
	case "ack", "ack_while":
		return []int{2, 5}
	}
	if len(k.Params) == 2 {
		return []int{20_100, 100}
	}
	return []int{10_000}
}

// TestAgreesWithGoBench measures every kernel on the native engine as `wasmgap bench`
// does (a worker process, calibrated samples, the median) and with testing.Benchmark, as
// `go test -bench` does (BenchmarkKernels in package kernels), in the same run: rounds of
// one benchmark then one harness measurement, so that a machine busy for a while slows
// both alike, and the median over the rounds of the harness's median over the
// benchmark's ns/op. By default, at small arguments, the two agree within a factor of 2,
// a bound that holds on a shared, loaded machine; the strict comparison of
// docs/BENCHMARKS.md is
//
//	go test ./native -run AgreesWithGoBench -v -args -default-args -within 0.05
//
// which prints the table of both figures with the machine's load average.
func TestAgreesWithGoBench(t *testing.T) {
	if testing.Short() {
		t.Skip("times every kernel")
	}
	limit := *within
	rounds, benchtime := 5, "100ms"
	if *defaultArgs {
		rounds, benchtime = 3, "1s"
	}
	if f := flag.Lookup("test.benchtime"); f != nil {
		old := f.Value.String()
		f.Value.Set(benchtime)
		defer f.Value.Set(old)
	}
	var rows []string
	for _, k := range kernels.All() {
		args := smallArgs(k)
		if *defaultArgs {
			args = k.Defaults()
		}
		plan := runner.Plan{Engines: []string{"native"}, Kernels: []string{k.Name}, Args: named(k, args), Options: measure.Defaults()}
		jobs, err := plan.Jobs()
		if err != nil {
			t.Fatal(err)
		}
		call := k.Call
		var ratios, harness, benches, loads []float64
		var last measure.Result
		for range rounds {
			r := testing.Benchmark(func(b *testing.B) {
				for b.Loop() {
					call(args)
				}
			})
			bench := float64(r.T.Nanoseconds()) / float64(r.N)
			res, err := runner.Run(context.Background(), jobs[0], runner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed() {
				t.Fatalf("%s: %s", k.Label(args), res.Failure)
			}
			last = res
			ratios = append(ratios, res.Median/bench)
			harness = append(harness, res.Median)
			benches = append(benches, bench)
			if res.Noise != nil {
				loads = append(loads, res.Noise.Load1)
			}
		}
		ratio := median(ratios)
		diff := ratio - 1
		rows = append(rows, fmt.Sprintf("| `%s` | %s (k=%d) | %s | %+.1f%% | %s |",
			k.Label(args), fmtNs(median(harness)), last.Calls, fmtNs(median(benches)), diff*100, fmtRange(loads)))
		ok := ratio <= 2 && ratio >= 0.5
		if limit > 0 {
			ok = math.Abs(diff) <= limit
		}
		if !ok {
			t.Errorf("%s: the harness's medians %v ns per call, testing.Benchmark's %v ns per op: %+.1f%% apart (median over %d rounds)",
				k.Label(args), harness, benches, diff*100, rounds)
		}
	}
	t.Logf("\n| kernel | wasmgap bench --engine native: median per call (k) | go test -bench: ns/op | difference (median over %d rounds) | load average |\n|---|---:|---:|---:|---:|\n%s",
		rounds, strings.Join(rows, "\n"))
}

func median(xs []float64) float64 {
	_, m, _, _ := measure.Summarize(xs)
	return m
}

func fmtRange(xs []float64) string {
	if len(xs) == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.2f – %.2f", slices.Min(xs), slices.Max(xs))
}

func named(k *kernels.Kernel, args []int) map[string]int {
	m := map[string]int{}
	for i, p := range k.Params {
		m[k.Name+"."+p.Name] = args[i]
	}
	return m
}

func fmtNs(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3g s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}
