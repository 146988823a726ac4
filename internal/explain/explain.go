// Package explain shows why a kernel runs as fast as it does on each engine: the code of
// the kernel's hot function as that tier runs it, after the same warm-up the harness gives
// it (so that a JIT has tiered up). Machine code from every tier — gc's from this binary's
// symbol table, gcc's and gccgo's from their drivers', wazero's compiler's from its
// compilation cache, V8's Liftoff and TurboFan from node's --print-wasm-code and
// --print-opt-code, HotSpot's C1 and C2 from -XX:CompileCommand=print, LuaJIT's traces from
// the machine code it reports, PHP's JIT traces from the jitdump opcache.jit_debug writes,
// PyPy's from PYPYLOG's jit-backend-dump —
// is decoded by one disassembler (golang.org/x/arch), so that instruction counts compare
// across tiers; each listing has its size in bytes and instructions, its calls (the
// recursive ones marked) and its loops' back edges. PyPy's traces are listed in its own
// operations too (KindTrace). An interpreter has no machine code of the kernel: its
// listing is what it runs instead (KindBytecode: CPython's dis, PHP's opcodes, Lua's,
// LuaJIT's and the JVM's bytecode, the wasm wazero's interpreter lowers, the source yaegi
// walks), and
// says so. Beside them: the Go source, and kernels.wasm's function as wasm instructions
// (wabt's wasm-objdump). An engine that
// cannot be explained here (its runtime missing, a tool refused) is named with the
// reason, never a crash.
//
// With Options.Profile, a timed run of each engine after its warm-up is sampled by
// perf record -e cpu-clock (the VMs this runs on have no hardware counters), in the very
// process whose code is listed (this one for native and wazero, the driver's for the
// others), and each sample is attributed to the instruction at its address; where perf is
// missing or refused, the listing stands alone and says why.
package explain

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
)

// Kinds of listing.
const (
	// KindMachine is machine code, decoded by golang.org/x/arch.
	KindMachine = "machine code"
	// KindWasm is WebAssembly instructions.
	KindWasm = "wasm"
	// KindSource is the kernel's source.
	KindSource = "source"
	// KindBytecode is what an interpreter executes instead of machine code.
	KindBytecode = "bytecode"
)

// Line is one instruction (or source line) of a listing.
type Line struct {
	// Offset is the instruction's byte offset from the function's entry (a source line's
	// number, for source).
	Offset int `json:"offset"`
	// Hex is the instruction's bytes.
	Hex string `json:"hex,omitempty"`
	// Text is the decoded instruction.
	Text string `json:"text"`
	// Note is what the tier itself said about the instruction.
	Note string `json:"note,omitempty"`
	// Call marks a call; Recursive a call of the function itself.
	Call      bool `json:"call,omitempty"`
	Recursive bool `json:"recursive,omitempty"`
	// BackEdge marks a branch back to an earlier instruction of the function (a loop's
	// back edge); LoopHead an instruction a back edge goes to.
	BackEdge bool `json:"back_edge,omitempty"`
	LoopHead bool `json:"loop_head,omitempty"`
	// Target is the offset a branch or call inside the function goes to, -1 for none.
	Target int `json:"target"`
	// Data marks bytes that are no instruction (a jump table's entry).
	Data bool `json:"data,omitempty"`
	// Samples is how many profile samples fell on this instruction.
	Samples int `json:"samples,omitempty"`
	// SourceFile and SourceLine are the Go line the instruction was compiled from, where
	// the tier keeps its line table (gc's): "kernels/recursion.go" as the source listing's
	// From names it (a file outside the kernels by its base name), and the line.
	SourceFile string `json:"source_file,omitempty"`
	SourceLine int    `json:"source_line,omitempty"`

	jump bool
	abs  uint64
}

// Listing is one tier's code of a kernel's hot function.
type Listing struct {
	// Engine is the engine whose code this is; Tier names the compiler or form
	// ("TurboFan", "C2", "gc", "wasm", "Go source").
	Engine string `json:"engine"`
	Tier   string `json:"tier"`
	// Kind is KindMachine, KindWasm, KindSource, KindBytecode or KindTrace.
	Kind string `json:"kind"`
	// Function is the function's name as the tier calls it.
	Function string `json:"function"`
	// From says where the code was read and how.
	From string `json:"from"`
	// Arch is the machine code's architecture.
	Arch string `json:"arch,omitempty"`
	// Addr is where the code ran (0 when unknown).
	Addr uint64 `json:"addr,omitempty"`
	// Bytes is the code's size; Instructions how many instructions it decodes to.
	Bytes        int `json:"bytes"`
	Instructions int `json:"instructions"`
	// Calls, RecursiveCalls and BackEdges count the marked lines.
	Calls          int `json:"calls"`
	RecursiveCalls int `json:"recursive_calls"`
	BackEdges      int `json:"back_edges"`
	// Lines are the instructions in address order.
	Lines []Line `json:"lines"`
	// OpsPerCall is how many of these instructions one call of the kernel executes, where
	// the runtime can say (an interpreter's dispatches).
	OpsPerCall float64 `json:"ops_per_call,omitempty"`
	// Notes say what a reader should know about this code.
	Notes []string `json:"notes,omitempty"`
	// Profile is where a timed run's samples fell, when one was asked for.
	Profile *Profile `json:"profile,omitempty"`
	// NoLines says why the instructions carry no Go source line, for a tier compiled from
	// the Go kernels whose code cannot be mapped back to them here.
	NoLines string `json:"no_lines,omitempty"`
}

