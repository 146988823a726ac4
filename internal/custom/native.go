package custom

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/kernels"
)

// nativeEngine runs a natively built user kernel: its executable is a driver of package
// internal/engine/driver (its main is nativeWrapper's, serving the protocol with package goserve),
// started once and asked for timed batches of calls, so that a sample's time is the
// kernel's, measured inside the process, not the pipe's round trip. A process that dies
// (a stack overflow, a crash) is reported with what it printed and replaced for the next
// call.
type nativeEngine struct {
	k *Kernel
	p *driver.Process
}

func (e *nativeEngine) Name() string { return engine.Native }

// Load starts the executable, in the worker's process group and under its limits.
func (e *nativeEngine) Load(ctx context.Context) (engine.Setup, error) {
	start := time.Now()
	if err := e.start(ctx); err != nil {
		return engine.Setup{}, err
	}
	return engine.Setup{Instantiate: time.Since(start)}, nil
}

func (e *nativeEngine) start(ctx context.Context) error {
	// An empty environment: the kernel needs none. It dies with the worker that started
	// it, whatever ends the worker (package childproc, through driver.Command).
	p, err := driver.Command(ctx, "native", []string{e.k.NativePath()}, e.k.Dir, []string{}, nil)
	if err != nil {
		return fmt.Errorf("native: start %s: %w", e.k.Func.Name, err)
	}
	e.p = p
	return nil
}

// Run calls the kernel once.
func (e *nativeEngine) Run(ctx context.Context, k *kernels.Kernel, args []int) (int64, error) {
	first, _, _, err := e.RunTimedBatch(ctx, k, args, 1)
	return first, err
}

// RunTimedBatch calls the kernel reps times in its process, which times them
// (engine.SelfTimer).
func (e *nativeEngine) RunTimedBatch(ctx context.Context, k *kernels.Kernel, args []int, reps int) (first, sum int64, elapsed time.Duration, err error) {
	if e.p == nil {
		if err := e.start(ctx); err != nil {
			return 0, 0, 0, err
		}
	}
	r, err := e.p.CallKernel(ctx, k, reps, args)
	if err != nil {
		if errors.Is(err, driver.ErrExited) {
			_ = e.p.Close()
			e.p = nil
		}
		if errors.Is(err, driver.ErrStackOverflow) {
			err = fmt.Errorf("%w: %w", engine.ErrStackOverflow, err)
		}
		return 0, 0, 0, err
	}
	return r.First, r.Sum, r.Elapsed, nil
}

// Close ends the executable.
func (e *nativeEngine) Close(context.Context) error {
	if e.p == nil {
		return nil
	}
	err := e.p.Close()
	e.p = nil
	return err
}
