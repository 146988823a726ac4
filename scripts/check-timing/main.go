// Command check-timing sets the harness's time of every kernel on the native engine beside
// `go test -bench`'s, on this machine, now: the check of the method that `go tool task
// check-timing` runs on demand. A speed is a benchmark's business, not a test's: on a busy
// machine single figures move by tens of percent, so this is no test of `go test`; it
// prints its table and a verdict, and exits 1 when the two disagree past its bounds.
//
// Each kernel runs in rounds of one benchmark process and one harness measurement (one
// worker process, calibrated samples, the median), the two taking turns going first, so
// that a machine whose speed changes from one second to the next weighs on both alike;
// the figure compared is the median over the rounds of the harness's median over the
// benchmark's (go test -bench -count 10 of native's BenchmarkKernel, its median taken as
// benchstat takes it). With -control a second benchmark process per round shows how far go
// test -bench is from itself: the machine's floor for -within.
//
// By default, at small arguments, each kernel agrees within a factor of 3 and the
// geometric mean over the kernels within a factor of 1.5; the strict comparison of
// docs/VALIDATION.md is
//
//	go tool task check-timing -- -default-args -within 0.05
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

// benchCount is the -count of each go test -bench process: ten runs, as benchstat is
// usually given, whose median reflects the process after its first, colder runs.
const benchCount = 10

var (
	defaultArgs = flag.Bool("default-args", false, "compare at the catalogue's default arguments (the articles' sizes) instead of small ones")
	minSample   = flag.Duration("min-sample", 0, "the harness's sample minimum (0: measure.DefaultMinSample, 10ms; -benchtime of the go test -bench side is 10ms, or 200ms with -default-args)")
	onlyKernels = flag.String("kernels", "", "compare only these kernels (comma-separated names; empty: every kernel)")
	control     = flag.Bool("control", false, "also time each kernel with a second go test -bench process per round and print how far go test -bench is from itself: the machine's floor for -within")
	within      = flag.Float64("within", 0, "the largest relative difference allowed between the harness's median and testing.Benchmark's ns/op (0: a factor of 3 per kernel and of 1.5 on average, bounds that hold on a busy machine)")
)

func main() {
	runner.ServeWorkerIfRequested() // the harness's workers are this program
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "check-timing:", err)
		os.Exit(1)
	}
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

func run() error {
	var only []string
	if *onlyKernels != "" {
		only = strings.Split(*onlyKernels, ",")
		for _, name := range only {
			if _, err := kernels.Lookup(name); err != nil {
				return fmt.Errorf("-kernels: %w", err)
			}
		}
	}
	dir, err := os.MkdirTemp("", "check-timing")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "native.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, "./native").CombinedOutput(); err != nil {
		return fmt.Errorf("build native's benchmark: %v\n%s", err, out)
	}
	// Five rounds for the strict comparison; three at small sizes, where the bounds are
	// loose.
	rounds, benchtime := 3, "10ms"
	if *defaultArgs {
		rounds, benchtime = 5, "200ms"
	}
	var rows, failures []string
	var logRatios []float64
	for _, k := range kernels.All() {
		if only != nil && !slices.Contains(only, k.Name) {
			continue
		}
		args := smallArgs(k)
		if *defaultArgs {
			args = k.Defaults()
		}
		opts := measure.Defaults()
		opts.MinSample = *minSample
		if !*defaultArgs {
			// At small sizes a warm-up of 50 ms (not measure.DefaultWarmupTime's 500)
			// and go test -bench's 10 ms runs keep the rounds short.
			opts.WarmupTime = 50 * time.Millisecond
		}
		named := map[string]int{}
		for i, p := range k.Params {
			named[k.Name+"."+p.Name] = args[i]
		}
		jobs, err := runner.Plan{Engines: []string{"native"}, Kernels: []string{k.Name}, Args: named, Options: opts, Executions: 1}.Jobs()
		if err != nil {
			return err
		}
		bench := func() (float64, float64, error) { return goBench(bin, k.Name, args, benchtime) }
		var ratios, controls, harness, benches, loads, faults, benchFaults []float64
		var last measure.Result
		for round := range rounds {
			var b, bf float64
			if round%2 == 0 {
				if b, bf, err = bench(); err != nil {
					return err
				}
			}
			res, err := runner.Run(context.Background(), jobs[0], runner.Options{})
			if err != nil {
				return err
			}
			if res.Failed() {
				return fmt.Errorf("%s: %s", k.Label(args), res.Failure)
			}
			if round%2 == 1 {
				if b, bf, err = bench(); err != nil {
					return err
				}
			}
			if bf >= 0 {
				benchFaults = append(benchFaults, bf)
			}
			if *control {
				again, _, err := bench()
				if err != nil {
					return err
				}
				controls = append(controls, again/b)
			}
			last = res
			ratios = append(ratios, res.Median/b)
			harness = append(harness, res.Median)
			benches = append(benches, b)
			if res.Noise != nil {
				loads = append(loads, res.Noise.Load1)
				faults = append(faults, res.Noise.FaultsPerCall)
			}
		}
		ratio := median(ratios)
		diff := ratio - 1
		row := fmt.Sprintf("| `%s` | %s (k=%d) | %s | %s | %s | %+.1f%% | %s |", k.Label(args), fmtNs(median(harness)), last.Calls, fmtFaults(faults),
			fmtNs(median(benches)), fmtFaults(benchFaults), diff*100, fmtSpread(ratios))
		if *control {
			row += fmt.Sprintf(" %+.1f%% | %s |", (median(controls)-1)*100, fmtSpread(controls))
		}
		rows = append(rows, row+fmt.Sprintf(" %s |", fmtRange(loads)))
		logRatios = append(logRatios, math.Log(ratio))
		ok := ratio <= 3 && ratio >= 1.0/3
		if *within > 0 {
			ok = math.Abs(diff) <= *within
		}
		if !ok {
			failures = append(failures, fmt.Sprintf("%s: the harness's medians %v ns per call, testing.Benchmark's %v ns per op: %+.1f%% apart (median over %d rounds)", k.Label(args), harness, benches, diff*100, rounds))
		}
	}
	head := fmt.Sprintf("| kernel | wasmgap bench --engine native: median per call (k) | its page faults per call | go test -bench -count %d: median ns/op | its page faults per call | difference (median over %d rounds) | the rounds' differences |", benchCount, rounds)
	rule := "|---|---:|---:|---:|---:|---:|---:|"
	if *control {
		head += " control: a second go test -bench against the first | the rounds' |"
		rule += "---:|---:|"
	}
	fmt.Printf("%s load average |\n%s---:|\n%s\n\n", head, rule, strings.Join(rows, "\n"))
	// Over all kernels, the harness leans neither way: the geometric mean of the ratios is
	// near 1 even where single kernels move with the machine's load.
	var sum float64
	for _, l := range logRatios {
		sum += l
	}
	gm := math.Exp(sum / float64(len(logRatios)))
	fmt.Printf("geometric mean of the ratios over %d kernels: %.3f\n", len(logRatios), gm)
	if *within == 0 && (gm > 1.5 || gm < 1/1.5) {
		failures = append(failures, fmt.Sprintf("the harness's medians are %.2f times go test -bench's on average over the kernels: a bias, not noise", gm))
	}
	if len(failures) > 0 {
		return fmt.Errorf("the harness and go test -bench disagree past the bounds (on a busy machine, say so and run again quiet):\n  %s", strings.Join(failures, "\n  "))
	}
	fmt.Println("check-timing: the harness agrees with go test -bench within the bounds")
	return nil
}

