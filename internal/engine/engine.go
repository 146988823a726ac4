// Package engine defines the one shape every kernel engine has, server or browser (load
// once, then run kernel K with arguments A and return the value it computed, or an error
// that says what happened), the engines' names and their order (Order, order.go), and
// their registry.
//
// Each engine family lives in a package of its own, named after what runs the code, under
// internal/engine: wazero (wazero's compiler and interpreter), yaegi (the yaegi
// interpreter), wasmtime, gccgo, browser (headless Chromium and Firefox running the page's
// workers), and external (every engine that is another process, through driver's one
// protocol: the articles' languages, their JIT-off twins, kernels.wasm on Node). Two homes
// are elsewhere, each for a reason: native/ (Go compiled to machine code, in-process: the
// baseline) is a top-level folder the users were promised, and it registers here as any
// engine does; internal/custom builds a user's kernel and runs it under the registered
// engines' names (wazero, yaegi, and native for a kernel built natively): the same engine
// families over the user's module or executable, built per kernel, so never registered. Its
// name says what it is for, user kernels; the engines it builds are the families above.
//
// An engine package registers itself in its init with Describe, so that
// this package, which every engine imports for the contract, imports no engine: the
// registry holds the engines whose packages the program links, with what the reports and
// the page say about them (Info). The one place that must offer every engine, the worker
// of package internal/runner, imports them all; a program that builds engines by name
// (New, Names) gets them through it.
package engine

import (
	"context"
	"errors"
	"time"

	"github.com/wasmgap/wasmgap/kernels"
)

// Engine runs kernels. Load must be called once before Run; Run is not safe for
// concurrent use (an engine that wants parallelism pools instances behind it).
type Engine interface {
	// Name is the engine's name: one of the names Order lists (order.go), or, for an engine
	// built outside the registry (a user's kernel, a test's), a name of its own.
	Name() string
	// Load prepares the engine (compile, instantiate, parse) and says how long it took.
	Load(ctx context.Context) (Setup, error)
	// Run calls the kernel once with args (already checked against its Params).
	Run(ctx context.Context, k *kernels.Kernel, args []int) (int64, error)
	// Close releases what Load acquired.
	Close(ctx context.Context) error
}

// Batcher is implemented by an engine that can run a kernel several times in one call,
// without the harness's per-call overhead: the native engine, whose calls can take
// nanoseconds, so that a sample of many calls times the kernel and not the interface call
// around it. measure.Measure uses RunBatch when an engine has it, else calls Run in a loop.
type Batcher interface {
	// RunBatch calls the kernel reps (≥ 1) times with args and returns the value of the
	// first call and the sum of all values (wrapping on overflow), the checksum the harness
	// compares with reps × the expected value.
	RunBatch(ctx context.Context, k *kernels.Kernel, args []int, reps int) (first, sum int64, err error)
}

// RunRest calls the kernel reps-1 more times after a first call that returned first, and
// returns the sum of all reps values: a Batcher's answer when its fast path does not apply.
func RunRest(ctx context.Context, e Engine, k *kernels.Kernel, args []int, first int64, reps int) (sum int64, err error) {
	sum = first
	for i := 1; i < reps; i++ {
		v, err := e.Run(ctx, k, args)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// SelfTimer is implemented by an engine whose calls run in another process (a peer's
// driver, Node): a call's round trip through the pipe costs tens of microseconds, more than
// many kernels, so the driver times the calls with its own monotonic clock and the harness
// takes that time for the sample instead of its own. measure.Measure prefers it to Batcher.
type SelfTimer interface {
	// RunTimedBatch calls the kernel reps (≥ 1) times with args and returns the value of
	// the first call, the sum of all values (wrapping on overflow) and the time the calls
	// took as the engine measured it.
	RunTimedBatch(ctx context.Context, k *kernels.Kernel, args []int, reps int) (first, sum int64, elapsed time.Duration, err error)
}

// Versioner is implemented by an engine whose calls run in a runtime other than this Go
// binary's: a driver in another process (a peer's gcc-built binary, java, node, php) or a
// library linked in through cgo (wasmtime). Reports list the line beside the Go version,
// so that a table says which gcc, JVM, Node or PHP made its numbers.
type Versioner interface {
	// Version returns the runtime's version line as the runtime itself reports it, after
	// Load ("gcc 12.2.0", "node v20.19.2 (V8 11.3.244.8-node.26)", "PHP 8.2.29 (opcache
	// on, JIT tracing)"), or "" when it is not known yet.
	Version() string
}

// ColdStarter is implemented by an engine that keeps compiled code in a cache (wazero's
// compiler, on disk): DisableCache, called before Load, makes Load compile from scratch,
// so that Setup.Compile is a cold start. measure.Options.Cold asks for it.
type ColdStarter interface {
	DisableCache()
}

// Setup is the one-off cost of an engine, reported apart from run times.
type Setup struct {
	// Compile is the time to compile or parse the code (zero where there is nothing to do).
	Compile time.Duration `json:"compile_ns"`
	// Instantiate is the time to create a runnable instance.
	Instantiate time.Duration `json:"instantiate_ns"`
	// Cached is true when compilation came from an on-disk cache.
	Cached bool `json:"cached,omitempty"`
}

// ErrStackOverflow is returned (wrapped) by Run when the kernel exhausted the engine's stack.
var ErrStackOverflow = errors.New("stack overflow")