// Explanation is one engine's listings, or why there are none.
type Explanation struct {
	// Engine is the engine's name.
	Engine string `json:"engine"`
	// Listings are its code, most optimised tier first.
	Listings []Listing `json:"listings,omitempty"`
	// Refused says why this engine could not be explained ("node not installed: …").
	Refused string `json:"refused,omitempty"`
	// Took is how long explaining it took.
	Took time.Duration `json:"took_ns"`
}

// Report is the explanation of one kernel call on several engines.
type Report struct {
	Kernel  string        `json:"kernel"`
	Args    []int         `json:"args"`
	Label   string        `json:"label"`
	Arch    string        `json:"arch"`
	Engines []Explanation `json:"engines"`
	// Summary is Summarize's rows, where the answer carries them (GET /api/explain's,
	// `wasmgap explain --format json`'s).
	Summary []SummaryRow `json:"summary,omitempty"`
}

// Options configure Explain. The zero value is ready to use; the bounds of each setting
// are runner.Bounds'.
type Options struct {
	// WarmupTime is how long a JIT's kernel runs before its code is read, as
	// measure.Options.WarmupTime: zero means the harness's measure.DefaultWarmupTime, a
	// negative value the first call only.
	WarmupTime time.Duration
	// Profile asks for a sampled profile (perf record -e cpu-clock) of a timed run of each
	// engine, attributed to its listing's instructions.
	Profile bool
	// ProfileTime is how long the profiled run lasts; zero means DefaultProfileTime.
	ProfileTime time.Duration
}

// DefaultProfileTime is how long a profiled run lasts when Options.ProfileTime is zero.
const DefaultProfileTime = time.Second

// warmupTime is the warm-up time a script that warms up by itself is given (CPython's).
func (o Options) warmupTime() time.Duration {
	return measure.Options{Warmup: 1, WarmupTime: o.WarmupTime}.WarmupTarget()
}

func (o Options) profileTime() time.Duration {
	if o.ProfileTime <= 0 {
		return DefaultProfileTime
	}
	return o.ProfileTime
}

// request is what one engine's explainer gets.
type request struct {
	engine string
	k      *kernels.Kernel
	args   []int
	opts   Options
}

// explainer produces an engine's listings.
type explainer struct {
	run func(ctx context.Context, r request) ([]Listing, error)
	// interprets says the engine runs no machine code of the kernel (its listing is what an
	// interpreter runs instead): a report lists it after the compiled tiers.
	interprets bool
	// jit says the code is a JIT's, read after the harness's warm-up has run the kernel in
	// the runtime (seconds), not compiled ahead of time.
	jit bool
	// inProcess, for an engine whose code runs in this process (its listing's addresses
	// are this process's), loads it and returns a call of the kernel, for a profile.
	inProcess func(ctx context.Context, r request) (call func() error, done func(), err error)
}

// The forms of the kernel that are no engine's but every tier's starting point, listed
// after the baseline (engine.Order's first engine).
const (
	// Source is the kernel's Go source.
	Source = "source"
	// Wasm is the kernel's function in kernels.wasm.
	Wasm = "wasm"
)

// explainers are the tiers explain knows: the forms above, and each engine of
// engine.Order by its name. Every other engine of engine.Order is in unexplained.
var explainers = map[string]explainer{
	Source: {run: explainSource},
	Wasm:   {run: explainWasm},

	engine.Native:            {run: explainNative, inProcess: nativeCall},
	engine.WazeroCompiler:    {run: explainWazero, inProcess: wazeroCall},
	engine.WazeroCompilerOpt: {run: explainWazeroOpt, inProcess: wazeroCall},
	engine.GCCGo:             {run: explainGCCGo},
	engine.NodeWasm:          {run: explainNodeWasm, jit: true},
	engine.NodeWasmOpt:       {run: explainNodeWasm, jit: true},
	engine.NodeWasmTurbofan:  {run: explainNodeWasm, jit: true},
	engine.NodeWasmLiftoff:   {run: explainNodeWasm, jit: true},
	engine.C:                 {run: explainC},
	engine.Java:              {run: explainJava, jit: true},
	engine.NodeJS:            {run: explainNodeJS, jit: true},
	engine.LuaJIT:            {run: explainLuaJIT, jit: true},
	engine.PyPy:              {run: explainPyPy, jit: true},
	engine.PHPJIT:            {run: explainPHPJIT, jit: true},

	engine.WazeroInterpreter: {run: explainWazeroInterpreter, interprets: true},
	engine.Yaegi:             {run: explainYaegi, interprets: true},
	engine.JavaInt:           {run: explainJavaInt, interprets: true},
	engine.PHP:               {run: explainPHP, interprets: true},
	engine.LuaJITInterp:      {run: explainLuaBytecode, interprets: true},
	engine.Lua:               {run: explainLuaBytecode, interprets: true},
	engine.Python:            {run: explainPython, interprets: true},
}

