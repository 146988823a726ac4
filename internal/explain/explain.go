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
	"slices"
	"strings"
	"time"

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
}

// Options configure Explain.
type Options struct {
	// WarmupTime is how long a JIT's kernel runs before its code is read; zero means the
	// harness's measure.DefaultWarmupTime.
	WarmupTime time.Duration
	// Profile asks for a sampled profile (perf record -e cpu-clock) of a timed run of each
	// engine, attributed to its listing's instructions.
	Profile bool
	// ProfileTime is how long the profiled run lasts; zero means 1 s.
	ProfileTime time.Duration
	// Module is the kernels.wasm to explain; nil means the one built into this binary.
	Module []byte
}

func (o Options) warmup() time.Duration {
	if o.WarmupTime <= 0 {
		return measure.DefaultWarmupTime
	}
	return o.WarmupTime
}

func (o Options) profileTime() time.Duration {
	if o.ProfileTime <= 0 {
		return time.Second
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
	name string
	run  func(ctx context.Context, r request) ([]Listing, error)
}

// explainers are the engines explain knows, in the order a report lists them: the compiled
// tiers first, then the interpreters.
var explainers = []explainer{
	{"native", explainNative},
	{"source", explainSource},
	{"wasm", explainWasm},
	{"wazero-compiler", explainWazero},
	{"wazero-compiler-opt", explainWazeroOpt},
	{"node-wasm-turbofan", explainNodeWasm},
	{"node-wasm-liftoff", explainNodeWasm},
	{"node-wasm", explainNodeWasm},
	{"node-wasm-opt", explainNodeWasm},
	{"node-js", explainNodeJS},
	{"java", explainJava},
	{"gccgo", explainGCCGo},
	{"c", explainC},
	{"luajit", explainLuaJIT},
	{"pypy", explainPyPy},
	{"php-jit", explainPHPJIT},
	{"wazero-interpreter", explainWazeroInterpreter},
	{"yaegi", explainYaegi},
	{"java-int", explainJavaInt},
	{"python", explainPython},
	{"php", explainPHP},
	{"luajit-interp", explainLuaBytecode},
	{"lua", explainLuaBytecode},
}

// Engines returns the names Explain accepts, in report order.
func Engines() []string {
	names := make([]string, len(explainers))
	for i, e := range explainers {
		names[i] = e.name
	}
	return names
}

// ErrUnknownEngine is returned (wrapped) for an engine explain does not know.
var ErrUnknownEngine = errors.New("unknown engine")

// CheckEngines reports the first name explain does not know, naming the ones it does.
func CheckEngines(names []string) error {
	known := Engines()
	for _, n := range names {
		if !slices.Contains(known, n) {
			return fmt.Errorf("%w %q: explain knows %s", ErrUnknownEngine, n, strings.Join(known, ", "))
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
	for _, e := range explainers {
		if e.name != name {
			continue
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
		if r.opts.Profile {
			profileEngine(ctx, name, r, ex.Listings)
		}
		for i := range ex.Listings {
			l := &ex.Listings[i]
			if !r.opts.Profile || l.Profile != nil {
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
	ex.Refused = fmt.Sprintf("%v %q", ErrUnknownEngine, name)
	return ex
}

func withEngine(r request, name string) request {
	r.engine = name
	return r
}
