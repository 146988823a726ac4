package external

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// TestEngine runs every driver through the engine.Engine contract: one call, a batch, and
// a value checked against the catalogue.
func TestEngine(t *testing.T) {
	fibRec, _ := kernels.Lookup("fib_rec")
	for _, name := range drivers {
		t.Run(name, func(t *testing.T) {
			start(t, name).Close() // skips when the runtime is missing
			e := NewEngine(name, Options{CacheDir: cacheDir})
			var _ engine.Engine = e
			ctx := context.Background()
			setup, err := e.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(ctx)
			if !setup.Cached || setup.Instantiate <= 0 {
				t.Errorf("setup %+v: want the driver from the cache and a start time", setup)
			}
			if !strings.Contains(e.Runtime(), " ") {
				t.Errorf("Runtime() = %q", e.Runtime())
			}
			var ver engine.Versioner = e
			if got, want := ver.Version(), versionPrefix[name]; !strings.HasPrefix(got, want[0]) || !strings.Contains(got, want[1]) {
				t.Errorf("Version() = %q, want %q…%q", got, want[0], want[1])
			}
			v, err := e.Run(ctx, fibRec, []int{20})
			if err != nil || v != 6765 {
				t.Errorf("Run fib_rec(20) = %d, %v; want 6765", v, err)
			}
			first, sum, elapsed, err := e.RunTimedBatch(ctx, fibRec, []int{20}, 4)
			if err != nil || first != 6765 || sum != 4*6765 || elapsed <= 0 {
				t.Errorf("RunTimedBatch fib_rec(20) ×4 = %d, %d, %v, %v; want 6765, %d and a time", first, sum, elapsed, err, 4*6765)
			}
		})
	}
}

// versionPrefix is how each driver's version line starts, and a part it holds.
var versionPrefix = map[string][2]string{
	C:                {"gcc ", "."},
	CWasm:            {"clang ", " wasm32-wasi"},
	Java:             {"", "17"},
	NodeJS:           {"node v", "(V8 "},
	PHP:              {"PHP 8", "(opcache off, no JIT)"},
	PHPJIT:           {"PHP 8", "(opcache on, JIT tracing)"},
	NodeWasm:         {"node v", "(V8 "},
	NodeWasmOpt:      {"node v", "(V8 "},
	NodeWasmLiftoff:  {"node v", "--liftoff-only"},
	NodeWasmTurbofan: {"node v", "--no-liftoff"},
	JavaInt:          {"", "-Xint"},
	NodeJSJitless:    {"node v", "--jitless"},
	Python:           {"CPython 3", "."},
	PyPy:             {"PyPy ", "(Python 3"},
	Lua:              {"Lua 5.4", "5.4"},
	LuaJIT:           {"LuaJIT 2", "."},
	LuaJITInterp:     {"LuaJIT 2", "(JIT off)"},
}

// TestEngineNotInstalled: a missing runtime fails Load with the packages to install.
func TestEngineNotInstalled(t *testing.T) {
	e := NewEngine(PHP, Options{CacheDir: t.TempDir(), Commands: map[string]string{"php": filepath.Join(t.TempDir(), "php")}})
	_, err := e.Load(context.Background())
	if !errors.Is(err, ErrNotInstalled) || !strings.HasSuffix(err.Error(), "not installed: apt-get install php-cli") {
		t.Errorf("Load: %v, want ErrNotInstalled naming php-cli", err)
	}
	k, _ := kernels.Lookup("fib_it")
	if _, err := e.Run(context.Background(), k, []int{10}); err == nil {
		t.Error("Run before a successful Load: no error")
	}
}

// TestEngineStackOverflow: a driver's stack overflow is engine.ErrStackOverflow, as the
// harness reports it ("stack overflow"). node-js and node-wasm run on V8's default stack,
// far shallower than ack(3, 14) needs.
func TestEngineStackOverflow(t *testing.T) {
	ack, _ := kernels.Lookup("ack")
	for _, name := range []string{NodeJS, NodeWasm} {
		t.Run(name, func(t *testing.T) {
			start(t, name).Close()
			e := NewEngine(name, Options{CacheDir: cacheDir})
			ctx := context.Background()
			if _, err := e.Load(ctx); err != nil {
				t.Fatal(err)
			}
			defer e.Close(ctx)
			_, err := e.Run(ctx, ack, []int{3, 14})
			if !errors.Is(err, engine.ErrStackOverflow) {
				t.Errorf("ack(3, 14): %v, want engine.ErrStackOverflow", err)
			}
		})
	}
}
