package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"
)

// WasmOptFlags are binaryen's wasm-opt arguments for the engines that run kernels.wasm
// after it (wazero-compiler-opt, node-wasm-opt): -O3, with the features the Go toolchain's
// module uses (wasm-opt refuses a module whose features it was not told of), and -g to
// keep the function names (no code changes), by which wasmgap explain finds a kernel.
var WasmOptFlags = []string{"-O3", "-g", "--enable-bulk-memory", "--enable-sign-ext",
	"--enable-nontrapping-float-to-int", "--enable-mutable-globals"}

// HintBinaryen is the Debian package that provides wasm-opt.
const HintBinaryen = "apt-get install binaryen"

// wasmOptCacheNS is the optimised modules' directory under os.UserCacheDir.
const wasmOptCacheNS = "wasmgap/wasm-opt"

// OptimizedModule returns module (kernels.wasm, or a build of it) after wasm-opt with
// WasmOptFlags, from the cache under the user's cache directory when it holds it, else by
// running wasm-opt (about ten seconds of CPU for kernels.wasm) and keeping the result. A
// missing wasm-opt is an error that wraps ErrNotInstalled and names the package.
func OptimizedModule(ctx context.Context, module []byte) ([]byte, error) {
	if len(module) == 0 {
		return nil, errors.New("wasm-opt: no module to optimise (an empty one)")
	}
	sum := sha256.Sum256(append(append([]byte{}, module...), strings.Join(WasmOptFlags, " ")...))
	dir := DefaultCacheDir(wasmOptCacheNS)
	file := hex.EncodeToString(sum[:12]) + ".wasm"
	if dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, file)); err == nil {
			return b, nil
		}
	}
	tool, err := exec.LookPath("wasm-opt")
	if err != nil {
		return nil, NotInstalled("wasm-opt not installed: " + HintBinaryen)
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
		return nil, fmt.Errorf("wasm-opt %s: %w: %s", strings.Join(WasmOptFlags, " "), err, FirstLine(strings.TrimSpace(string(msg))))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	if dir != "" {
		// Kept atomically: a reader sees the whole module or none.
		if err := os.MkdirAll(dir, 0o755); err == nil {
			if f, err := os.CreateTemp(dir, "*.tmp"); err == nil {
				_, werr := f.Write(b)
				cerr := f.Close()
				if werr == nil && cerr == nil {
					_ = os.Rename(f.Name(), filepath.Join(dir, file))
				}
				_ = os.Remove(f.Name())
			}
		}
	}
	return b, nil
}
