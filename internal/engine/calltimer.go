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
	// and returns the value of the first call, the sum of all values (wrapping on
	// overflow), each sample's time as the runtime measured it (samples of group calls
	// each), and how it timed them: TimedPerCall when the runtime timed the calls back to
	// back, TimedPerRequest when the driver lacks that mode and each sample was one
	// request of its own (a pause between samples).
	RunTimedCalls(ctx context.Context, k *kernels.Kernel, args []int, samples, group int) (first, sum int64, times []time.Duration, how string, err error)
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
