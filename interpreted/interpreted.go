// Package interpreted runs the kernels from their Go source with the yaegi interpreter:
// the "interpreted Go" row, the twin of the articles' PHP rows.
package interpreted

import (
	"context"
	"errors"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// Engine interprets kernels.Source.
type Engine struct{}

// New returns an engine; call Load before Run.
func New() *Engine { return &Engine{} }

// Name returns engine.Yaegi.
func (*Engine) Name() string { return engine.Yaegi }

// Load parses and evaluates the kernel sources.
func (*Engine) Load(context.Context) (engine.Setup, error) {
	return engine.Setup{}, errors.New("interpreted: not implemented yet")
}

// Run calls the kernel's function in the interpreter.
func (*Engine) Run(context.Context, *kernels.Kernel, []int) (int64, error) {
	return 0, errors.New("interpreted: not implemented yet")
}

// Close does nothing.
func (*Engine) Close(context.Context) error { return nil }
