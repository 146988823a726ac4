// Package native is the native engine: the kernels compiled by the Go toolchain into
// this binary and called in-process. It is the baseline every ratio is taken against.
//
// Importing the package registers the engine as engine.Native; it exports nothing else.
package native

import (
	"context"
	"runtime"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

func init() {
	engine.Describe(engine.Info{
		Name: engine.Native, Title: "native",
		What:    "Go, compiled ahead of time by the Go toolchain (gc), called in-process",
		Color:   "#4c78a8",
		Version: runtime.Version(),
		Runtime: "Go", Tier: engine.TierJIT,
	}, func() engine.Engine { return goEngine{} })
}

// goEngine calls the kernels directly; engine.New(engine.Native) returns it.
type goEngine struct{}

// Name returns engine.Native.
func (goEngine) Name() string { return engine.Native }

// Load has nothing to prepare: the kernels were compiled with the binary.
func (goEngine) Load(context.Context) (engine.Setup, error) { return engine.Setup{}, nil }

// Run calls the kernel. A runaway or stack-exhausting kernel cannot be stopped from inside
// the process: run measurements in worker processes (package runner) to survive them.
func (goEngine) Run(_ context.Context, k *kernels.Kernel, args []int) (int64, error) {
	return k.Call(args), nil
}

// RunBatch calls the kernel reps times in a loop as tight as a `go test -bench` loop's,
// and returns the first value and the sum of all (engine.Batcher).
func (goEngine) RunBatch(_ context.Context, k *kernels.Kernel, args []int, reps int) (first, sum int64, err error) {
	call := k.Call
	first = call(args)
	sum = first
	for i := 1; i < reps; i++ {
		sum += call(args)
	}
	return first, sum, nil
}

// Close does nothing.
func (goEngine) Close(context.Context) error { return nil }
