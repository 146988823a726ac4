// Package wasm is kernels.wasm, the public module: its source (wasm/module, built for
// GOOS=wasip1 as a WASI reactor with one export per kernel, its ABI documented in
// docs/EMBEDDING.md), the bytes built into this binary (Embedded), the one way to build it
// (Build), and a Node runner (wasm/node). Package internal/engine/wazero runs it on the server.
package wasm

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/wasmgap/wasmgap/internal/childproc"
)

// dist holds kernels.wasm once `go tool task wasm` has built it; on a fresh clone it holds
// only a placeholder, so that the package builds before the module does.
//
//go:embed dist
var dist embed.FS

// Package holds the committed sources of the npm package @wasmgap/kernels (wasm/package:
// index.mjs, index.d.ts, package.json, README.md), which `go run ./build -package DIR`
// completes with kernels.wasm and the catalogue.
//
//go:embed package
var Package embed.FS

// ModulePath is where `go tool task wasm` writes the module, relative to the repository
// root.
const ModulePath = "wasm/dist/kernels.wasm"

// BatchSuffix names a kernel's batch export in kernels.wasm: <export>_batch takes the
// kernel's arguments and reps, calls the kernel reps times inside the module and returns
// the sum of the values (docs/EMBEDDING.md).
const BatchSuffix = "_batch"

// SourceDir is the folder of the module's Go source, relative to the repository root.
const SourceDir = "wasm/module"

// embedded returns the module embedded from fsys, or an error saying how to build it.
func embedded(fsys fs.FS) ([]byte, error) {
	b, err := fs.ReadFile(fsys, "dist/kernels.wasm")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not built into this binary: run `go tool task wasm` (or `go tool task build`) and rebuild", ModulePath)
	}
	if err != nil {
		return nil, fmt.Errorf("read embedded %s: %w", ModulePath, err)
	}
	return b, nil
}

var embeddedOnce = sync.OnceValues(func() ([]byte, error) { return embedded(dist) })

// Embedded returns kernels.wasm as built into this binary, or an error that says how to
// build it. The bytes are shared: do not modify them.
func Embedded() ([]byte, error) { return embeddedOnce() }

// BuildArgs are the arguments of the go command that builds the module from SourceDir,
// with GOOS=wasip1 GOARCH=wasm: a WASI preview1 reactor (-buildmode=c-shared) whose
// bytes do not depend on where the checkout lies (-trimpath).
func BuildArgs(out string) []string {
	return []string{"build", "-buildmode=c-shared", "-trimpath", "-o", out, "."}
}

// Build compiles the module's source in sourceDir (the repository's wasm/module) into out.
// It runs the go command on PATH; the error carries the compiler's output.
func Build(ctx context.Context, sourceDir, out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("build kernels.wasm: the go command is not on PATH: %w", err)
	}
	if out, err = filepath.Abs(out); err != nil {
		return fmt.Errorf("build kernels.wasm: %w", err)
	}
	// Through childproc, as every child of this module: the go command and its compilers
	// in a group of their own, killed whole with ctx, and dying with this process.
	cmd := childproc.Command(ctx, goBin, BuildArgs(out)...)
	cmd.Dir = sourceDir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := childproc.CombinedOutput(cmd); err != nil {
		return fmt.Errorf("build kernels.wasm (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared in %s): %w\n%s", sourceDir, err, msg)
	}
	return nil
}
