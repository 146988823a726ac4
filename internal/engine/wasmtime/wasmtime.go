//go:build wasmtime

// Package wasmtime runs kernels.wasm (package wasm: the Go kernels compiled to WebAssembly)
// under wasmtime, compiled by Cranelift, through github.com/bytecodealliance/wasmtime-go.
//
// The package is built only with the build tag wasmtime (go build -tags wasmtime): the
// binding needs cgo and links wasmtime's C library, which the Go module ships inside itself
// (about 260 MB of module cache for every platform's copy). Without the tag the wasmgap
// binary stays pure Go, cross-compiles, and `go build ./...`, `go vet ./...` and CI never
// fetch the module's source. A nested module would keep even the go.mod entry out, but
// then package runner could not import the engine; a tag keeps one module and one binary.
//
// Compiled machine code is cached on disk (Options.CacheDir) as wasmtime's serialized
// module, so that a worker process after the first deserializes it in milliseconds
// instead of compiling for seconds. Calls are not interrupted: as with wazero, a host
// that needs a time limit runs the engine in a process it can kill (package runner).
//
// Importing the package registers the engine as "wasmtime".
package wasmtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	wt "github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// Name is the engine's name (engine.Order places it with the other WebAssembly engines).
const Name = engine.Wasmtime

// MemoryLimit caps the instance's linear memory, as internal/engine/wazero's MemoryLimitPages does.
const MemoryLimit = 1 << 30

// MaxWasmStack is the native stack wasm code may use by default: Go-built wasm recurses one
// wasm frame per Go call, and ack(3, 10) needs more than wasmtime's default of 512 KiB. It
// stays below the 8 MiB of the thread a cgo call runs on.
const MaxWasmStack = 4 << 20

func init() {
	engine.Describe(engine.Info{
		Name: Name, Title: "wasmtime",
		What:    "kernels.wasm compiled by wasmtime's Cranelift, through wasmtime-go (cgo)",
		Color:   "#2f8f83",
		Version: engine.ModuleVersion("wasmtime-go", "github.com/bytecodealliance/wasmtime-go/v39"),
		Install: "go build -tags wasmtime (needs cgo and gcc)", KernelsWasm: true,
	}, func() engine.Engine { return New(Options{}) })
}

// Options configure the engine. The zero value runs the embedded module with the default
// cache.
type Options struct {
	// Module is the kernels.wasm binary; nil means the one built into the binary.
	Module []byte
	// CacheDir holds compiled modules; "" means os.UserCacheDir()/wasmgap/wasmtime (no
	// cache when that is unknown).
	CacheDir string
	// MaxWasmStack is the native stack, in bytes, wasm code may use; 0 means MaxWasmStack.
	MaxWasmStack int
}

// Engine runs kernels.wasm under wasmtime; one call at a time.
type Engine struct {
	opts   Options
	store  *wt.Store
	inst   *wt.Instance
	stderr string // file the module's stdout and stderr go to
	// fns holds the exports looked up so far, by name (nil for one the module lacks): a
	// lookup crosses cgo too, and costs more than the call of an empty export (1.7 µs against
	// 1.2 µs here), which an embedder does once.
	fns map[string]*wt.Func
}

// export returns the module's export name, looked up once per engine; nil when it has none.
func (e *Engine) export(name string) *wt.Func {
	if fn, ok := e.fns[name]; ok {
		return fn
	}
	if e.fns == nil {
		e.fns = map[string]*wt.Func{}
	}
	fn := e.inst.GetFunc(e.store, name)
	e.fns[name] = fn
	return fn
}

// New returns an engine; Load compiles and instantiates the module.
func New(opts Options) *Engine { return &Engine{opts: opts} }

// Name returns "wasmtime".
func (*Engine) Name() string { return Name }

// bindingModule is the module path of the wasmtime binding this package links.
const bindingModule = "github.com/bytecodealliance/wasmtime-go/v39"

// Version returns the wasmtime binding built into this binary, as its module version
// ("wasmtime-go v39.0.1": wasmtime-go's versions follow the wasmtime library they ship):
// engine.Versioner.
func (*Engine) Version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == bindingModule {
				if m.Replace != nil {
					return "wasmtime-go " + m.Replace.Version + " (replaced)"
				}
				return "wasmtime-go " + m.Version
			}
		}
	}
	return "wasmtime-go v39 (no build information)"
}

