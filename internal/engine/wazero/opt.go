package wazero

import (
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
)

// CompilerOpt is the engine of kernels.wasm after binaryen's wasm-opt -O3, on wazero's
// compiler: how much of Go's wasm tax an optimiser after the Go toolchain takes back.
const CompilerOpt = engine.WazeroCompilerOpt

func init() {
	engine.Describe(engine.Info{
		Name: CompilerOpt, Title: "wazero compiler, wasm-opt",
		What:  "kernels.wasm after binaryen's wasm-opt -O3, compiled by wazero's optimizing compiler (the optimised module cached on disk at its first use)",
		Color: "#c46a0e", Version: engine.ModuleVersion("wazero", "github.com/tetratelabs/wazero"),
		KernelsWasm: true, Install: driver.HintBinaryen,
	}, func() engine.Engine { return NewOpt(Options{}) })
}

// NewOpt returns the wazero-compiler-opt engine: Load optimises opts.Module (nil: the
// embedded kernels.wasm) with wasm-opt (driver.OptimizedModule), or takes the optimised
// module from the disk's cache, then compiles it as the wazero-compiler engine does.
func NewOpt(opts Options) *Engine {
	opts.Interpreter = false
	opts.optimise = true
	return New(opts)
}
