package wazero

import (
	"context"
	"testing"

	"github.com/wasmgap/wasmgap/kernels"
)

// benchArgs are small arguments, so that a benchmark of every kernel stays quick.
var benchArgs = map[string][]int{
	"fib_it": {40}, "fib_rec": {20}, "ack_while": {2, 50}, "ack": {2, 50},
	"test1": {500, 20}, "test1b": {500, 20}, "test2": {500, 20}, "test3": {500, 20},
	"test4": {500, 20}, "test5": {500, 20}, "test6": {500, 20},
	"test7": {10_000}, "test8": {10_000}, "test8b": {10_000},
}

// BenchmarkRun times one call of each kernel on each mode, the way the harness calls it.
func BenchmarkRun(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) {
			e := load(b, mode.opts)
			for _, k := range kernels.All() {
				args := benchArgs[k.Name]
				b.Run(k.Label(args), func(b *testing.B) { benchRun(b, e, k, args) })
			}
		})
	}
}

// BenchmarkFibRec30 compares fib_rec(30) natively and on both modes.
func BenchmarkFibRec30(b *testing.B) {
	k, err := kernels.Lookup("fib_rec")
	if err != nil {
		b.Fatal(err)
	}
	args := []int{30}
	b.Run("native", func(b *testing.B) {
		for b.Loop() {
			if got := k.Call(args); got != 832040 {
				b.Fatalf("fib_rec(30) = %d", got)
			}
		}
	})
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) { benchRun(b, load(b, mode.opts), k, args) })
	}
}

func benchRun(b *testing.B, e *Engine, k *kernels.Kernel, args []int) {
	ctx := context.Background()
	want := k.Expected(args)
	for b.Loop() {
		got, err := e.Run(ctx, k, args)
		if err != nil || got != want {
			b.Fatalf("%s = %d, %v; want %d", k.Label(args), got, err, want)
		}
	}
}