// Load compiles the module with Cranelift (or loads it from the cache), instantiates it
// with WASI and calls _initialize.
func (e *Engine) Load(ctx context.Context) (engine.Setup, error) {
	if e.inst != nil {
		return engine.Setup{}, errors.New("wasmtime: Load called twice")
	}
	bin := e.opts.Module
	if bin == nil {
		b, err := wasm.Embedded()
		if err != nil {
			return engine.Setup{}, err
		}
		bin = b
	}
	cfg := wt.NewConfig()
	cfg.SetCraneliftOptLevel(wt.OptLevelSpeed)
	cfg.SetMaxWasmStack(e.maxStack())
	eng := wt.NewEngineWithConfig(cfg)

	var setup engine.Setup
	t0 := time.Now()
	mod, cached, err := compile(eng, bin, e.cacheDir())
	if err != nil {
		return setup, fmt.Errorf("wasmtime: compile kernels.wasm: %w", err)
	}
	setup.Compile, setup.Cached = time.Since(t0), cached

	t1 := time.Now()
	out, err := os.CreateTemp("", "wasmgap-wasmtime-*.log")
	if err != nil {
		return setup, fmt.Errorf("wasmtime: %w", err)
	}
	out.Close()
	e.stderr = out.Name()
	wasi := wt.NewWasiConfig()
	wasi.SetArgv([]string{"kernels"})
	if err := wasi.SetStdoutFile(e.stderr); err != nil {
		return setup, fmt.Errorf("wasmtime: %w", err)
	}
	if err := wasi.SetStderrFile(e.stderr); err != nil {
		return setup, fmt.Errorf("wasmtime: %w", err)
	}
	e.store = wt.NewStore(eng)
	e.store.SetWasi(wasi)
	e.store.Limiter(MemoryLimit, -1, -1, -1, -1)
	linker := wt.NewLinker(eng)
	if err := linker.DefineWasi(); err != nil {
		return setup, fmt.Errorf("wasmtime: WASI: %w", err)
	}
	inst, err := linker.Instantiate(e.store, mod)
	if err != nil {
		return setup, fmt.Errorf("wasmtime: instantiate kernels.wasm: %w", err)
	}
	init := inst.GetFunc(e.store, "_initialize")
	if init == nil {
		return setup, errors.New("wasmtime: kernels.wasm has no _initialize: is it a WASI reactor (go build -buildmode=c-shared)?")
	}
	if _, err := init.Call(e.store); err != nil {
		return setup, fmt.Errorf("wasmtime: _initialize: %w", e.explain(err))
	}
	e.inst = inst
	setup.Instantiate = time.Since(t1)
	return setup, nil
}

// maxStack is the wasm stack limit in bytes.
func (e *Engine) maxStack() int {
	if e.opts.MaxWasmStack > 0 {
		return e.opts.MaxWasmStack
	}
	return MaxWasmStack
}

// cacheDir is the directory compiled modules are kept in, or "".
func (e *Engine) cacheDir() string {
	if e.opts.CacheDir != "" {
		return e.opts.CacheDir
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "wasmgap", "wasmtime")
}

// compile deserializes the module from dir when an earlier process compiled the same bytes
// with the same wasmtime, and otherwise compiles it and stores it there.
func compile(eng *wt.Engine, bin []byte, dir string) (*wt.Module, bool, error) {
	if dir == "" {
		m, err := wt.NewModule(eng, bin)
		return m, false, err
	}
	h := sha256.Sum256(bin)
	path := filepath.Join(dir, "kernels-"+hex.EncodeToString(h[:12])+"-"+bindingVersion+".cwasm")
	if _, err := os.Stat(path); err == nil {
		if m, err := wt.NewModuleDeserializeFile(eng, path); err == nil {
			return m, true, nil
		}
	}
	m, err := wt.NewModule(eng, bin)
	if err != nil {
		return nil, false, err
	}
	if b, err := m.Serialize(); err == nil && os.MkdirAll(dir, 0o755) == nil {
		tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
		if os.WriteFile(tmp, b, 0o644) == nil {
			os.Rename(tmp, path)
		}
	}
	return m, false, nil
}

// bindingVersion names the wasmtime that compiled a cached module: another version
// cannot load it.
const bindingVersion = "v39"

