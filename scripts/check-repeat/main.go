// Command check-repeat checks that the harness's intervals hold from one process to the
// next: it runs the same bench several times (-times, six by default, each a fresh
// `wasmgap bench`), then counts the pairs of same-cell 95% intervals from different
// invocations that do not overlap, and the same for each cell's × baseline interval
// (measure.RatioOf over the cells' executions). Two honest 95% intervals of one quantity
// almost always overlap: the check fails past -max-disjoint of the pairs. It is a check of
// the method on this machine, now, run on demand (`go tool task check-repeat`), never part
// of `go test`; on a busy machine its figures say so (each run's load is printed).
//
// By default it runs issue 48's command,
//
//	wasmgap bench --engine native,wazero-compiler --kernel fib_it,fib_rec,test1,ack --runs 6 --no-save --format json
//
// and bench's flags after -- replace those between "bench" and "--no-save".
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

var (
	bin         = flag.String("bin", "bin/wasmgap", "the wasmgap binary to run")
	times       = flag.Int("times", 6, "how many invocations of bench (2 to 20)")
	maxDisjoint = flag.Float64("max-disjoint", 2.0/120, "the largest share of disjoint same-cell pairs allowed (the issue's 2 of 120); × baseline pairs are allowed half of it")
)

func main() {
	flag.Parse()
	if err := run(flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "check-repeat:", err)
		os.Exit(2)
	}
}

func run(benchArgs []string) error {
	if *times < 2 || *times > 20 {
		return fmt.Errorf("-times %d: allowed 2 to 20", *times)
	}
	if len(benchArgs) == 0 {
		benchArgs = strings.Fields("--engine native,wazero-compiler --kernel fib_it,fib_rec,test1,ack --runs 6")
	}
	var runs []*report.Report
	for i := range *times {
		cmd := exec.Command(*bin, append(append([]string{"bench"}, benchArgs...), "--no-save", "--format", "json")...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("invocation %d: %v", i+1, err)
		}
		var rep report.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			return fmt.Errorf("invocation %d: its JSON: %v", i+1, err)
		}
		fmt.Printf("invocation %d: %d cells, %s\n", i+1, len(rep.Results), loadOf(rep.Results))
		runs = append(runs, &rep)
	}
	cells, cellsOff := 0, 0
	ratios, ratiosOff := 0, 0
	for _, key := range keysOf(runs) {
		var times, xs []measure.Interval
		for _, rep := range runs {
			r, ok := find(rep.Results, key)
			if !ok || r.Failed() || !r.CI.Valid() {
				continue
			}
			times = append(times, r.CI)
			baseline := report.Baseline("", func(e string) bool {
				b, ok := find(rep.Results, [3]string{key[0], key[1], e})
				return ok && !b.Failed() && b.Median > 0
			})
			base, _ := find(rep.Results, [3]string{key[0], key[1], baseline})
			if x, ok := report.BaseRatio(r, base); ok && x.Valid() {
				xs = append(xs, measure.Interval{Lo: x.Lo, Hi: x.Hi, Level: x.Level})
			}
		}
		n, off := disjoint(times)
		cells, cellsOff = cells+n, cellsOff+off
		label := key[0] + "(" + strings.ReplaceAll(strings.Trim(key[1], "[]"), " ", ", ") + ") on " + key[2]
		fmt.Printf("%-40s %2d of %3d pairs of its intervals disjoint\n", label, off, n)
		if len(xs) > 0 {
			n, off := disjoint(xs)
			ratios, ratiosOff = ratios+n, ratiosOff+off
			fmt.Printf("%-40s %2d of %3d pairs disjoint\n", "  its × baseline", off, n)
		}
	}
	fmt.Printf("same-cell intervals: %d of %d pairs disjoint; × baseline: %d of %d\n", cellsOff, cells, ratiosOff, ratios)
	if float64(cellsOff) > *maxDisjoint*float64(cells) || float64(ratiosOff) > *maxDisjoint/2*float64(ratios) {
		fmt.Printf("check-repeat: more disjoint pairs than allowed (%.3g of the cells' pairs, %.3g of the ratios')\n", *maxDisjoint, *maxDisjoint/2)
		os.Exit(1)
	}
	fmt.Println("check-repeat: the intervals hold across invocations")
	return nil
}

// keysOf lists the cells (kernel, arguments, engine) of the runs, in the first run's order.
func keysOf(runs []*report.Report) [][3]string {
	var keys [][3]string
	for _, rep := range runs {
		for _, r := range rep.Results {
			if k := keyOf(r); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func keyOf(r measure.Result) [3]string {
	return [3]string{r.Kernel, fmt.Sprint(r.Args), r.Engine}
}

func find(results []measure.Result, key [3]string) (measure.Result, bool) {
	for _, r := range results {
		if keyOf(r) == key {
			return r, true
		}
	}
	return measure.Result{}, false
}

// disjoint counts the pairs of intervals and those that do not overlap.
func disjoint(iv []measure.Interval) (pairs, off int) {
	for i := range iv {
		for j := i + 1; j < len(iv); j++ {
			pairs++
			if iv[i].Hi < iv[j].Lo || iv[j].Hi < iv[i].Lo {
				off++
			}
		}
	}
	return pairs, off
}

// loadOf says the load average the run's cells were measured at.
func loadOf(results []measure.Result) string {
	var loads []float64
	for _, r := range results {
		if r.Noise != nil {
			loads = append(loads, r.Noise.Load1)
		}
	}
	if len(loads) == 0 {
		return "load unknown"
	}
	return fmt.Sprintf("load average %.2f to %.2f", slices.Min(loads), slices.Max(loads))
}
