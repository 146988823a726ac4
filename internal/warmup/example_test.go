package warmup_test

import (
	"fmt"

	"github.com/wasmgap/wasmgap/internal/warmup"
)

// A series whose first 300 calls take 500 ns and the rest 100 ns: one changepoint, a
// warm-up, steady from the 300th call.
func ExampleAnalyze() {
	times := make([]float64, 2000)
	for i := range times {
		times[i] = 100 + float64(i%3)
		if i < 300 {
			times[i] = 500 + float64(i%5)
		}
	}
	x, err := warmup.Analyze(times, 1, warmup.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x.Changepoints, x.Class, x.SteadyStart)
	fmt.Println(x.Words())
	// Output:
	// [300] warm-up 300
	// warm-up, steady after 300 calls, 0.15 ms
}
