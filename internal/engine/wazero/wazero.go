// Package wazero runs kernels.wasm (package wasm: the kernels compiled to WebAssembly)
// under wazero, with either its optimizing compiler or its interpreter.
//
// The module is compiled once per process and mode and shared by every Engine; each Engine
// owns one instance of it. An Engine runs one call at a time: a host that runs kernels in
// parallel makes one Engine per goroutine (they share the compiled code, so an extra
// Engine costs an instantiation, a few milliseconds, not a compilation).
//
// The compiled machine code is also kept in a cache on disk (see Options.CacheDir), so a
// later process loads it instead of compiling again: about a twentieth of the CPU time
// (0.1 s instead of 1.8 s on the 2-core machine of docs/EMBEDDING.md's figures).
//
// Calls are not interrupted by context cancellation: wazero's per-loop cancellation checks
// cost 7–12x on Go-built wasm (wazero issue 2466). Hosts that need a time limit run the
// engine in a process they can kill.
//
// Importing the package registers both engines, as engine.WazeroCompiler and
// engine.WazeroInterpreter.
package wazero

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// MemoryLimitPages caps each instance's linear memory, in 64 KiB pages: 1 GiB. The largest
// catalogue arguments need about 80 MB at once (test7 and test8 with large = 10,000,000),
// but memory never shrinks and Go's heap reuses it imperfectly: an instance that ran test1,
// test7, test8 and test8b at their largest sizes three times in turn grew to 532 MiB. The
// cap leaves room for that and stops a runaway module from taking the host's memory; going
// past it fails with ErrOutOfMemory.
const MemoryLimitPages = 16384

// ErrOutOfMemory is returned (wrapped) by Run when the module's memory reached
// MemoryLimitPages.
var ErrOutOfMemory = errors.New("out of memory")

func init() {
	v := engine.ModuleVersion("wazero", "github.com/tetratelabs/wazero")
	engine.Describe(engine.Info{
		Name: engine.WazeroCompiler, Title: "wazero compiler",
		What:  "kernels.wasm compiled to machine code by wazero's optimizing compiler",
		Color: "#f58518", Version: v, Runtime: "wazero", Tier: engine.TierJIT, KernelsWasm: true,
	}, func() engine.Engine { return New(Options{}) })
	engine.Describe(engine.Info{
		Name: engine.WazeroInterpreter, Title: "wazero interpreter",
		What:  "kernels.wasm interpreted by wazero",
		Color: "#e45756", Version: v, Runtime: "wazero", Tier: engine.TierInterpreter, KernelsWasm: true,
	}, func() engine.Engine { return New(Options{Interpreter: true}) })
}

// Options configure an engine. The zero value is wazero's optimizing compiler with the
// embedded module and the default on-disk cache.
type Options struct {
	// Interpreter selects wazero's interpreter instead of its compiler.
	Interpreter bool
	// Module is the kernels.wasm binary to run; nil means the one embedded in the binary
	// (built by `go tool task wasm`).
	Module []byte
	// CacheDir is where compiled machine code is cached across processes; "" means
	// os.UserCacheDir()/wasmgap/wazero (no cache when that is unknown). The interpreter
	// does not use it. Each build of kernels.wasm adds an entry of about 8 MB and old ones
	// stay: delete the directory to reclaim the space.
	CacheDir string
	// NoCache turns the on-disk compilation cache off.
	NoCache bool
	// optimise makes Load run the module through wasm-opt first (NewOpt).
	optimise bool
	// Kernels are the kernels Module exports, each as its Export with i32 parameters and
	// an i64 result; nil means the whole catalogue (kernels.wasm: kernels.Every). A user kernel's module
	// (package custom) exports its one kernel.
	Kernels []*kernels.Kernel
}

// exported returns the kernels the module must export.
func (o Options) exported() []*kernels.Kernel {
	if o.Kernels != nil {
		return o.Kernels
	}
	return kernels.Every()
}

