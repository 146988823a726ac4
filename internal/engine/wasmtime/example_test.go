//go:build wasmtime

package wasmtime_test

import (
	"fmt"
	"log"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/wasmgap/wasmgap/wasm"
)

// Embed kernels.wasm in wasmtime directly, as docs/EMBEDDING.md shows: a WASI reactor,
// _initialize once, then any kernel export.
func Example_embedding() {
	wasmBytes, err := wasm.Embedded() // or os.ReadFile("wasm/kernels.wasm")
	if err != nil {
		log.Fatal(err)
	}
	cfg := wasmtime.NewConfig()
	cfg.SetCraneliftOptLevel(wasmtime.OptLevelSpeed)
	cfg.SetMaxWasmStack(4 << 20)
	eng := wasmtime.NewEngineWithConfig(cfg)
	mod, err := wasmtime.NewModule(eng, wasmBytes)
	if err != nil {
		log.Fatal(err)
	}
	store := wasmtime.NewStore(eng)
	store.SetWasi(wasmtime.NewWasiConfig())
	store.Limiter(1<<30, -1, -1, -1, -1)
	linker := wasmtime.NewLinker(eng)
	if err := linker.DefineWasi(); err != nil {
		log.Fatal(err)
	}
	inst, err := linker.Instantiate(store, mod)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := inst.GetFunc(store, "_initialize").Call(store); err != nil {
		log.Fatal(err)
	}
	v, err := inst.GetFunc(store, "fib_rec").Call(store, int32(30))
	fmt.Println(v, err)
	// Output: 832040 <nil>
}
