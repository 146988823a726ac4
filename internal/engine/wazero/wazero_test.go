package wazero

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// testModule is kernels.wasm built from this checkout by TestMain, so that the tests never
// depend on `go tool task wasm` having run; testModulePath is where it lies.
var (
	testModule     []byte
	testModulePath string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wasmgap-wasm-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testModulePath = filepath.Join(dir, "kernels.wasm")
	// Keep the default compilation cache (os.UserCacheDir) of this test run apart from the
	// user's.
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := wasm.Build(context.Background(), "../../../wasm/module", testModulePath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if testModule, err = os.ReadFile(testModulePath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// modes are the two ways wazero runs the module.
var modes = []struct {
	name string
	opts Options
}{
	{engine.WazeroCompiler, Options{}},
	{engine.WazeroInterpreter, Options{Interpreter: true}},
}

func load(t testing.TB, opts Options) *Engine {
	t.Helper()
	opts.Module = testModule
	e := New(opts)
	if _, err := e.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return e
}

// smallArgs are quick arguments for every kernel, edges included.
var smallArgs = map[string][][]int{
	"fib_it":    {{0}, {1}, {2}, {10}, {92}},
	"fib_rec":   {{0}, {1}, {2}, {3}, {15}},
	"ack_while": {{0, 0}, {1, 5}, {2, 4}, {3, 0}, {3, 3}},
	"ack":       {{0, 0}, {1, 5}, {2, 4}, {3, 0}, {3, 3}},
	"test1":     {{1, 1}, {20_001, 1}, {2_000, 30}},
	"test1b":    {{1, 1}, {20_001, 1}, {2_000, 30}},
	"test2":     {{1, 1}, {20_001, 1}, {2_000, 30}},
	"test3":     {{1, 1}, {20_001, 1}, {2_000, 30}},
	"test4":     {{1, 1}, {20_001, 1}, {2_000, 30}},
	"test5":     {{1, 1}, {20_001, 1}, {2_000, 30}},
	"test6":     {{1, 1}, {20_001, 1}, {2_000, 30}},
	"test7":     {{1}, {2}, {1_000}},
	"test8":     {{1}, {2}, {1_000}},
	"test8b":    {{1}, {2}, {1_000}},
	"host_call": {{}},
}

// Every kernel returns its catalogue's expected result on both modes.
func TestKernelsMatchExpected(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			e := load(t, mode.opts)
			if e.Name() != mode.name {
				t.Errorf("Name() = %q, want %q", e.Name(), mode.name)
			}
			for _, k := range kernels.Every() {
				cases, ok := smallArgs[k.Name]
				if !ok {
					t.Errorf("%s: no test arguments", k.Name)
					continue
				}
				for _, args := range cases {
					got, err := e.Run(context.Background(), k, args)
					if err != nil {
						t.Errorf("%s: %v", k.Label(args), err)
					} else if want := k.Expected(args); got != want {
						t.Errorf("%s = %d, want %d", k.Label(args), got, want)
					}
				}
			}
		})
	}
}

// Deep recursion overflows the interpreter's 2,000 frames; the engine keeps working
// afterwards. The articles' stack test, ack(3, 10), runs on the compiler and overflows the
// interpreter (after about ten seconds of work, so not with -short).
func TestStackOverflow(t *testing.T) {
	ack, err := kernels.Lookup("ack")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	compiler, interpreter := load(t, Options{}), load(t, Options{Interpreter: true})
	checkOverflow := func(args []int, err error) {
		t.Helper()
		if !errors.Is(err, engine.ErrStackOverflow) {
			t.Fatalf("interpreter: %s: got error %v, want engine.ErrStackOverflow", ack.Label(args), err)
		}
		if !strings.Contains(err.Error(), ack.Label(args)) || !strings.Contains(err.Error(), "wasm stack trace") {
			t.Errorf("error lacks the call or the wasm stack trace: %v", err)
		}
		if got, err := interpreter.Run(ctx, ack, []int{2, 3}); err != nil || got != 9 {
			t.Errorf("interpreter after the overflow: ack(2, 3) = %d, %v; want 9", got, err)
		}
	}

	// ack(1, m) recurses m deep and returns m + 2 (m beyond the catalogue's range: Run
	// takes checked arguments, and this one overflows in a few thousand calls).
	deep := []int{1, 5000}
	if got, err := compiler.Run(ctx, ack, deep); err != nil || got != 5002 {
		t.Errorf("compiler: %s = %d, %v; want 5002", ack.Label(deep), got, err)
	}
	// Go's wasm port unwinds the whole wasm call stack each time a goroutine's stack grows,
	// so on a fresh instance the first deep call may get through; the second runs on the
	// grown stack and reaches the limit.
	if got, err := interpreter.Run(ctx, ack, deep); err == nil && got != 5002 || err != nil && !errors.Is(err, engine.ErrStackOverflow) {
		t.Errorf("interpreter: %s = %d, %v; want 5002 or a stack overflow", ack.Label(deep), got, err)
	}
	_, err = interpreter.Run(ctx, ack, deep)
	checkOverflow(deep, err)

	if testing.Short() {
		return
	}
	args := []int{3, 10}
	_, err = interpreter.Run(ctx, ack, args)
	checkOverflow(args, err)
	if got, err := compiler.Run(ctx, ack, args); err != nil || got != 8189 {
		t.Errorf("compiler: %s = %d, %v; want 8189", ack.Label(args), got, err)
	}
}

