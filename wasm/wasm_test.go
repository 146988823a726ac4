package wasm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmgap/wasmgap/internal/engine/enginetest"
	"github.com/wasmgap/wasmgap/kernels"
)

// testModule is kernels.wasm built from this checkout by TestMain with Build, so that the
// tests never depend on `go tool task wasm` having run; testModulePath is where it lies.
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
	if err := Build(context.Background(), "module", testModulePath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if testModule, err = os.ReadFile(testModulePath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// The committed wasm/kernels.wasm is what wasm/module builds to under the pinned
// toolchain: CI fails here (and in .ci/run's check) when someone changed the kernels or
// the module without running `go tool task wasm`.
func TestCommittedModule(t *testing.T) {
	if err := CheckBuilt(testModule); err != nil {
		t.Fatal(err)
	}
	toolchain, err := Toolchain(".")
	if err != nil || !strings.HasPrefix(toolchain, "go1.") {
		t.Fatalf("go.mod's toolchain line: %q, %v; want the toolchain that builds kernels.wasm, e.g. go1.26.8", toolchain, err)
	}
}

// A difference names both hashes and says how to refresh the committed bytes.
func TestCompareBuilt(t *testing.T) {
	if err := compareBuilt([]byte("\x00asm1"), []byte("\x00asm1")); err != nil {
		t.Errorf("equal bytes: %v", err)
	}
	err := compareBuilt([]byte("\x00asm1"), []byte("\x00asm22"))
	if err == nil || !strings.Contains(err.Error(), "run `go tool task wasm` and commit wasm/kernels.wasm") {
		t.Errorf("different bytes: %v, want how to refresh them", err)
	}
}

// A checkout whose wasm/kernels.wasm is not a module (a Git LFS pointer) gets an error that
// says how to restore it.
func TestEmbeddedNotAModule(t *testing.T) {
	if _, err := checkMagic([]byte("version https://git-lfs.github.com/spec/v1\n")); err == nil || !strings.Contains(err.Error(), "git checkout wasm/kernels.wasm") {
		t.Errorf("an LFS pointer: %v, want an error naming git checkout", err)
	}
	if b, err := Embedded(); err != nil || len(b) == 0 {
		t.Errorf("Embedded: %d bytes, %v", len(b), err)
	}
}

func TestGoModToolchain(t *testing.T) {
	for _, c := range []struct{ gomod, want string }{
		{"module m\n\ngo 1.26.4\n\ntoolchain go1.26.8\n", "go1.26.8"},
		{"module m\n\ngo 1.26.4\n", ""},
		{"module m\n// toolchain go1.2 in a comment\n", ""},
	} {
		got, err := goModToolchain(strings.NewReader(c.gomod), "go.mod")
		if err != nil || got != c.want {
			t.Errorf("goModToolchain(%q) = %q, %v; want %q", c.gomod, got, err, c.want)
		}
	}
	env := strings.Join(BuildEnv("go1.26.8"), " ")
	if !strings.Contains(env, "GOTOOLCHAIN=go1.26.8") || !strings.Contains(env, "GOOS=wasip1") {
		t.Errorf("BuildEnv(go1.26.8) = %s", env)
	}
	if env := strings.Join(BuildEnv(""), " "); strings.Contains(env, "GOTOOLCHAIN") {
		t.Errorf("BuildEnv(\"\") = %s: no toolchain pinned, the installed one builds", env)
	}
}

// A build error carries the compiler's output.
func TestBuildError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() { undefined() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Build(context.Background(), dir, filepath.Join(dir, "out.wasm"))
	if err == nil || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("Build of a broken module: %v, want the compiler's message", err)
	}
}

// The Node.js host in wasm/node runs the module with node:wasi and prints the results the
// catalogue expects.
func TestNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	for _, c := range []struct {
		kernel string
		args   []int
	}{
		{"fib_it", []int{92}},
		{"fib_rec", []int{20}},
		{"ack", []int{2, 3}},
		{"test1", []int{20_010, 20}},
		{"test8b", []int{1_000}},
	} {
		k, err := kernels.Lookup(c.kernel)
		if err != nil {
			t.Fatal(err)
		}
		cmdArgs := []string{"node/run.mjs", testModulePath, k.Export}
		for _, a := range c.args {
			cmdArgs = append(cmdArgs, strconv.Itoa(a))
		}
		out, err := exec.Command(node, cmdArgs...).Output()
		if err != nil {
			t.Errorf("node %s: %v", strings.Join(cmdArgs, " "), describe(err))
			continue
		}
		if got, want := strings.TrimSpace(string(out)), strconv.FormatInt(k.Expected(c.args), 10); got != want {
			t.Errorf("node %s printed %q, want %s", strings.Join(cmdArgs, " "), got, want)
		}
	}

	// Bad input is an error with a message, not a crash.
	for _, bad := range [][]string{
		{testModulePath},
		{testModulePath, "nope", "1"},
		{testModulePath, "fib_it"},
		{testModulePath, "fib_it", "x"},
		{filepath.Join(t.TempDir(), "missing.wasm"), "fib_it", "1"},
	} {
		cmd := exec.Command(node, append([]string{"node/run.mjs"}, bad...)...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("node run.mjs %v: succeeded, want an error", bad)
		} else if !strings.Contains(string(out), "run.mjs:") {
			t.Errorf("node run.mjs %v: no error message:\n%s", bad, out)
		}
	}
}

