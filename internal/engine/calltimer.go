package engine

import (
	"context"
	"time"

	"github.com/wasmgap/wasmgap/kernels"
)

// CallTimer is implemented by an engine whose calls run in another runtime (a driver's
// process) and that can time a series of calls one sample at a time inside it: the
// warm-up's view (package internal/warmup), which needs the time of every call since the
// first without the pipe's round trip in it.
type CallTimer interface {
	// RunTimedCalls makes samples × group calls of the kernel with args, back to back,
	// and returns them timed (TimedCalls).
	RunTimedCalls(ctx context.Context, k *kernels.Kernel, args []int, samples, group int) (TimedCalls, error)
}

// TimedCalls is what a CallTimer answers.
type TimedCalls struct {
	// First is the value of the first call, Sum the sum of all values (wrapping on
	// overflow).
	First, Sum int64
	// Times are each sample's time as the runtime measured it (samples of group calls
	// each).
	Times []time.Duration
	// How says how the runtime timed them: TimedPerCall when it timed the calls back to
	// back, TimedPerRequest when the driver lacks that mode and each sample was one
	// request of its own (a pause between samples).
	How string
	// Setup is the kernel's load as the runtime timed it, when the runtime loads the
	// kernel at a series' first request (a browser's worker compiles and instantiates
	// the module there, after the engine's Load); nil when Load's Setup says it.
	Setup *Setup
}

// How a series of calls was timed (CallTimer, and the host's clock for the engines that
// run in this process).
const (
	// TimedPerCall: inside the runtime, every sample back to back in one request.
	TimedPerCall = "runtime, back to back"
	// TimedPerRequest: inside the runtime, one request through the driver's pipe per sample.
	TimedPerRequest = "runtime, one request per sample"
	// TimedByHost: by this process's monotonic clock around each sample (an engine that
	// runs in the process: native, wazero, yaegi).
	TimedByHost = "host clock, back to back"
)
