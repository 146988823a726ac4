package wazero

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/wasm"
)

// CompilerOpt is the engine of kernels.wasm after binaryen's wasm-opt -O3, on wazero's
// compiler: how much of Go's wasm tax an optimiser after the Go toolchain takes back.
const CompilerOpt = engine.WazeroCompilerOpt

// WasmOptFlags are wasm-opt's arguments: -O3, with the features the Go toolchain's
// module uses (wasm-opt refuses a module whose features it was not told of), and -g to
// keep the function names (no code changes), by which wasmgap explain finds a kernel.
var WasmOptFlags = []string{"-O3", "-g", "--enable-bulk-memory", "--enable-sign-ext",
	"--enable-nontrapping-float-to-int", "--enable-mutable-globals"}

const hintBinaryen = "apt-get install binaryen"

func init() {
	engine.Describe(engine.Info{
		Name: CompilerOpt, Title: "wazero compiler, wasm-opt",
		What:  "kernels.wasm after binaryen's wasm-opt -O3, compiled by wazero's optimizing compiler (the optimised module cached on disk at its first use)",
		Color: "#c46a0e", Version: engine.ModuleVersion("wazero", "github.com/tetratelabs/wazero"),
		KernelsWasm: true, Install: hintBinaryen,
	}, func() engine.Engine { return NewOpt(Options{}) })
}

// NewOpt returns the wazero-compiler-opt engine: Load optimises opts.Module (nil: the
// embedded kernels.wasm) with wasm-opt, or takes the optimised module from the disk's
// cache, then compiles it as the wazero-compiler engine does.
func NewOpt(opts Options) *Engine {
	opts.Interpreter = false
	opts.optimise = true
	return New(opts)
}

// OptimizedModule returns module (nil: the embedded kernels.wasm) after wasm-opt with
// WasmOptFlags, from the cache under the user's cache directory when it holds it, else by
// running wasm-opt (about ten seconds of CPU for kernels.wasm) and keeping the result. A
// missing wasm-opt is an error that wraps driver.ErrNotInstalled and names the package.
func OptimizedModule(ctx context.Context, module []byte) ([]byte, error) {
	if module == nil {
		b, err := wasm.Embedded()
		if err != nil {
			return nil, err
		}
		module = b
	}
	sum := sha256.Sum256(append(append([]byte{}, module...), strings.Join(WasmOptFlags, " ")...))
	root := DefaultCacheDir()
	var dir string
	if root != "" {
		dir = filepath.Join(filepath.Dir(root), "wasm-opt")
		if b, err := os.ReadFile(filepath.Join(dir, hex.EncodeToString(sum[:12])+".wasm")); err == nil {
			return b, nil
		}
	}
	tool, err := exec.LookPath("wasm-opt")
	if err != nil {
		return nil, driver.NotInstalled("wasm-opt not installed: " + hintBinaryen)
	}
	tmp, err := os.MkdirTemp("", "wasmgap-wasm-opt-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	in, out := filepath.Join(tmp, "kernels.wasm"), filepath.Join(tmp, "kernels-opt.wasm")
	if err := os.WriteFile(in, module, 0o600); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := childproc.Command(ctx, tool, append(append([]string{}, WasmOptFlags...), in, "-o", out)...)
	if msg, err := childproc.CombinedOutput(cmd); err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(string(msg)), "\n")
		return nil, fmt.Errorf("wasm-opt %s: %w: %s", strings.Join(WasmOptFlags, " "), err, line)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	if dir != "" {
		// Kept atomically: a reader sees the whole module or none.
		if err := os.MkdirAll(dir, 0o755); err == nil {
			final := filepath.Join(dir, hex.EncodeToString(sum[:12])+".wasm")
			if f, err := os.CreateTemp(dir, "*.tmp"); err == nil {
				_, werr := f.Write(b)
				cerr := f.Close()
				if werr == nil && cerr == nil {
					_ = os.Rename(f.Name(), final)
				}
				_ = os.Remove(f.Name())
			}
		}
	}
	return b, nil
}
