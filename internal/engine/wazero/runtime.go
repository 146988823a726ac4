package wazero

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmgap/wasmgap/internal/capped"
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// modulePath names the module in error messages.
const modulePath = wasm.ModulePath

// embeddedHash is the hash of the module built into the binary, computed once.
var embeddedHash = sync.OnceValues(func() ([sha256.Size]byte, error) {
	b, err := wasm.Embedded()
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
})

// module returns the bytes to run and their hash.
func module(opts Options) ([]byte, [sha256.Size]byte, error) {
	if opts.Module != nil {
		return opts.Module, sha256.Sum256(opts.Module), nil
	}
	b, err := wasm.Embedded()
	if err != nil {
		return nil, [sha256.Size]byte{}, err
	}
	hash, err := embeddedHash()
	return b, hash, err
}

// DefaultCacheDir returns the directory Options.CacheDir defaults to,
// os.UserCacheDir()/wasmgap/wazero, or "" when the user has no cache directory.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "wasmgap", "wazero")
}

func cacheDir(opts Options) string {
	switch {
	case opts.Interpreter || opts.NoCache:
		return ""
	case opts.CacheDir != "":
		return opts.CacheDir
	default:
		return DefaultCacheDir()
	}
}

// key names one compilation: the same bytes, mode and cache share their compiled code.
type key struct {
	interpreter bool
	cacheDir    string
	hash        [sha256.Size]byte
	exports     string // the exports Options.Kernels names; "" for the catalogue
}

type sharedEntry struct {
	done chan struct{}
	code *compiled
	err  error
}

var (
	sharedMu sync.Mutex
	sharedBy = map[key]*sharedEntry{}
)

// shared returns the process's compiled code for opts, compiling it on first use. fresh is
// true for the call that compiled it; concurrent callers wait for that compilation.
func shared(ctx context.Context, opts Options) (code *compiled, fresh bool, err error) {
	wasm, hash, err := module(opts)
	if err != nil {
		return nil, false, err
	}
	k := key{interpreter: opts.Interpreter, cacheDir: cacheDir(opts), hash: hash}
	for _, kern := range opts.Kernels {
		k.exports += kern.Export + ","
	}
	sharedMu.Lock()
	ent, ok := sharedBy[k]
	if !ok {
		ent = &sharedEntry{done: make(chan struct{})}
		sharedBy[k] = ent
	}
	sharedMu.Unlock()
	if ok {
		<-ent.done
		return ent.code, false, ent.err
	}
	ent.code, ent.err = compile(ctx, wasm, opts.Interpreter, k.cacheDir, opts.exported())
	close(ent.done)
	return ent.code, true, ent.err
}

// compiled is kernels.wasm compiled by one wazero runtime, which lives as long as the
// process: every Engine with the same key instantiates it.
type compiled struct {
	rt       wazero.Runtime
	cm       wazero.CompiledModule
	fromDisk bool
	kernels  []*kernels.Kernel // the kernels the module exports
}

// compile compiles wasm in a new runtime, with the on-disk cache in dir unless dir is "".
func compile(ctx context.Context, wasm []byte, interpreter bool, dir string, ks []*kernels.Kernel) (*compiled, error) {
	cfg := wazero.NewRuntimeConfigCompiler()
	if interpreter {
		cfg = wazero.NewRuntimeConfigInterpreter()
	}
	cfg = cfg.WithMemoryLimitPages(MemoryLimitPages)
	entriesBefore := -1
	if dir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			return nil, fmt.Errorf("open compilation cache %s: %w", dir, err)
		}
		cfg = cfg.WithCompilationCache(cache)
		entriesBefore = cacheEntries(dir)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate WASI: %w", err)
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("compile %s: %w", modulePath, err)
	}
	if err := checkExports(cm, ks); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("%s does not match the kernel catalogue (rebuild it with `go tool task wasm`): %w", modulePath, err)
	}
	// The cache adds one entry per compilation it did not find: none added means a hit.
	fromDisk := entriesBefore > 0 && cacheEntries(dir) == entriesBefore
	return &compiled{rt: rt, cm: cm, fromDisk: fromDisk, kernels: ks}, nil
}

// cacheEntries counts the compiled modules stored under dir.
func cacheEntries(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasSuffix(d.Name(), ".tmp") {
			n++
		}
		return nil
	})
	return n
}

// checkExports reports the first of ks whose export is missing or has the wrong type:
// every parameter an i32, one i64 result.
func checkExports(cm wazero.CompiledModule, ks []*kernels.Kernel) error {
	exports := cm.ExportedFunctions()
	if _, ok := exports["_initialize"]; !ok {
		return errors.New("no _initialize export: build it with -buildmode=c-shared")
	}
	for _, k := range ks {
		def, ok := exports[k.Export]
		if !ok {
			return fmt.Errorf("no export %q for kernel %s", k.Export, k.Name)
		}
		if want := signature(len(k.Params)); !sameTypes(def.ParamTypes(), def.ResultTypes(), want) {
			return fmt.Errorf("export %s has type %s, want %s", k.Export,
				typeString(def.ParamTypes(), def.ResultTypes()), typeString(want, []api.ValueType{api.ValueTypeI64}))
		}
	}
	return nil
}

