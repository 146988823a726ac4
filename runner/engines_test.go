package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/measure"
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

// Every kernel gives its checked result on every engine, each in a worker.
func TestEveryEngineEveryKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a worker per kernel and engine")
	}
	for _, eng := range engine.Names() {
		t.Run(eng, func(t *testing.T) {
			// Engines share nothing but the machine: while one engine's worker starts (a
			// JVM, Node, a module loaded), another's runs.
			t.Parallel()
			for _, k := range kernels.All() {
				args := smallArgs(k)
				named := map[string]int{}
				for i, p := range k.Params {
					named[p.Name] = args[i]
				}
				r, err := Run(context.Background(), oneJob(t, eng, k.Name, named, measure.Options{Runs: 1}, 0), Options{})
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