// Allocating past MemoryLimitPages fails with ErrOutOfMemory and the engine recovers.
func TestOutOfMemory(t *testing.T) {
	test7, err := kernels.Lookup("test7")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := load(t, Options{})
	// 200,000,000 int64s are 1.6 GB, past the 1 GiB cap.
	args := []int{200_000_000}
	if _, err := e.Run(ctx, test7, args); !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "fatal error: out of memory") {
		t.Errorf("%s: got error %v, want ErrOutOfMemory with the runtime's message", test7.Label(args), err)
	}
	if got, err := e.Run(ctx, test7, []int{1000}); err != nil || got != 1_000_000 {
		t.Errorf("after running out of memory: test7(1000) = %d, %v; want 1000000", got, err)
	}
}

// What the Go runtime inside the module prints before it aborts becomes the error.
func TestClassify(t *testing.T) {
	exit := func(code uint32) error { return sys.NewExitError(code) }
	trap := errors.New("wasm error: unreachable\nwasm stack trace:\n\tmain.f()")
	overflow := errors.New("wasm error: stack overflow\nwasm stack trace:\n\tmain.ack(i32,i32) i64")
	for _, c := range []struct {
		name    string
		err     error
		output  string
		target  error
		message string
	}{
		{"interpreter's limit", overflow, "", engine.ErrStackOverflow, "main.ack"},
		{"compiler's limit", errors.New("stack overflow"), "", engine.ErrStackOverflow, "call stack limit"},
		{"goroutine stack", exit(2), "runtime: goroutine stack exceeds 1000000000-byte limit\nfatal error: stack overflow\n", engine.ErrStackOverflow, "goroutine stack exceeds"},
		{"memory", trap, "runtime: out of memory: cannot allocate 960495616-byte block (512589824 in use)\nfatal error: out of memory\n", ErrOutOfMemory, "cannot allocate"},
		{"panic", exit(2), "panic: boom\n", nil, "exited with code 2"},
		{"trap", trap, "", nil, "unreachable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := classify(c.err, c.output)
			if c.target != nil && !errors.Is(err, c.target) {
				t.Errorf("errors.Is(%v, %v) = false", err, c.target)
			}
			if c.target == nil && (errors.Is(err, engine.ErrStackOverflow) || errors.Is(err, ErrOutOfMemory)) {
				t.Errorf("%v: classified as a stack overflow or out of memory", err)
			}
			if !strings.Contains(err.Error(), c.message) {
				t.Errorf("%q does not mention %q", err, c.message)
			}
		})
	}
}

// A process that finds the module in the cache directory takes its machine code from
// there and says so in Setup.Cached.
func TestCompilationCache(t *testing.T) {
	ctx := context.Background()
	// A custom section makes a module no other test compiled: id 0, 6 bytes, name "disk",
	// one byte of content.
	module := append(append([]byte(nil), testModule...), 0, 6, 4, 'd', 'i', 's', 'k', 1)
	opts := Options{Module: module, CacheDir: t.TempDir()}
	load := func() engine.Setup {
		t.Helper()
		e := New(opts)
		setup, err := e.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Close(ctx); err != nil {
			t.Fatal(err)
		}
		return setup
	}
	if setup := load(); setup.Cached {
		t.Errorf("first Load with an empty cache directory: %+v, want Cached false", setup)
	}
	if cacheEntries(opts.CacheDir) == 0 {
		t.Fatal("compilation left no entry in the cache directory")
	}
	forgetCompiled(t, opts) // as if this were a new process
	if setup := load(); !setup.Cached {
		t.Errorf("Load in a new process with a filled cache directory: %+v, want Cached true", setup)
	}
	code, _, err := shared(ctx, opts)
	if err != nil || !code.fromDisk {
		t.Errorf("the second compilation did not come from the disk cache (err %v)", err)
	}
}

