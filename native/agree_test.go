package native_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

var (
	defaultArgs = flag.Bool("default-args", false, "compare at the catalogue's default arguments (the articles' sizes) instead of small ones")
	minSample   = flag.Duration("min-sample", 0, "the harness's sample minimum (0: measure.DefaultMinSample, 10ms; -benchtime of the go test -bench side is 10ms, or 200ms with -default-args)")
	onlyKernels = flag.String("kernels", "", "compare only these kernels (comma-separated names; empty: every kernel)")
	control     = flag.Bool("control", false, "also time each kernel with a second go test -bench process per round and print how far go test -bench is from itself: the machine's floor for -within")
	within      = flag.Float64("within", 0, "the largest relative difference allowed between the harness's median and testing.Benchmark's ns/op (0: a factor of 3 per kernel and of 1.5 on average, bounds that hold on a busy machine)")
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
// does (a worker process, calibrated samples, the median) and as `go test -bench` does
// (BenchmarkKernel below, the loop of BenchmarkKernels in package kernels, run by this test
// binary in a process of its own with -count 10, its median taken as benchstat takes it),
// in the same run: rounds of one benchmark and one harness measurement, each in a fresh
// process, the two taking turns going first, so that a machine whose speed changes from one
// second to the next (this one's virtual cores slow down by up to 1.7 times for spells of
// 30 ms to seconds, unseen from inside) weighs on both alike; the figure compared is the
// median over the rounds of the harness's median over the benchmark's. With -control a
// second benchmark process per round shows how far go test -bench is from itself.
//
// By default, at small arguments, each kernel agrees within a factor of 3 and the
// geometric mean over the kernels within a factor of 1.5: bounds that hold on this shared
// machine at a load average of 12 on 2 cores, where single figures move by tens of
// percent, and that a harness timing its own overhead (4-8x on fib_it before calibrated
// samples) fails. The strict comparison of docs/VALIDATION.md is
//
//	go test ./native -run AgreesWithGoBench -v -args -default-args -within 0.05
//
// which prints the table of both figures with the machine's load average (add -control for
// the floor).
func TestAgreesWithGoBench(t *testing.T) {
	if testing.Short() {
		t.Skip("times every kernel")
	}
	limit := *within
	// Five rounds for the strict comparison; three at small sizes, where the bounds are
	// loose and the test checks the mechanism (the two sides alternate either way).
	rounds := 3
	benchtime := "10ms"
	if *defaultArgs {
		rounds, benchtime = 5, "200ms"
	}
	if *onlyKernels != "" {
		for _, name := range strings.Split(*onlyKernels, ",") {
			if _, err := kernels.Lookup(name); err != nil {
				t.Fatalf("-kernels: %v", err)
			}
		}
	}
	var rows []string
	var logRatios []float64
	for _, k := range kernels.All() {
		if *onlyKernels != "" && !slices.Contains(strings.Split(*onlyKernels, ","), k.Name) {
			continue
		}
		args := smallArgs(k)
		if *defaultArgs {
			args = k.Defaults()
		}
		opts := measure.Defaults()
		opts.MinSample = *minSample
		if !*defaultArgs {
			// At small sizes, with bounds a busy machine keeps, a warm-up of 50 ms (not
			// measure.DefaultWarmupTime's 500) and go test -bench's 10 ms runs keep the 42
			// rounds of go tool task test short.
			opts.WarmupTime = 50 * time.Millisecond
		}
		plan := runner.Plan{Engines: []string{"native"}, Kernels: []string{k.Name}, Args: named(k, args), Options: opts}
		jobs, err := plan.Jobs()
		if err != nil {
			t.Fatal(err)
		}
		var ratios, controls, harness, benches, loads, faults, benchFaults []float64
		var last measure.Result
		for round := range rounds {
			// The two sides take turns going first, so that neither is always the one
			// measured right after the other (a machine that slows down over a round
			// weighs on both alike). The control, a second benchmark process, comes last.
			var bench, bf float64
			if round%2 == 0 {
				bench, bf = goBench(t, k.Name, benchtime)
			}
			res, err := runner.Run(context.Background(), jobs[0], runner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed() {
				t.Fatalf("%s: %s", k.Label(args), res.Failure)
			}
			if round%2 == 1 {
				bench, bf = goBench(t, k.Name, benchtime)
			}
			if bf >= 0 {
				benchFaults = append(benchFaults, bf)
			}
			if *control {
				again, _ := goBench(t, k.Name, benchtime)
				controls = append(controls, again/bench)
			}
			last = res
			ratios = append(ratios, res.Median/bench)
			harness = append(harness, res.Median)
			benches = append(benches, bench)
			if res.Noise != nil {
				loads = append(loads, res.Noise.Load1)
				faults = append(faults, res.Noise.FaultsPerCall)
			}
		}
		ratio := median(ratios)
		diff := ratio - 1
		row := fmt.Sprintf("| `%s` | %s (k=%d) | %s | %s | %s | %+.1f%% | %s |",
			k.Label(args), fmtNs(median(harness)), last.Calls, fmtFaults(faults), fmtNs(median(benches)), fmtFaults(benchFaults), diff*100, fmtSpread(ratios))
		if *control {
			row += fmt.Sprintf(" %+.1f%% | %s |", (median(controls)-1)*100, fmtSpread(controls))
		}
		rows = append(rows, row+fmt.Sprintf(" %s |", fmtRange(loads)))
		logRatios = append(logRatios, math.Log(ratio))
		ok := ratio <= 3 && ratio >= 1.0/3
		if limit > 0 {
			ok = math.Abs(diff) <= limit
		}
		if !ok {
			t.Errorf("%s: the harness's medians %v ns per call, testing.Benchmark's %v ns per op: %+.1f%% apart (median over %d rounds)",
				k.Label(args), harness, benches, diff*100, rounds)
		}
	}
	// Over all kernels, the harness leans neither way: the geometric mean of the ratios is
	// near 1 even where single kernels move with the machine's load.
	var sum float64
	for _, l := range logRatios {
		sum += l
	}
	if gm := math.Exp(sum / float64(len(logRatios))); limit == 0 && (gm > 1.5 || gm < 1/1.5) {
		t.Errorf("the harness's medians are %.2f times go test -bench's on average over the kernels: a bias, not noise", gm)
	} else {
		t.Logf("geometric mean of the ratios over %d kernels: %.3f", len(logRatios), gm)
	}
	head := fmt.Sprintf("| kernel | wasmgap bench --engine native: median per call (k) | its page faults per call | go test -bench -count %d: median ns/op | its page faults per call | difference (median over %d rounds) | the rounds' differences |", benchCount, rounds)
	rule := "|---|---:|---:|---:|---:|---:|---:|"
	if *control {
		head += " control: a second go test -bench against the first | the rounds' |"
		rule += "---:|---:|"
	}
	t.Logf("\n%s load average |\n%s---:|\n%s", head, rule, strings.Join(rows, "\n"))
}

// BenchmarkKernel times each kernel's native call as `go test -bench` does, at the
// arguments TestAgreesWithGoBench uses (-default-args for the articles' sizes).
func BenchmarkKernel(b *testing.B) {
	for _, k := range kernels.All() {
		args := smallArgs(k)
		if *defaultArgs {
			args = k.Defaults()
		}
		b.Run(k.Name, func(b *testing.B) {
			for b.Loop() {
				k.Call(args)
			}
		})
	}
}

// benchCount is the -count of each go test -bench process: ten runs, as benchstat is
// usually given, whose median reflects the process after its first, colder runs.
const benchCount = 10

// goBench runs BenchmarkKernel/<kernel> with -count benchCount in a new process of this test
// binary and returns the median of its ns/op, as benchstat summarises them (on a loaded
// machine the mean over one long run counts every time the process waited for a core,
// where a median of shorter runs, like the harness's median of samples, counts the
// typical wait), and the process's minor page faults per call over all its runs (-1 where
// unknown; its start and exit are counted too, a few thousand faults over hundreds of calls
// or more).
func goBench(t *testing.T, kernel, benchtime string) (nsPerOp, faultsPerCall float64) {
	t.Helper()
	args := []string{"-test.run=^$", "-test.bench=^BenchmarkKernel$/^" + kernel + "$", "-test.benchtime=" + benchtime, "-test.count=" + strconv.Itoa(benchCount)}
	if *defaultArgs {
		args = append(args, "-default-args")
	}
	cmd := exec.Command(os.Args[0], args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", os.Args[0], args, err, out)
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
		t.Fatalf("no ns/op in the benchmark's output:\n%s", out)
	}
	faultsPerCall = -1
	if f, ok := minorFaults(cmd.ProcessState); ok && calls > 0 {
		faultsPerCall = float64(f) / float64(calls)
	}
	return median(nsop), faultsPerCall
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