// Engine runs kernels.wasm under wazero. It implements engine.Engine; like every engine,
// it runs one call at a time.
type Engine struct {
	opts      Options
	code      *compiled
	inst      *instance
	closed    bool
	optimised bool // opts.Module is wasm-opt's output
}

// New returns an engine; call Load before Run.
func New(opts Options) *Engine { return &Engine{opts: opts} }

// Name returns engine.WazeroCompiler or engine.WazeroInterpreter.
func (e *Engine) Name() string {
	if e.opts.optimise {
		return CompilerOpt
	}
	if e.opts.Interpreter {
		return engine.WazeroInterpreter
	}
	return engine.WazeroCompiler
}

// DisableCache makes Load compile the module from scratch, without the on-disk cache
// (engine.ColdStarter): Setup.Compile is then a cold start. A process that compiled the
// module before with the same settings still shares that compilation.
func (e *Engine) DisableCache() { e.opts.NoCache = true }

// Load compiles the module (or takes it from this process's or the disk's cache) and
// instantiates it. Setup.Compile is the time this Load spent getting compiled code;
// Setup.Cached is true when the code came from the disk cache or an earlier Load in this
// process rather than a fresh compilation.
func (e *Engine) Load(ctx context.Context) (engine.Setup, error) {
	if e.closed {
		return engine.Setup{}, fmt.Errorf("%s: Load after Close", e.Name())
	}
	if e.code != nil {
		return engine.Setup{}, fmt.Errorf("%s: Load called twice", e.Name())
	}
	start := time.Now()
	if e.opts.optimise && !e.optimised {
		m, _, err := module(e.opts)
		if err == nil {
			m, err = driver.OptimizedModule(ctx, m)
		}
		if err != nil {
			return engine.Setup{}, fmt.Errorf("%s: %w", e.Name(), err)
		}
		e.opts.Module, e.optimised = m, true
	}
	code, fresh, err := shared(ctx, e.opts)
	if err != nil {
		return engine.Setup{}, fmt.Errorf("%s: %w", e.Name(), err)
	}
	setup := engine.Setup{Compile: time.Since(start), Cached: !fresh || code.fromDisk}

	start = time.Now()
	inst, err := code.instantiate(ctx)
	if err != nil {
		return engine.Setup{}, fmt.Errorf("%s: %w", e.Name(), err)
	}
	setup.Instantiate = time.Since(start)
	e.code, e.inst = code, inst
	return setup, nil
}

// Run calls the kernel's export with args (in the order of k.Params) and returns its
// result. A stack overflow comes back wrapped as engine.ErrStackOverflow, memory
// exhaustion as ErrOutOfMemory; other traps carry the kernel call and the wasm stack trace.
// After a failed call the instance is replaced, so the engine stays usable.
func (e *Engine) Run(ctx context.Context, k *kernels.Kernel, args []int) (int64, error) {
	if e.closed {
		return 0, fmt.Errorf("%s: Run after Close", e.Name())
	}
	if e.code == nil {
		return 0, fmt.Errorf("%s: Run before Load", e.Name())
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("%s: %s: %w", e.Name(), k.Label(args), err)
	}
	if e.inst == nil { // the last replacement failed: try again
		inst, err := e.code.instantiate(ctx)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", e.Name(), err)
		}
		e.inst = inst
	}
	fn, ok := e.inst.fns[k.Export]
	if !ok {
		return 0, fmt.Errorf("%s: kernels.wasm has no export %q for kernel %s", e.Name(), k.Export, k.Name)
	}
	if len(args) != len(fn.params) {
		return 0, fmt.Errorf("%s: %s: export %s takes %d arguments, got %d", e.Name(), k.Label(args), k.Export, len(fn.params), len(args))
	}
	stack := e.inst.stack
	for i, a := range args {
		if a < math.MinInt32 || a > math.MaxInt32 {
			return 0, fmt.Errorf("%s: %s: argument %d = %d does not fit the export's i32", e.Name(), k.Label(args), i+1, a)
		}
		stack[i] = api.EncodeI32(int32(a))
	}
	e.inst.out.Reset()
	if err := fn.fn.CallWithStack(ctx, stack); err != nil {
		return 0, e.trapped(ctx, k, args, err)
	}
	return int64(stack[0]), nil
}