// forgetCompiled drops the process's compiled code for opts, so that the next Load
// compiles again as a new process would.
func forgetCompiled(t *testing.T, opts Options) {
	_, hash, err := module(opts)
	if err != nil {
		t.Fatal(err)
	}
	k := key{interpreter: opts.Interpreter, cacheDir: cacheDir(opts), hash: hash}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	ent, ok := sharedBy[k]
	if !ok {
		t.Fatal("no compiled code to forget")
	}
	_ = ent.code.rt.Close(context.Background())
	delete(sharedBy, k)
}

// Engines of one mode share one compilation: the second Load reports it as cached.
func TestLoadShares(t *testing.T) {
	ctx := context.Background()
	// A custom section makes a module no other test compiled: id 0, 6 bytes, name "test", one byte of content.
	module := append(append([]byte(nil), testModule...), 0, 6, 4, 't', 'e', 's', 't', 1)
	opts := Options{Interpreter: true, Module: module}
	a, b := New(opts), New(opts)
	setupA, err := a.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	setupB, err := b.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if setupA.Cached || !setupB.Cached {
		t.Errorf("Cached = %v then %v, want false then true", setupA.Cached, setupB.Cached)
	}
	if a.code != b.code {
		t.Error("two engines of one mode compiled the module twice")
	}
	if setupA.Compile <= 0 || setupA.Instantiate <= 0 {
		t.Errorf("setup times not measured: %+v", setupA)
	}
	fib, _ := kernels.Lookup("fib_it")
	for _, e := range []*Engine{a, b} {
		if got, err := e.Run(ctx, fib, []int{50}); err != nil || got != fib.Expected([]int{50}) {
			t.Errorf("fib_it(50) = %d, %v", got, err)
		}
	}
}

