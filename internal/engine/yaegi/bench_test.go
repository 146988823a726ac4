package yaegi

import (
	"context"
	"testing"
)

// benchArgs are sizes at which one interpreted call takes milliseconds to about a
// second: fib_rec(30) and ack(3, 7) are the figures compared with native.
var benchArgs = []struct {
	kernel string
	args   []int
}{
	{"fib_it", []int{90}},
	{"fib_rec", []int{30}},
	{"ack_while", []int{3, 7}},
	{"ack", []int{3, 7}},
	{"test1", []int{20100, 100}},
	{"test1b", []int{20100, 100}},
	{"test2", []int{20100, 100}},
	{"test3", []int{20100, 100}},
	{"test4", []int{20100, 100}},
	{"test5", []int{20100, 100}},
	{"test6", []int{20100, 100}},
	{"test7", []int{100_000}},
	{"test8", []int{100_000}},
	{"test8b", []int{100_000}},
}

// BenchmarkKernels runs every kernel on yaegi and, for the ratio, natively at the same
// arguments: go test -bench . -count 5 ./internal/engine/yaegi/
func BenchmarkKernels(b *testing.B) {
	ctx := context.Background()
	e := load(b)
	for _, c := range benchArgs {
		k := lookupKernel(b, c.kernel)
		want := k.Expected(c.args)
		b.Run(k.Label(c.args)+"/yaegi", func(b *testing.B) {
			for b.Loop() {
				got, err := e.Run(ctx, k, c.args)
				if err != nil || got != want {
					b.Fatalf("Run = %d, %v; want %d", got, err, want)
				}
			}
		})
		b.Run(k.Label(c.args)+"/native", func(b *testing.B) {
			for b.Loop() {
				if got := k.Call(c.args); got != want {
					b.Fatalf("Call = %d, want %d", got, want)
				}
			}
		})
	}
}

// BenchmarkLoad measures parsing and evaluating the kernel sources.
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		e := New()
		if _, err := e.Load(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