// goBench runs BenchmarkKernel/<kernel> with -count benchCount in a process of native's test
// binary and returns the median of its ns/op, as benchstat summarises them, and the
// process's minor page faults per call over all its runs (-1 where unknown).
func goBench(bin, kernel string, args []int, benchtime string) (nsPerOp, faultsPerCall float64, err error) {
	k, err := kernels.Lookup(kernel)
	if err != nil {
		return 0, 0, err
	}
	text := make([]string, len(args))
	for i, a := range args {
		text[i] = k.Params[i].Name + "=" + strconv.Itoa(a)
	}
	flags := []string{"-test.run=^$", "-test.bench=^BenchmarkKernel$/^" + kernel + "$", "-test.benchtime=" + benchtime,
		"-test.count=" + strconv.Itoa(benchCount), "-kernel-args=" + strings.Join(text, ",")}
	cmd := exec.Command(bin, flags...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%s %v: %v\n%s", bin, flags, err, out)
	}
	var nsop []float64
	var calls int64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && strings.HasPrefix(f[0], "BenchmarkKernel/"+kernel) && f[3] == "ns/op" {
			v, err := strconv.ParseFloat(f[2], 64)
			n, nerr := strconv.ParseInt(f[1], 10, 64)
			if err == nil && nerr == nil {
				nsop = append(nsop, v)
				calls += n
			}
		}
	}
	if len(nsop) == 0 {
		return 0, 0, fmt.Errorf("no ns/op in the benchmark's output:\n%s", out)
	}
	faultsPerCall = -1
	if f, ok := minorFaults(cmd.ProcessState); ok && calls > 0 {
		faultsPerCall = float64(f) / float64(calls)
	}
	return median(nsop), faultsPerCall, nil
}

func median(xs []float64) float64 {
	_, m, _, _ := measure.Summarize(xs)
	return m
}

// fmtFaults renders the median of page faults per call ("unknown" where not counted).
func fmtFaults(faults []float64) string {
	if len(faults) == 0 {
		return "unknown"
	}
	f := median(faults)
	if f < 10 {
		return fmt.Sprintf("%.2f", f)
	}
	return fmt.Sprintf("%.0f", f)
}

// fmtSpread renders the smallest and largest of ratios as differences: "-4% to +2%".
func fmtSpread(ratios []float64) string {
	return fmt.Sprintf("%+.0f%% to %+.0f%%", (slices.Min(ratios)-1)*100, (slices.Max(ratios)-1)*100)
}

func fmtRange(xs []float64) string {
	if len(xs) == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.2f – %.2f", slices.Min(xs), slices.Max(xs))
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