// The browser snippet in docs/EMBEDDING.md (a minimal WASI stub) runs as written, with
// fetch answering from the test's module.
func TestBrowserSnippet(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	doc, err := os.ReadFile("../docs/EMBEDDING.md")
	if err != nil {
		t.Fatal(err)
	}
	_, browser, ok := strings.Cut(string(doc), "\n## A browser\n")
	_, code, ok2 := strings.Cut(browser, "```js\n")
	code, _, ok3 := strings.Cut(code, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/EMBEDDING.md has no js block under \"## A browser\"")
	}
	fetch := `import { readFile } from "node:fs/promises";
const fetch = async (url) => new Response(await readFile(process.argv[2]), { headers: { "content-type": "application/wasm" } });
`
	script := filepath.Join(t.TempDir(), "browser.mjs")
	if err := os.WriteFile(script, []byte(fetch+code), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, script, testModulePath).Output()
	if err != nil {
		t.Fatalf("node %s: %s\n%s", script, describe(err), fetch+code)
	}
	if got := strings.TrimSpace(string(out)); got != "832040n" {
		t.Errorf("the browser snippet printed %q, want 832040n", got)
	}
}

func describe(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Sprintf("%v: %s", err, exit.Stderr)
	}
	return err.Error()
}

// Every kernel's export bears the catalogue's export name with i32 parameters and an i64
// result and returns the catalogue's value; each former loop_ name (LegacyExport) is an
// alias of the same type that returns the same, and so is its batch export.
func TestExports(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	mod, err := r.InstantiateWithConfig(ctx, testModule, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args ...int) (int64, error) {
		fn := mod.ExportedFunction(name)
		if fn == nil {
			return 0, fmt.Errorf("no export %s", name)
		}
		def := fn.Definition()
		if len(def.ParamTypes()) != len(args) || len(def.ResultTypes()) != 1 || def.ResultTypes()[0] != api.ValueTypeI64 {
			return 0, fmt.Errorf("export %s has %d parameters and results %v, want %d i32s and an i64", name, len(def.ParamTypes()), def.ResultTypes(), len(args))
		}
		in := make([]uint64, len(args))
		for i, a := range args {
			if def.ParamTypes()[i] != api.ValueTypeI32 {
				return 0, fmt.Errorf("export %s: parameter %d is not an i32", name, i+1)
			}
			in[i] = api.EncodeI32(int32(a))
		}
		res, err := fn.Call(ctx, in...)
		if err != nil {
			return 0, err
		}
		return int64(res[0]), nil
	}
	aliases := 0
	for _, k := range kernels.Every() {
		// Small enough for wazero's interpreter (the pair loops share one value here).
		args := map[int][]int{1: {100}, 2: {20_002, 2}}[len(k.Params)]
		if k.Group != kernels.GroupLoops {
			small := enginetest.SmallArgs[k.Name]
			args = small[len(small)-1]
		}
		want := k.Expected(args)
		if got, err := call(k.Export, args...); err != nil || got != want {
			t.Errorf("%s%v = %d, %v; want %d", k.Export, args, got, err, want)
		}
		if k.Export != k.Name && !k.HostCall {
			t.Errorf("kernel %s is exported as %s: one name per kernel", k.Name, k.Export)
		}
		legacy := LegacyExport(k)
		if legacy == "" {
			continue
		}
		aliases++
		if got, err := call(legacy, args...); err != nil || got != want {
			t.Errorf("alias %s%v = %d, %v; want %d", legacy, args, got, err, want)
		}
		batchArgs := append(append([]int(nil), args...), 3)
		if got, err := call(legacy+BatchSuffix, batchArgs...); err != nil || got != 3*want {
			t.Errorf("alias %s%v = %d, %v; want %d", legacy+BatchSuffix, batchArgs, got, err, 3*want)
		}
	}
	if aliases != 10 {
		t.Errorf("%d loop_ aliases, want one per loop test (10)", aliases)
	}
}
