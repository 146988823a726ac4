// Package enginetest holds what the engines' tests share: small arguments for every kernel
// of the catalogue, and a check that an engine returns the catalogue's value for each.
package enginetest

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/kernels"
)

// SmallArgs are small arguments for every kernel of the catalogue: the pair loops share
// 100 values at these sizes, so their checksums are not zero.
var SmallArgs = map[string][][]int{
	"fib_it":    {{0}, {1}, {40}, {92}},
	"fib_rec":   {{1}, {2}, {20}},
	"ack_while": {{0, 0}, {1, 5}, {2, 3}, {3, 3}},
	"ack":       {{0, 0}, {1, 5}, {2, 3}, {3, 3}},
	"test1":     {{20100, 100}, {300, 10}},
	"test1b":    {{20100, 100}},
	"test2":     {{20100, 100}},
	"test3":     {{20100, 100}},
	"test4":     {{20100, 100}},
	"test5":     {{20100, 100}},
	"test6":     {{20100, 100}},
	"test7":     {{1}, {1000}},
	"test8":     {{1000}},
	"test8b":    {{1000}},
	"host_call": {{}},
}

// Load loads e, skipping the test when its runtime is not installed, unless
// PEERS_REQUIRED=1 (set where every runtime is installed, as in CI), which fails it.
func Load(t testing.TB, e engine.Engine) {
	t.Helper()
	_, err := e.Load(context.Background())
	if errors.Is(err, driver.ErrNotInstalled) {
		if os.Getenv("PEERS_REQUIRED") == "1" {
			t.Fatalf("PEERS_REQUIRED=1 and %v", err)
		}
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatalf("%s: Load: %v", e.Name(), err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
}

// EveryKernel runs every kernel of the catalogue that e runs (engine.Applies: host_call on
// the engines of kernels.wasm only) on e (loaded) with SmallArgs, once and, when e is an
// engine.SelfTimer, in a batch of 3, and checks every value against the catalogue's.
func EveryKernel(t *testing.T, e engine.Engine) {
	t.Helper()
	ctx := context.Background()
	for _, k := range kernels.Every() {
		if engine.Applies(e.Name(), k) != nil {
			continue
		}
		cases, ok := SmallArgs[k.Name]
		if !ok {
			t.Fatalf("no test arguments for kernel %s", k.Name)
		}
		for _, args := range cases {
			want := k.Expected(args)
			v, err := e.Run(ctx, k, args)
			if err != nil {
				t.Fatalf("%s: %s: %v", e.Name(), k.Label(args), err)
			}
			if v != want {
				t.Errorf("%s: %s = %d, want %d", e.Name(), k.Label(args), v, want)
			}
			if st, ok := e.(engine.SelfTimer); ok {
				first, sum, elapsed, err := st.RunTimedBatch(ctx, k, args, 3)
				if err != nil || first != want || sum != 3*want || elapsed < 0 {
					t.Errorf("%s: %s ×3 = %d, %d, %v, %v; want %d, %d", e.Name(), k.Label(args), first, sum, elapsed, err, want, 3*want)
				}
			}
		}
	}
}
