package wasm_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmgap/wasmgap/wasm"
)

// kernelsWasm returns the bytes of kernels.wasm: here, those committed with this module
// and embedded by package wasm. A host outside Go reads the file wasm/kernels.wasm.
func kernelsWasm() []byte {
	b, err := wasm.Embedded()
	if err != nil {
		log.Fatal(err)
	}
	return b
}

// Any wazero host can run kernels.wasm without package wasm/kernels' typed API: instantiate
// WASI, run _initialize once, then call the exports (i32 arguments, an i64 result).
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