// trapped returns the error of a call that failed, and replaces the instance: a trapped Go
// runtime is in an unknown state, so the next call starts afresh.
func (e *Engine) trapped(ctx context.Context, k *kernels.Kernel, args []int, err error) error {
	err = classify(err, e.inst.out.String())
	_ = e.inst.mod.Close(ctx)
	e.inst = nil
	if inst, ierr := e.code.instantiate(ctx); ierr == nil {
		e.inst = inst
	}
	return fmt.Errorf("%s: %s: %w", e.Name(), k.Label(args), err)
}

// RunBatch calls the kernel reps times and returns the first value and the sum of all
// (engine.Batcher): one call of the kernel's export, then one call of its batch export for
// the other reps - 1, so that a sample times the engine's code rather than reps calls from
// the host. A module without batch exports (a user's) is called reps times; so is a kernel
// that times the host's call (kernels.Kernel.HostCall), one crossing per call, in a loop as
// tight as an embedder's (hostCalls).
func (e *Engine) RunBatch(ctx context.Context, k *kernels.Kernel, args []int, reps int) (first, sum int64, err error) {
	first, err = e.Run(ctx, k, args)
	if err != nil || reps <= 1 {
		return first, first, err
	}
	if k.HostCall {
		if sum, err = e.hostCalls(ctx, k, args, first, reps); err != nil {
			return 0, 0, err
		}
		return first, sum, nil
	}
	bfn, ok := e.inst.fns[k.Export+wasm.BatchSuffix]
	if !ok || reps-1 > math.MaxInt32 {
		if sum, err = engine.RunRest(ctx, e, k, args, first, reps); err != nil {
			return 0, 0, err
		}
		return first, sum, nil
	}
	stack := e.inst.stack
	for i, a := range args {
		stack[i] = api.EncodeI32(int32(a)) // checked by Run
	}
	stack[len(args)] = api.EncodeI32(int32(reps - 1))
	e.inst.out.Reset()
	if err := bfn.fn.CallWithStack(ctx, stack); err != nil {
		return 0, 0, e.trapped(ctx, k, args, err)
	}
	return first, first + int64(stack[0]), nil
}

// hostCalls makes reps-1 more calls of k's export after a first (Run's) that returned
// first, and returns the sum of all reps values: each a call from the host into the module,
// the export looked up once and the arguments checked once, as an embedder that keeps its
// api.Function calls it. Run's checks per call (context, lookup, ranges) cost more than the
// call of the empty export nop (about 40 ns against 35 ns here).
func (e *Engine) hostCalls(ctx context.Context, k *kernels.Kernel, args []int, first int64, reps int) (int64, error) {
	fn := e.inst.fns[k.Export].fn // Run found it
	stack := e.inst.stack
	sum := first
	e.inst.out.Reset()
	for i := 1; i < reps; i++ {
		for j, a := range args {
			stack[j] = api.EncodeI32(int32(a)) // checked by Run; the result overwrote stack[0]
		}
		if err := fn.CallWithStack(ctx, stack); err != nil {
			return 0, e.trapped(ctx, k, args, err)
		}
		sum += int64(stack[0])
	}
	return sum, nil
}

// Close releases the engine's instance; the compiled code stays shared by the process.
func (e *Engine) Close(ctx context.Context) error {
	e.closed = true
	if e.inst == nil {
		return nil
	}
	err := e.inst.mod.Close(ctx)
	e.inst = nil
	if err != nil {
		return fmt.Errorf("%s: close instance: %w", e.Name(), err)
	}
	return nil
}