// Run calls the kernel's export once. A stack overflow wraps engine.ErrStackOverflow.
func (e *Engine) Run(_ context.Context, k *kernels.Kernel, args []int) (int64, error) {
	if e.inst == nil {
		return 0, errors.New("wasmtime: Run before Load")
	}
	fn := e.export(k.Export)
	if fn == nil {
		return 0, fmt.Errorf("wasmtime: kernels.wasm has no export %s", k.Export)
	}
	return e.call(fn, k, k.Export, args, int32s(args))
}

// int32s is a kernel's arguments as the module's parameters (i32).
func int32s(args []int, more ...int) []any {
	in := make([]any, 0, len(args)+len(more))
	for _, a := range append(args[:len(args):len(args)], more...) {
		in = append(in, int32(a))
	}
	return in
}

// call calls fn, export name of k, with in: the i64 it returns.
func (e *Engine) call(fn *wt.Func, k *kernels.Kernel, name string, args []int, in []any) (int64, error) {
	v, err := fn.Call(e.store, in...)
	if err != nil {
		return 0, fmt.Errorf("wasmtime: %s: %w", k.Label(args), e.explain(err))
	}
	r, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("wasmtime: %s returned %T, want an i64", name, v)
	}
	return r, nil
}

// RunBatch calls the kernel reps times and returns the first value and the sum of all
// (engine.Batcher): one call of the export, then one of its batch export for the other
// reps - 1, so that a sample crosses cgo twice, not reps times, and times Cranelift's code.
// A module without batch exports is called reps times; so is a kernel that times the host's
// call (kernels.Kernel.HostCall), in a loop as tight as an embedder's (hostCalls): there each
// call crosses cgo, as an embedder's does.
func (e *Engine) RunBatch(ctx context.Context, k *kernels.Kernel, args []int, reps int) (first, sum int64, err error) {
	first, err = e.Run(ctx, k, args)
	if err != nil || reps <= 1 {
		return first, first, err
	}
	if k.HostCall {
		if sum, err = e.hostCalls(k, args, first, reps); err != nil {
			return 0, 0, err
		}
		return first, sum, nil
	}
	bfn := e.export(k.Export + wasm.BatchSuffix)
	if bfn == nil || reps-1 > math.MaxInt32 {
		if sum, err = engine.RunRest(ctx, e, k, args, first, reps); err != nil {
			return 0, 0, err
		}
		return first, sum, nil
	}
	rest, err := e.call(bfn, k, k.Export+wasm.BatchSuffix, args, int32s(args, reps-1))
	if err != nil {
		return 0, 0, err
	}
	return first, first + rest, nil
}

// hostCalls makes reps-1 more calls of k's export after a first (Run's) that returned
// first, and returns the sum of all reps values: each one Func.Call, with the export looked
// up and the arguments converted once, as an embedder calls it.
func (e *Engine) hostCalls(k *kernels.Kernel, args []int, first int64, reps int) (int64, error) {
	fn := e.export(k.Export) // Run found it
	in := int32s(args)
	sum := first
	for i := 1; i < reps; i++ {
		r, err := e.call(fn, k, k.Export, args, in)
		if err != nil {
			return 0, err
		}
		sum += r
	}
	return sum, nil
}

// explain turns a trap or an exit of the module's Go runtime into an error that says what
// happened, with engine.ErrStackOverflow for either stack's limit.
func (e *Engine) explain(err error) error {
	out := e.output()
	var trap *wt.Trap
	if errors.As(err, &trap) {
		if c := trap.Code(); c != nil && *c == wt.StackOverflow {
			return fmt.Errorf("%w: wasmtime's wasm stack limit (%d KiB) was reached", engine.ErrStackOverflow, e.maxStack()>>10)
		}
	}
	if strings.Contains(out, "goroutine stack exceeds") || strings.Contains(out, "fatal error: stack overflow") {
		return fmt.Errorf("%w: the module's Go runtime reached its stack limit: %s", engine.ErrStackOverflow, firstLine(out))
	}
	msg := firstLine(err.Error())
	if out != "" {
		msg += "; the module wrote: " + firstLine(out)
	}
	return errors.New(msg)
}

// output is the start of what the module wrote.
func (e *Engine) output() string {
	f, err := os.Open(e.stderr)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, _ := f.Read(b)
	return strings.TrimSpace(string(b[:n]))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Close releases the instance and removes the module's output file.
func (e *Engine) Close(context.Context) error {
	if e.store != nil {
		e.store.Close()
		e.store, e.inst, e.fns = nil, nil, nil
	}
	if e.stderr != "" {
		os.Remove(e.stderr)
		e.stderr = ""
	}
	return nil
}
