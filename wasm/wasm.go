// Package wasm runs kernels.wasm, the kernels compiled to WebAssembly, under wazero.
package wasm

import (
	"context"
	"errors"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// Options configure an engine. The zero value is wazero's optimizing compiler with the
// embedded module and the default cache directory.
type Options struct {
	// Interpreter selects wazero's interpreter instead of its compiler.
	Interpreter bool
}

// Engine runs kernels.wasm under wazero.
type Engine struct{ opts Options }

// New returns an engine; call Load before Run.
func New(opts Options) *Engine { return &Engine{opts: opts} }

// Name returns engine.WazeroCompiler or engine.WazeroInterpreter.
func (e *Engine) Name() string {
	if e.opts.Interpreter {
		return engine.WazeroInterpreter
	}
	return engine.WazeroCompiler
}

// Load compiles and instantiates the module.
func (e *Engine) Load(context.Context) (engine.Setup, error) {
	return engine.Setup{}, errors.New("wasm: not implemented yet")
}

// Run calls the kernel's export.
func (e *Engine) Run(context.Context, *kernels.Kernel, []int) (int64, error) {
	return 0, errors.New("wasm: not implemented yet")
}

// Close releases the runtime.
func (e *Engine) Close(context.Context) error { return nil }
