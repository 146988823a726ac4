// Package wasm is kernels.wasm, the public module: its source (wasm/module, built for
// GOOS=wasip1 as a WASI reactor with one export per kernel, its ABI documented in
// docs/EMBEDDING.md), its built bytes, committed as wasm/kernels.wasm and embedded here
// (Embedded), the one way to build it (Build) and the check that the committed bytes are
// what the source builds to (CheckBuilt). Package wasm/kernels runs it under wazero for any
// Go program; wasm/node and wasm/package are its Node runner and its npm package.
//
// kernels.wasm is the one built file the repository commits, so that a Go program that
// depends on this module runs the kernels with no build step of its own. Build pins the Go
// toolchain (go.mod's toolchain line) and the build's flags, so the bytes are reproducible:
// CI rebuilds them and fails when they differ from the committed ones.
package wasm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/kernels"
)

// module is kernels.wasm as committed (wasm/kernels.wasm), refreshed by `go tool task wasm`.
//
//go:embed kernels.wasm
var module []byte

// Package holds the committed sources of the npm package @wasmgap/kernels (wasm/package:
// index.mjs, index.d.ts, package.json, README.md), which `go run ./build -package DIR`
// completes with kernels.wasm and the catalogue.
//
//go:embed package
var Package embed.FS

// ModulePath is where kernels.wasm lies, relative to the repository root: committed, and
// rewritten by `go tool task wasm`.
const ModulePath = "wasm/kernels.wasm"

// BatchSuffix names a kernel's batch export in kernels.wasm: <export>_batch takes the
// kernel's arguments and reps, calls the kernel reps times inside the module and returns
// the sum of the values (docs/EMBEDDING.md).
const BatchSuffix = "_batch"

// legacyPrefix is what the loop tests' exports were called before they took their
// catalogue names: loop_test1 for test1.
const legacyPrefix = "loop_"

// LegacyExport returns the former name of k's export that kernels.wasm keeps as an alias
// for one release ("loop_test1" for test1, whose export is now "test1"), or "" when k has
// none. The alias has k's type and computes the same; so does its batch export
// (LegacyExport(k) + BatchSuffix).
func LegacyExport(k *kernels.Kernel) string {
	if k.Group != kernels.GroupLoops {
		return ""
	}
	return legacyPrefix + k.Export
}

// SourceDir is the folder of the module's Go source, relative to the repository root.
const SourceDir = "wasm/module"

// Embedded returns kernels.wasm as committed and built into this binary. The bytes are
// shared: do not modify them. The error is for a checkout whose wasm/kernels.wasm is not
// a WebAssembly module (a Git LFS pointer, a conflict).
func Embedded() ([]byte, error) { return checkMagic(module) }

// checkMagic returns b, or an error when b does not start as a WebAssembly module does.
func checkMagic(b []byte) ([]byte, error) {
	if !bytes.HasPrefix(b, []byte("\x00asm")) {
		return nil, fmt.Errorf("%s is not a WebAssembly module (%d bytes): restore it with `git checkout %s` or rebuild it with `go tool task wasm`", ModulePath, len(b), ModulePath)
	}
	return b, nil
}

// CheckBuilt compares built, a fresh build of the module's source, with the committed
// bytes (Embedded), and says how to refresh them when they differ.
func CheckBuilt(built []byte) error {
	return compareBuilt(module, built)
}

func compareBuilt(committed, built []byte) error {
	if bytes.Equal(committed, built) {
		return nil
	}
	return fmt.Errorf("%s (%d bytes, sha256 %x) differs from a build of %s (%d bytes, sha256 %x): "+
		"run `go tool task wasm` and commit %s", ModulePath, len(committed), sha256.Sum256(committed),
		SourceDir, len(built), sha256.Sum256(built), ModulePath)
}

// BuildArgs are the arguments of the go command that builds the module from SourceDir,
// with GOOS=wasip1 GOARCH=wasm: a WASI preview1 reactor (-buildmode=c-shared) whose
// bytes do not depend on where the checkout lies (-trimpath) nor on its commit
// (-buildvcs=false: no revision stamped in).
func BuildArgs(out string) []string {
	return []string{"build", "-buildmode=c-shared", "-trimpath", "-buildvcs=false", "-o", out, "."}
}

// BuildEnv is what Build sets in the go command's environment, over the caller's: the
// target, GOFLAGS and GOWASM cleared of the caller's settings, and GOTOOLCHAIN set to
// toolchain (go.mod's toolchain line, e.g. "go1.26.8") unless it is "", so that every
// machine builds the same bytes; the go command fetches that toolchain from the module
// proxy when it is not the one installed.
func BuildEnv(toolchain string) []string {
	env := []string{"GOOS=wasip1", "GOARCH=wasm", "GOFLAGS=-mod=readonly", "GOWASM=", "CGO_ENABLED=0"}
	if toolchain != "" {
		env = append(env, "GOTOOLCHAIN="+toolchain)
	}
	return env
}

// Toolchain returns the Go toolchain that builds kernels.wasm: the toolchain line of the
// go.mod at or above dir ("go1.26.8"), or "" (the installed go command) when it has none.
func Toolchain(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			return goModToolchain(f, filepath.Join(dir, "go.mod"))
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("read go.mod: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// goModToolchain reads the toolchain line of a go.mod, or "" when it has none.
func goModToolchain(r io.Reader, name string) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "toolchain" {
			return fields[1], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return "", nil
}

// Build compiles the module's source in sourceDir (the repository's wasm/module) into out,
// with BuildArgs and BuildEnv under the toolchain go.mod pins (Toolchain). It runs the go
// command on PATH; the error carries the compiler's output.
func Build(ctx context.Context, sourceDir, out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("build kernels.wasm: the go command is not on PATH: %w", err)
	}
	if out, err = filepath.Abs(out); err != nil {
		return fmt.Errorf("build kernels.wasm: %w", err)
	}
	toolchain, err := Toolchain(sourceDir)
	if err != nil {
		return fmt.Errorf("build kernels.wasm: %w", err)
	}
	env := BuildEnv(toolchain)
	// Through childproc, as every child of this module: the go command and its compilers
	// in a group of their own, killed whole with ctx, and dying with this process.
	cmd := childproc.Command(ctx, goBin, BuildArgs(out)...)
	cmd.Dir = sourceDir
	cmd.Env = append(os.Environ(), env...)
	if msg, err := childproc.CombinedOutput(cmd); err != nil {
		return fmt.Errorf("build kernels.wasm (%s go %s in %s): %w\n%s", strings.Join(env, " "), strings.Join(BuildArgs(out), " "), sourceDir, err, msg)
	}
	return nil
}
