package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// Engine is a driver as an engine.Engine: Load starts it, Run asks it for one call,
// RunTimedBatch (engine.SelfTimer) for a batch of calls timed inside the driver, Version
// (engine.Versioner) says which runtime answered, Close stops it.
type Engine struct {
	name  string
	start func(ctx context.Context) (*Process, error)
	p     *Process
	// noTimes says the driver answered that it has no per-call mode (RunTimedCalls).
	noTimes bool
}

// NewEngine returns the driver that start starts as the engine name; Load calls start.
func NewEngine(name string, start func(ctx context.Context) (*Process, error)) *Engine {
	return &Engine{name: name, start: start}
}

// Name returns the engine's name.
func (e *Engine) Name() string { return e.name }

// Load starts the driver. Its build (and a compilation inside this process, for a wasm
// driver) counts as Compile, its start-up up to its ready line as Instantiate. A missing
// runtime is an error that wraps ErrNotInstalled and names the packages to install.
func (e *Engine) Load(ctx context.Context) (engine.Setup, error) {
	if e.p != nil {
		return engine.Setup{}, fmt.Errorf("%s: Load called twice", e.name)
	}
	p, err := e.start(ctx)
	if err != nil {
		return engine.Setup{}, err
	}
	e.p = p
	return engine.Setup{Compile: p.Setup.Build + p.Setup.Compile, Instantiate: p.Setup.Start, Cached: p.Setup.Cached}, nil
}

// Runtime returns what the driver's ready line says about its runtime ("c gcc 12.2.0"),
// or "" before Load.
func (e *Engine) Runtime() string {
	if e.p == nil {
		return ""
	}
	return e.p.Language + " " + e.p.Runtime
}

// Version returns the driver's runtime as its ready line reports it ("gcc 12.2.0", "node
// v20.19.2 (V8 11.3.244.8-node.26)"), or "" before Load: engine.Versioner.
func (e *Engine) Version() string {
	if e.p == nil {
		return ""
	}
	return e.p.Runtime
}

// PID is the driver's process id once loaded, for a profiler to sample; 0 before Load and
// for a driver that runs inside this process.
func (e *Engine) PID() int {
	if e.p == nil {
		return 0
	}
	return e.p.PID
}

// Run calls the kernel once in the driver and returns its value. A stack overflow wraps
// engine.ErrStackOverflow.
func (e *Engine) Run(ctx context.Context, k *kernels.Kernel, args []int) (int64, error) {
	first, _, _, err := e.RunTimedBatch(ctx, k, args, 1)
	return first, err
}

// RunTimedBatch calls the kernel reps times in the driver, and returns the first value, the
// sum of all values (wrapped to int64) and the time the calls took, measured inside the
// driver so that the pipe's round trip is not in it. A stack overflow wraps
// engine.ErrStackOverflow.
func (e *Engine) RunTimedBatch(ctx context.Context, k *kernels.Kernel, args []int, reps int) (first, sum int64, elapsed time.Duration, err error) {
	if e.p == nil {
		return 0, 0, 0, fmt.Errorf("%s: Run before Load", e.name)
	}
	r, err := e.p.CallKernel(ctx, k, reps, args)
	if err != nil {
		if errors.Is(err, ErrStackOverflow) {
			err = fmt.Errorf("%w: %w", engine.ErrStackOverflow, err)
		}
		return 0, 0, 0, err
	}
	return r.First, r.Sum, r.Elapsed, nil
}

// Close stops the driver.
func (e *Engine) Close(context.Context) error {
	if e.p == nil {
		return nil
	}
	err := e.p.Close()
	e.p = nil
	return err
}
