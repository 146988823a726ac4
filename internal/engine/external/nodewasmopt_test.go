package external

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/internal/engine/enginetest"
	"github.com/wasmgap/wasmgap/wasm"
)

// TestNodeWasmOptRunsEveryKernel: node-wasm-opt, kernels.wasm after wasm-opt -O3 on
// Node's V8, runs every kernel of the catalogue with the catalogue's values. It skips only
// when node or wasm-opt is missing (and fails then under PEERS_REQUIRED=1, as in CI).
func TestNodeWasmOptRunsEveryKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("wasm-opt takes seconds")
	}
	e := NewEngine(NodeWasmOpt, Options{CacheDir: cacheDir})
	if e.Name() != NodeWasmOpt {
		t.Errorf("Name() = %q, want %q", e.Name(), NodeWasmOpt)
	}
	enginetest.Load(t, e)
	t.Cleanup(func() { e.Close(context.Background()) })
	enginetest.EveryKernel(t, e)
}

// TestNodeWasmOptLoadsTheOptimisedModule: the node process node-wasm-opt starts is given
// a module whose bytes are wasm-opt's output (driver.OptimizedModule), not kernels.wasm's,
// and node-wasm's is given kernels.wasm itself.
func TestNodeWasmOptLoadsTheOptimisedModule(t *testing.T) {
	if testing.Short() {
		t.Skip("wasm-opt takes seconds")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the driver's command line from /proc")
	}
	plain, err := wasm.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	opt, err := driver.OptimizedModule(context.Background(), plain)
	if errors.Is(err, ErrNotInstalled) && os.Getenv("PEERS_REQUIRED") != "1" {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(opt, plain) {
		t.Fatal("wasm-opt left kernels.wasm as it was: the test cannot tell the modules apart")
	}
	for name, want := range map[string][]byte{NodeWasmOpt: opt, NodeWasm: plain} {
		t.Run(name, func(t *testing.T) {
			p := start(t, name)
			got, err := moduleOfProcess(p.PID)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("node was given a module of %d bytes, want the %d bytes of %s's module", len(got), len(want), name)
			}
		})
	}
}

// moduleOfProcess reads the module a node-wasm driver process was given: the argument of
// its command line (/proc/PID/cmdline) that names a .wasm file.
func moduleOfProcess(pid int) ([]byte, error) {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, fmt.Errorf("the driver's command line: %w", err)
	}
	for _, arg := range strings.Split(string(cmdline), "\x00") {
		if strings.HasSuffix(arg, ".wasm") {
			return os.ReadFile(arg)
		}
	}
	return nil, fmt.Errorf("no .wasm file in the driver's command line %q", cmdline)
}