func signature(params int) []api.ValueType {
	t := make([]api.ValueType, params)
	for i := range t {
		t[i] = api.ValueTypeI32
	}
	return t
}

func sameTypes(params, results, wantParams []api.ValueType) bool {
	return bytes.Equal(params, wantParams) && len(results) == 1 && results[0] == api.ValueTypeI64
}

func typeString(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	return "(" + names(params) + ") -> (" + names(results) + ")"
}

// instance is one instantiation of the module with its exports looked up.
type instance struct {
	mod   api.Module
	fns   map[string]export
	stack []uint64       // reused by every call: two i32 parameters, one i64 result
	out   *capped.Buffer // the module's stdout and stderr: the start, where it says why it failed
}

type export struct {
	fn     api.Function
	params []api.ValueType
}

// instantiate creates an instance and runs its _initialize (the Go runtime's start-up).
func (c *compiled) instantiate(ctx context.Context) (*instance, error) {
	out := &capped.Buffer{Head: 64 << 10}
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous, so that many instances coexist in one runtime
		WithStartFunctions("_initialize").
		WithStdout(out).WithStderr(out).
		WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	mod, err := c.rt.InstantiateModule(ctx, c.cm, cfg)
	if err != nil {
		return nil, fmt.Errorf("instantiate %s: %w%s", modulePath, err, outputSuffix(out.String()))
	}
	stack := 3
	for _, k := range c.kernels {
		stack = max(stack, len(k.Params)+1)
	}
	inst := &instance{mod: mod, fns: map[string]export{}, stack: make([]uint64, stack), out: out}
	for _, k := range c.kernels {
		fn := mod.ExportedFunction(k.Export)
		if fn == nil { // checked at compile time; kept for safety
			_ = mod.Close(ctx)
			return nil, fmt.Errorf("instantiate %s: no export %q", modulePath, k.Export)
		}
		inst.fns[k.Export] = export{fn: fn, params: fn.Definition().ParamTypes()}
		// The batch export (args…, reps) → sum, when the module has it (kernels.wasm does; a
		// user's module does not).
		if b := mod.ExportedFunction(k.Export + wasm.BatchSuffix); b != nil && len(b.Definition().ParamTypes()) == len(k.Params)+1 {
			inst.fns[k.Export+wasm.BatchSuffix] = export{fn: b, params: b.Definition().ParamTypes()}
		}
	}
	return inst, nil
}

// classify maps a failed call to the engine's errors, using what the module printed: the
// Go runtime inside the module prints why it gives up (out of memory, its own stack limit)
// and then traps (unreachable, from runtime.abort) or exits with code 2.
func classify(err error, output string) error {
	msg := err.Error()
	var exit *sys.ExitError
	switch {
	case msg == "stack overflow" || strings.HasPrefix(msg, "wasm error: stack overflow"):
		// wazero's own limit (wasmruntime.ErrRuntimeStackOverflow): the interpreter stops at
		// 2,000 frames, the compiler at 400 MB of native stack. The compiler's error has
		// no stack trace.
		if msg == "stack overflow" {
			return fmt.Errorf("%w: wazero's call stack limit was reached", engine.ErrStackOverflow)
		}
		return fmt.Errorf("%w: wazero's call stack limit was reached: %w", engine.ErrStackOverflow, err)
	case strings.Contains(output, "goroutine stack exceeds"), strings.Contains(output, "fatal error: stack overflow"):
		return fmt.Errorf("%w: the module's Go runtime reached its stack limit: %w%s", engine.ErrStackOverflow, err, outputSuffix(output))
	case strings.Contains(output, "fatal error: out of memory"):
		return fmt.Errorf("%w: the module's memory is capped at %d MiB: %w%s",
			ErrOutOfMemory, MemoryLimitPages/16, err, outputSuffix(output))
	case errors.As(err, &exit):
		return fmt.Errorf("the module exited with code %d%s", exit.ExitCode(), outputSuffix(output))
	}
	return fmt.Errorf("%w%s", err, outputSuffix(output))
}

// outputSuffix renders the module's output for an error message: its first lines, which
// say why it failed (the goroutine dumps that follow can run to megabytes).
func outputSuffix(output string) string {
	output = strings.TrimSpace(output)
	if output == "" {
		return ""
	}
	const maxLines = 12
	lines := strings.Split(output, "\n")
	if len(lines) > maxLines {
		lines = append(lines[:maxLines], fmt.Sprintf("… (%d more lines)", len(lines)-maxLines))
	}
	return "\nmodule output:\n\t" + strings.Join(lines, "\n\t")
}
