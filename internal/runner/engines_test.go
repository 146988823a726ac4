package runner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/browser"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/kernels"
)

// smallArgs make every kernel quick on every engine and stay under the wazero
// interpreter's stack limit.
func smallArgs(k *kernels.Kernel) []int {
	switch k.Name {
	case "fib_it":
		return []int{40}
	case "fib_rec":
		return []int{15}
	case "ack", "ack_while":
		return []int{2, 3}
	}
	if len(k.Params) == 2 {
		return []int{20_010, 10}
	}
	return []int{1_000}
}

// valueOnly is the measurement of a test that checks values, not times: one call, no
// warm-up, no calibration of k (which costs an engine like Python's 0.25 s a cell).
var valueOnly = measure.Options{Runs: 1, MinSample: -1}

// Every kernel gives its checked result on every engine, each in a worker.
func TestEveryEngineEveryKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a worker per kernel and engine")
	}
	for _, eng := range engine.Names() {
		t.Run(eng, func(t *testing.T) {
			if slices.Contains(browser.Names(), eng) {
				// A browser per cell would make this test minutes long: internal/engine/browser's
				// TestEnginesInWorkers runs them, through workers, on each kind of kernel.
				t.Skip("a browser engine: internal/engine/browser's tests run it")
			}
			// The engines' workers are independent processes: two engines at a time.
			t.Parallel()
			for _, k := range kernels.All() {
				args := smallArgs(k)
				named := map[string]int{}
				for i, p := range k.Params {
					named[p.Name] = args[i]
				}
				r, err := Run(context.Background(), oneJob(t, eng, k.Name, named, valueOnly, 0), Options{})
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(r.Failure, "load failed") {
					skipMissing(t, eng, r)
				}
				if r.Failed() || r.Value != k.Expected(args) {
					t.Errorf("%s on %s: value %d, failure %q; want %d", k.Label(args), eng, r.Value, r.Failure, k.Expected(args))
				}
			}
		})
	}
}

// The wazero interpreter overflows on ack(3, 10), like the article's HHVM row; the
// overflow is a result, and the engine works again in the next worker.
func TestInterpreterStackOverflow(t *testing.T) {
	r, err := Run(context.Background(), oneJob(t, "wazero-interpreter", "ack", map[string]int{"n": 3, "m": 10}, measure.Options{Runs: 1}, 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(r.Failure, "load failed") && strings.Contains(r.Failure, "go tool task wasm") {
		t.Skip(r.Failure)
	}
	if r.Failure != "stack overflow" {
		t.Errorf("ack(3, 10) on wazero-interpreter: %+v", r)
	}
}

// host_call is a row only the engines of kernels.wasm fill: each of them, in a worker,
// calls nop and gets the catalogue's value; every other engine is no job, says why when it
// is all a plan asks for and would be measured anyway, and shows the cell as not
// applicable in a report. Every engine of the WebAssembly group is one of kernels.wasm's.
func TestHostCallOnKernelsWasmEnginesOnly(t *testing.T) {
	k, err := kernels.Lookup("host_call")
	if err != nil {
		t.Fatal(err)
	}
	var wasmResult measure.Result
	for _, eng := range engine.Names() {
		t.Run(eng, func(t *testing.T) {
			info, _ := engine.Lookup(eng)
			if info.Group == engine.GroupWasm && !info.KernelsWasm {
				t.Errorf("%s is in the WebAssembly group but does not run kernels.wasm's host_call", eng)
			}
			// A mechanism, not a speed: a browser's start on a busy machine takes what it takes.
			jobs, err := Plan{Engines: []string{eng}, Kernels: []string{k.Name}, Options: measure.Options{Runs: 3}, Executions: 1, Timeout: 10 * time.Minute}.Jobs()
			if !info.KernelsWasm {
				if !errors.Is(err, engine.ErrNotApplicable) || len(jobs) != 0 {
					t.Errorf("plan of host_call on %s: %d jobs, error %v; want none, engine.ErrNotApplicable", eng, len(jobs), err)
				}
				e, err := engine.New(eng)
				if err != nil {
					t.Fatal(err)
				}
				if r := measure.Measure(context.Background(), e, k, nil, measure.Options{Runs: 1}, nil); !strings.HasPrefix(r.Failure, "not applicable") || r.Median != 0 {
					t.Errorf("measure host_call on %s: %+v; want not applicable and no time", eng, r)
				}
				return
			}
			if slices.Contains(browser.Names(), eng) && testing.Short() {
				t.Skip("a browser engine: starts a browser")
			}
			if err != nil || len(jobs) != 1 {
				t.Fatalf("plan of host_call on %s: %d jobs, %v", eng, len(jobs), err)
			}
			r, err := Run(context.Background(), jobs[0], Options{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(r.Failure, "load failed") {
				skipMissing(t, eng, r)
				if slices.Contains(browser.Names(), eng) {
					t.Skip(r.Failure)
				}
			}
			if r.Failed() || r.Value != kernels.NopValue || r.Median <= 0 {
				t.Errorf("host_call on %s: value %d, median %v ns, failure %q; want %d", eng, r.Value, r.Median, r.Failure, kernels.NopValue)
			}
			if eng == engine.WazeroCompiler {
				wasmResult = r
			}
		})
	}
	if wasmResult.Engine == "" {
		return
	}
	// native asked for, with no cell: its column stays, n/a.
	var out strings.Builder
	if err := report.Write(&out, report.FormatMarkdown, report.Report{Engines: []string{engine.Native, engine.WazeroCompiler}, Results: []measure.Result{wasmResult}}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "| host_call() | "+report.NotApplicable+" |") != 2 { // the medians' table and the first calls'

		t.Errorf("the report does not show host_call on native as %s:\n%s", report.NotApplicable, out.String())
	}
}