// Engines loaded and run from several goroutines at once share one compilation, each
// with its own instance.
func TestConcurrentEngines(t *testing.T) {
	ctx := context.Background()
	module := append(append([]byte(nil), testModule...), 0, 6, 4, 'c', 'o', 'n', 'c', 1)
	fib, _ := kernels.Lookup("fib_rec")
	const n = 4
	engines := make([]*Engine, n)
	errs := make(chan error, n)
	for i := range engines {
		engines[i] = New(Options{Interpreter: true, Module: module})
		go func(e *Engine) {
			if _, err := e.Load(ctx); err != nil {
				errs <- err
				return
			}
			for range 3 {
				if got, err := e.Run(ctx, fib, []int{12}); err != nil || got != 144 {
					errs <- fmt.Errorf("fib_rec(12) = %d, %v; want 144", got, err)
					return
				}
			}
			errs <- nil
		}(engines[i])
	}
	for range engines {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, e := range engines[1:] {
		if e.code != engines[0].code {
			t.Error("engines of one mode compiled the module more than once")
		}
	}
	for _, e := range engines {
		if err := e.Close(ctx); err != nil {
			t.Error(err)
		}
	}
}

// Misuse and bad modules give errors that say what to do.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	fib, _ := kernels.Lookup("fib_it")

	if _, err := New(Options{}).Run(ctx, fib, []int{1}); err == nil || !strings.Contains(err.Error(), "before Load") {
		t.Errorf("Run before Load: %v", err)
	}
	if _, err := New(Options{Module: []byte("not wasm"), NoCache: true}).Load(ctx); err == nil || !strings.Contains(err.Error(), "compile") {
		t.Errorf("bad module: %v", err)
	}
	// A valid module without the kernel exports: an empty wasm module.
	empty := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	if _, err := New(Options{Module: empty, NoCache: true}).Load(ctx); err == nil || !strings.Contains(err.Error(), "_initialize") {
		t.Errorf("module without exports: %v", err)
	}

	e := load(t, Options{Interpreter: true})
	if _, err := e.Load(ctx); err == nil {
		t.Error("second Load: no error")
	}
	if _, err := e.Run(ctx, fib, []int{1, 2}); err == nil || !strings.Contains(err.Error(), "takes 1 arguments") {
		t.Errorf("wrong argument count: %v", err)
	}
	if _, err := e.Run(ctx, fib, []int{1 << 40}); err == nil || !strings.Contains(err.Error(), "i32") {
		t.Errorf("argument beyond i32: %v", err)
	}
	unknown := &kernels.Kernel{Name: "nope", Export: "nope"}
	if _, err := e.Run(ctx, unknown, nil); err == nil || !strings.Contains(err.Error(), "no export") {
		t.Errorf("unknown export: %v", err)
	}
	closed := New(Options{Interpreter: true, Module: testModule})
	if _, err := closed.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := closed.Run(ctx, fib, []int{1}); err == nil || !strings.Contains(err.Error(), "after Close") {
		t.Errorf("Run after Close: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Run(cancelled, fib, []int{1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// The module exports every catalogue kernel with the ABI's type and imports only WASI,
// and it passes wabt's validator.
func TestModuleABI(t *testing.T) {
	// checkExports is what Load applies; run it on the freshly built module.
	code, err := compile(context.Background(), testModule, true, "", kernels.Every())
	if err != nil {
		t.Fatal(err)
	}
	defer code.rt.Close(context.Background())
	for _, k := range kernels.Every() {
		def := code.cm.ExportedFunctions()[k.Export]
		if def == nil {
			t.Errorf("no export %s", k.Export)
			continue
		}
		if got, want := typeString(def.ParamTypes(), def.ResultTypes()), typeString(signature(len(k.Params)), []api.ValueType{api.ValueTypeI64}); got != want {
			t.Errorf("%s: type %s, want %s", k.Export, got, want)
		}
	}
	for _, imp := range code.cm.ImportedFunctions() {
		if mod, name, _ := imp.Import(); mod != "wasi_snapshot_preview1" {
			t.Errorf("import %s.%s: only wasi_snapshot_preview1 is allowed", mod, name)
		}
	}
	if len(code.cm.ImportedMemories()) != 0 {
		t.Error("the module imports a memory")
	}

	validate, err := exec.LookPath("wasm-validate")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("wasm-validate (Debian package wabt) is not installed")
		}
		t.Skip("wasm-validate (Debian package wabt) is not installed")
	}
	if out, err := exec.Command(validate, testModulePath).CombinedOutput(); err != nil {
		t.Errorf("wasm-validate: %v\n%s", err, out)
	}
}

// TestRunBatch: a batch is one call of the export and one of its batch export, whose sum
// is every call's value.
func TestRunBatch(t *testing.T) {
	for _, interp := range []bool{false, true} {
		e := New(Options{Interpreter: interp, NoCache: true})
		ctx := context.Background()
		if _, err := e.Load(ctx); err != nil {
			t.Fatal(err)
		}
		defer e.Close(ctx)
		if _, ok := e.inst.fns["fib_it"+wasm.BatchSuffix]; !ok {
			t.Fatal("kernels.wasm has no fib_it_batch export")
		}
		k, _ := kernels.Lookup("fib_it")
		for _, reps := range []int{1, 2, 7} {
			first, sum, err := e.RunBatch(ctx, k, []int{40}, reps)
			if err != nil || first != 102334155 || sum != int64(reps)*102334155 {
				t.Errorf("%s: RunBatch(fib_it(40), %d) = %d, %d, %v", e.Name(), reps, first, sum, err)
			}
		}
	}
}

// host_call returns the catalogue's value on both modes, one call of nop per call: RunBatch
// runs reps calls of nop, never the module's batch loop.
func TestHostCall(t *testing.T) {
	k, err := kernels.Lookup("host_call")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, mode := range modes {
		e := load(t, mode.opts)
		for _, reps := range []int{1, 3} {
			first, sum, err := e.RunBatch(ctx, k, nil, reps)
			if err != nil || first != kernels.NopValue || sum != int64(reps)*kernels.NopValue {
				t.Errorf("%s: RunBatch(host_call(), %d) = %d, %d, %v; want %d, %d", mode.name, reps, first, sum, err, kernels.NopValue, reps*kernels.NopValue)
			}
		}
	}
}

// A HostCall kernel is called once across the boundary per call even where its export has a
// batch export: fib_it marked HostCall, counted by a wazero listener on its two exports.
func TestHostCallNeverBatches(t *testing.T) {
	fib, _ := kernels.Lookup("fib_it")
	hc := *fib
	hc.HostCall = true
	calls := map[string]int{}
	factory := experimental.FunctionListenerFactoryFunc(func(def api.FunctionDefinition) experimental.FunctionListener {
		for _, name := range def.ExportNames() {
			if name == "fib_it" || name == "fib_it"+wasm.BatchSuffix {
				return experimental.FunctionListenerFunc(func(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
					calls[name]++
				})
			}
		}
		return nil
	})
	ctx := experimental.WithFunctionListenerFactory(context.Background(), factory)
	e := New(Options{Interpreter: true, Module: testModule, Kernels: []*kernels.Kernel{&hc}})
	if _, err := e.Load(ctx); err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	first, sum, err := e.RunBatch(ctx, &hc, []int{10}, 5)
	if err != nil || first != 55 || sum != 5*55 {
		t.Fatalf("RunBatch(fib_it(10) as a host call, 5) = %d, %d, %v", first, sum, err)
	}
	if calls["fib_it"] != 5 || calls["fib_it"+wasm.BatchSuffix] != 0 {
		t.Errorf("calls %v, want fib_it 5 times and its batch export never", calls)
	}
}
