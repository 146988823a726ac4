package wazero

import (
	"context"
	"errors"
	"os/exec"
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
	opt, err := OptimizedModule(context.Background(), testModule)
	if err != nil {
		t.Fatal(err)
	}
	if len(opt) == 0 || string(opt[:4]) != "\x00asm" {
		t.Errorf("the optimised module is %d bytes, not a wasm binary", len(opt))
	}
}

func TestOptimizedModuleWithoutWasmOpt(t *testing.T) {
	if _, err := exec.LookPath("wasm-opt"); err != nil {
		t.Skip("wasm-opt is missing anyway")
	}
	t.Setenv("PATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // nothing cached
	_, err := OptimizedModule(context.Background(), []byte("\x00asm\x01\x00\x00\x00"))
	if !errors.Is(err, driver.ErrNotInstalled) {
		t.Errorf("without wasm-opt: %v, want ErrNotInstalled", err)
	}
}
