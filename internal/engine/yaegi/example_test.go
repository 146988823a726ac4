package yaegi_test

import (
	"context"
	"fmt"

	"github.com/wasmgap/wasmgap/internal/engine/yaegi"
	"github.com/wasmgap/wasmgap/kernels"
)

// The engine interprets the kernels' Go source: load it once, then run any kernel.
func Example() {
	ctx := context.Background()
	e := yaegi.New()
	if _, err := e.Load(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close(ctx)

	k, err := kernels.Lookup("fib_rec")
	if err != nil {
		fmt.Println(err)
		return
	}
	args := []int{20}
	v, err := e.Run(ctx, k, args)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.Name(), k.Label(args), "=", v)
	// Output: yaegi fib_rec(20) = 6765
}
