package wazero

import (
	"context"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/internal/engine/enginetest"
)

// TestOptimizedModuleRunsEveryKernel: kernels.wasm after wasm-opt -O3 still runs every
// kernel of the catalogue, with the catalogue's values, on wazero's compiler.
func TestOptimizedModuleRunsEveryKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("wasm-opt takes seconds")
	}
	e := NewOpt(Options{Module: testModule, CacheDir: t.TempDir()})
	if e.Name() != CompilerOpt {
		t.Errorf("Name() = %q, want %q", e.Name(), CompilerOpt)
	}
	enginetest.Load(t, e)
	enginetest.EveryKernel(t, e)
	opt, err := driver.OptimizedModule(context.Background(), testModule)
	if err != nil {
		t.Fatal(err)
	}
	if len(opt) == 0 || string(opt[:4]) != "\x00asm" {
		t.Errorf("the optimised module is %d bytes, not a wasm binary", len(opt))
	}
}