// unexplained says why explain has no explainer for the other engines of engine.Order (a
// test holds every engine to one or the other).
var unexplained = map[string]string{
	engine.Wasmtime:      "wasmtime's Cranelift code is not read here: explain wazero-compiler or node-wasm for kernels.wasm's machine code",
	engine.CWasm:         "the C kernels' wasm on wazero is not read here: explain c for gcc's code, wazero-compiler for wazero's",
	engine.NodeJSJitless: "V8's Ignition bytecode is not read here: explain node-js for the same JavaScript after TurboFan",
	engine.BrowserWasm:   "runs in the visitor's browser, whose code a server cannot read",
	engine.BrowserJS:     "runs in the visitor's browser, whose code a server cannot read",
	engine.ChromiumWasm:  "a headless browser prints none of its code: explain node-wasm for V8's",
	engine.ChromiumJS:    "a headless browser prints none of its code: explain node-js for V8's",
	engine.FirefoxWasm:   "SpiderMonkey prints none of its code in a release build",
	engine.FirefoxJS:     "SpiderMonkey prints none of its code in a release build",
}

// Engines returns the names Explain accepts, in report order: the compiled tiers in
// engine.Order's order, the baseline followed by the Go source and kernels.wasm, then the
// interpreters.
func Engines() []string {
	var names []string
	for _, interprets := range []bool{false, true} {
		for _, g := range engine.Order {
			for _, n := range g.Engines {
				if e, ok := explainers[n]; ok && e.interprets == interprets {
					names = append(names, n)
				}
				if !interprets && n == engine.Order[0].Engines[0] {
					names = append(names, Source, Wasm)
				}
			}
		}
	}
	return names
}

// JITs returns the engines whose explanation waits for a JIT's warm-up, in report order.
func JITs() []string {
	var names []string
	for _, n := range Engines() {
		if explainers[n].jit {
			names = append(names, n)
		}
	}
	return names
}

// ErrUnknownEngine is returned (wrapped) for an engine explain does not know.
var ErrUnknownEngine = errors.New("unknown engine")

// CheckEngines reports the first name explain does not know or cannot explain, naming the
// ones it does.
func CheckEngines(names []string) error {
	for _, n := range names {
		if why, ok := unexplained[n]; ok {
			return fmt.Errorf("explain cannot show %s's code: %s", n, why)
		}
		if _, ok := explainers[n]; !ok {
			return fmt.Errorf("%w %q: explain knows %s", ErrUnknownEngine, n, strings.Join(Engines(), ", "))
		}
	}
	return nil
}

// Explain explains kernel k called with args (checked against its parameters) on each
// named engine, one after the other. An engine that cannot be explained is in the report
// with its reason; only bad arguments or an unknown engine are errors.
func Explain(ctx context.Context, k *kernels.Kernel, args []int, engines []string, opts Options) (*Report, error) {
	if err := k.Check(args); err != nil {
		return nil, err
	}
	if err := CheckEngines(engines); err != nil {
		return nil, err
	}
	rep := &Report{Kernel: k.Name, Args: args, Label: k.Label(args), Arch: runtime.GOARCH}
	for _, name := range engines {
		rep.Engines = append(rep.Engines, explainOne(ctx, name, request{k: k, args: args, opts: opts}))
	}
	return rep, nil
}

// explainOne runs one engine's explainer; a panic in it is that engine's refusal, not the
// caller's crash.
func explainOne(ctx context.Context, name string, r request) (ex Explanation) {
	start := time.Now()
	ex.Engine = name
	defer func() {
		if p := recover(); p != nil {
			ex.Listings = nil
			ex.Refused = fmt.Sprintf("explaining %s failed: %v\n%s", name, p, debug.Stack())
		}
		ex.Took = time.Since(start)
	}()
	e, ok := explainers[name]
	if !ok {
		ex.Refused = fmt.Sprintf("%v %q", ErrUnknownEngine, name)
		return ex
	}
	ls, err := e.run(ctx, withEngine(r, name))
	if err != nil {
		ex.Refused = err.Error()
		return ex
	}
	for i := range ls {
		ls[i].Engine = name
	}
	ex.Listings = ls
	if !r.opts.Profile {
		return ex
	}
	if e.inProcess != nil {
		profileInProcess(ctx, e, withEngine(r, name), ex.Listings)
	}
	for i := range ex.Listings {
		l := &ex.Listings[i]
		if l.Profile != nil {
			continue
		}
		switch l.Kind {
		case KindMachine:
			l.Profile = &Profile{Refused: "no profile for " + name + ": its code runs where explain does not sample it"}
		case KindBytecode:
			l.Profile = &Profile{Refused: "no profile for " + name + ": an interpreter's samples fall in its own loop, not on these instructions"}
		}
	}
	return ex
}

func withEngine(r request, name string) request {
	r.engine = name
	return r
}
