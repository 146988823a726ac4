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
	"testing/fstest"

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

// A binary built before the module embeds only the placeholder: the error says how to
// build it.
func TestEmbeddedMissing(t *testing.T) {
	if _, err := embedded(fstest.MapFS{"dist/placeholder": {}}); err == nil || !strings.Contains(err.Error(), "go tool task wasm") {
		t.Errorf("missing module: %v, want an error naming `go tool task wasm`", err)
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
