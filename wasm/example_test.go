package wasm_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// kernelsWasm returns the bytes of kernels.wasm: here, the module the tests built from
// this checkout. A host outside this repository reads wasm/dist/kernels.wasm.
func kernelsWasm() []byte { return wasm.BuiltModule() }

// An engine runs catalogue kernels; Options{} runs the embedded kernels.wasm with wazero's
// compiler.
func Example() {
	ctx := context.Background()
	e := wasm.New(wasm.Options{Module: kernelsWasm()})
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

// Any wazero host can run kernels.wasm without this package: instantiate WASI, run
// _initialize once, then call the exports (i32 arguments, an i64 result).
func Example_wazero() {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)

	cfg := wazero.NewModuleConfig().WithStartFunctions("_initialize")
	mod, err := r.InstantiateWithConfig(ctx, kernelsWasm(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	res, err := mod.ExportedFunction("ack").Call(ctx, api.EncodeI32(3), api.EncodeI32(5))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ack(3, 5) =", int64(res[0]))
	// Output: ack(3, 5) = 253
}
