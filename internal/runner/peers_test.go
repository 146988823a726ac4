package runner

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	peers "github.com/wasmgap/wasmgap/internal/engine/external"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
)

// externalEngines are the engines whose kernels run in a driver of package internal/engine/external:
// the articles' other languages and kernels.wasm on Node's V8.
var externalEngines = append(peers.Names(), peers.NodeWasms()...)

// skipMissing skips a test whose engine's runtime is not installed (or whose kernels.wasm
// is not built), unless PEERS_REQUIRED=1, as in CI, where every runtime must be there.
func skipMissing(t *testing.T, eng string, r measure.Result) {
	t.Helper()
	if strings.Contains(r.Failure, "go tool task wasm") {
		t.Skipf("%s: %s", eng, r.Failure)
	}
	if strings.Contains(r.Failure, "not installed: apt-get install") {
		if os.Getenv("PEERS_REQUIRED") == "1" {
			t.Fatalf("PEERS_REQUIRED=1 and %s: %s", eng, r.Failure)
		}
		t.Skipf("%s: %s", eng, r.Failure)
	}
}

// Every external engine, each call in a worker process, runs the samples and the warm-up it
// was asked for, reports its driver's start, and gives the catalogue's values for a
// recursion and a loop kernel at small sizes (sizes whose checksums are not zero). Every
// kernel's value on every engine is TestEveryEngineEveryKernel's.
func TestExternalEnginesInWorkers(t *testing.T) {
	calls := []struct {
		kernel string
		args   map[string]int
	}{
		{"fib_rec", map[string]int{"n": 20}},
		{"test8", map[string]int{"large": 1_000}},
	}
	for _, eng := range externalEngines {
		t.Run(eng, func(t *testing.T) {
			for _, c := range calls {
				// Two runs after one warm-up call, each a single call: the runs and the
				// warm-up are what is checked, not how long they last.
				job := oneJob(t, eng, c.kernel, c.args, measure.Options{Runs: 2, Warmup: 1, WarmupTime: -1, MinSample: -1}, time.Minute)
				r, err := Run(context.Background(), job, Options{})
				if err != nil {
					t.Fatal(err)
				}
				skipMissing(t, eng, r)
				k, _ := kernels.Lookup(c.kernel)
				want := k.Expected(job.Args())
				if want == 0 {
					t.Fatalf("%s: the catalogue's value is 0: pick arguments that check something", job.Label())
				}
				if r.Failed() || r.Value != want || r.Runs != 2 || len(r.Samples) != 2 {
					t.Errorf("%s on %s: %+v; want the value %d from 2 runs", job.Label(), eng, r, want)
				}
				if r.Setup.Instantiate <= 0 {
					t.Errorf("%s on %s: setup %+v, want the driver's start time as Instantiate", job.Label(), eng, r.Setup)
				}
			}
		})
	}
}

// An external engine whose runtime is missing is a cell that says what to install.
func TestExternalEngineNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // the worker finds no php
	r, err := Run(context.Background(), oneJob(t, "php", "fib_it", map[string]int{"n": 10}, measure.Options{Runs: 1}, time.Minute), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failure != "load failed: php not installed: apt-get install php-cli" {
		t.Errorf("failure %q, want the install hint", r.Failure)
	}
}

// A driver that outlives its cell's time limit is a "timed out" cell, as every engine's.
func TestExternalEngineTimesOut(t *testing.T) {
	r, err := Run(context.Background(), oneJob(t, "c", "fib_rec", map[string]int{"n": 60}, measure.Options{Runs: 1, Warmup: 0}, 3*time.Second), Options{})
	if err != nil {
		t.Fatal(err)
	}
	skipMissing(t, "c", r)
	if r.Failure != "timed out after 3s" {
		t.Errorf("fib_rec(60) on c with a 3s limit: %+v", r)
	}
}
