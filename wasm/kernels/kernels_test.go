package kernels_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wasmgap/wasmgap/wasm/kernels"
)

// Calls from several goroutines on one instance wait for each other and all return the
// right value.
func TestConcurrentCalls(t *testing.T) {
	ctx := context.Background()
	k, err := kernels.Load(ctx, kernels.Options{Interpreter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if v, err := k.FibIt(90); err != nil || v != 2880067194370816120 {
					errs <- fmt.Errorf("fib_it(90) = %d, %v", v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A closed instance refuses calls; a bad argument is refused before any call.
func TestClosedAndBadArguments(t *testing.T) {
	ctx := context.Background()
	k, err := kernels.Load(ctx, kernels.Options{Interpreter: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []int
		want string
	}{
		{"fib_rec", []int{-1}, "out of range"},
		{"ack", []int{3}, "takes 2 arguments"},
		{"loop_test1", []int{1, 1}, "unknown kernel"},
	} {
		if _, err := k.Call(c.name, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Call(%s, %v) = %v, want an error saying %q", c.name, c.args, err, c.want)
		}
	}
	if err := k.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := k.FibIt(10); err == nil || !strings.Contains(err.Error(), "after Close") {
		t.Errorf("FibIt after Close: %v, want an error", err)
	}
}

// The Go programs of docs/EMBEDDING.md (its go blocks that start with "package main"), in
// the page's order, and what each prints.
var embeddingPrograms = []string{
	"fib_rec(30) = 832040", // package wasm/kernels
	"ack(3, 5) = 253",      // wazero alone, reading wasm/kernels.wasm
}

// Each Go program of docs/EMBEDDING.md builds in a module of its own, which requires this
// one through a replace pointing at a fresh copy of the repository's tracked files (what a
// clone holds, with no build step run in it), and prints what the page says when run from
// the repository's root. The first calls the kernels through this package. It runs
// offline: the dependencies come from the module cache.
func TestFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the repository and builds programs")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "EMBEDDING.md"))
	if err != nil {
		t.Fatal(err)
	}
	var programs []string
	for _, block := range strings.Split(string(doc), "```go\n")[1:] {
		if code, _, ok := strings.Cut(block, "```"); ok && strings.HasPrefix(code, "package main\n") {
			programs = append(programs, code)
		}
	}
	if len(programs) != len(embeddingPrograms) {
		t.Fatalf("docs/EMBEDDING.md has %d Go programs, the test knows the output of %d", len(programs), len(embeddingPrograms))
	}
	files, err := exec.Command(git, "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "wasmgap")
	for _, name := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(clone, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for i, program := range programs {
		user := t.TempDir()
		for name, text := range map[string]string{
			"go.sum":  string(sum),
			"go.mod":  "module example.com/user\n\ngo 1.26.4\n\nrequire github.com/wasmgap/wasmgap v0.0.0\n\nreplace github.com/wasmgap/wasmgap => " + clone + "\n",
			"main.go": program,
		} {
			if err := os.WriteFile(filepath.Join(user, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bin := filepath.Join(user, "program")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = user
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("program %d of docs/EMBEDDING.md: go build in a module that requires this one: %v\n%s", i+1, err, out)
			continue
		}
		cmd = exec.Command(bin)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != embeddingPrograms[i] {
			t.Errorf("program %d of docs/EMBEDDING.md printed %q (%v), want %q", i+1, got, err, embeddingPrograms[i])
		}
	}
}
