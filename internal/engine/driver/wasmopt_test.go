package driver

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestOptimizedModuleWithoutWasmOpt: with no wasm-opt on the PATH and nothing cached,
// OptimizedModule says so, names the Debian package, and wraps ErrNotInstalled.
func TestOptimizedModuleWithoutWasmOpt(t *testing.T) {
	if _, err := exec.LookPath("wasm-opt"); err != nil {
		t.Skip("wasm-opt is missing anyway")
	}
	t.Setenv("PATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // nothing cached
	_, err := OptimizedModule(context.Background(), []byte("\x00asm\x01\x00\x00\x00"))
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), HintBinaryen) {
		t.Errorf("without wasm-opt: %v, want ErrNotInstalled naming %q", err, HintBinaryen)
	}
}
