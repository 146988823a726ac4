package wazero_test

import (
	"context"
	"fmt"
	"log"

	"github.com/wasmgap/wasmgap/internal/engine/wazero"
	"github.com/wasmgap/wasmgap/kernels"
)

// kernelsWasm returns the bytes of kernels.wasm: here, the module the tests built from
// this checkout. A host outside this repository reads wasm/kernels.wasm.
func kernelsWasm() []byte { return wazero.BuiltModule() }

// An engine runs catalogue kernels; Options{} runs the embedded kernels.wasm with wazero's
// compiler.
func Example() {
	ctx := context.Background()
	e := wazero.New(wazero.Options{Module: kernelsWasm()})
	if _, err := e.Load(ctx); err != nil { // compile (or take from the cache) and instantiate
		log.Fatal(err)
	}
	defer e.Close(ctx)

	k, err := kernels.Lookup("fib_rec")
	if err != nil {
		log.Fatal(err)
	}
	args := []int{30}
	v, err := e.Run(ctx, k, args)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(k.Label(args), "=", v)
	// Output: fib_rec(30) = 832040
}
