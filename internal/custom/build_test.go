package custom

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

// testBuilder is one builder for the package's tests, with its builds in a temporary
// folder and the shared warm Go cache.
var (
	testBuilderOnce sync.Once
	testBuilderVal  *Builder
)

func testBuilder(t *testing.T) *Builder {
	t.Helper()
	testBuilderOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wasmgap-custom-test-")
		if err != nil {
			t.Fatal(err)
		}
		testBuilderVal = NewBuilder(Options{Dir: dir, GoCache: testGoCache})
	})
	return testBuilderVal
}

func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	b := testBuilder(t)
	ctx := context.Background()
	k, err := b.Build(ctx, []byte(sieve))
	if err != nil {
		t.Fatal(err)
	}
	if k.Cached || k.Func.Name != "Primes" || k.ID != ID([]byte(sieve)) {
		t.Errorf("Build = %+v", k)
	}
	wasm, err := os.ReadFile(k.ModulePath())
	if err != nil || len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		t.Fatalf("module: %v (%d bytes)", err, len(wasm))
	}
	again, err := b.Build(ctx, []byte(sieve))
	if err != nil || !again.Cached || again.Dir != k.Dir {
		t.Errorf("second Build = %+v, %v: want the cached build", again, err)
	}
	got, err := b.Lookup(k.ID)
	if err != nil || got.Func.Name != "Primes" {
		t.Errorf("Lookup = %+v, %v", got, err)
	}
}

func TestBuildCompilerError(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	b := testBuilder(t)
	src := "package kernel\n\nfunc F(n int) int64 {\n\tx := 1\n\treturn int64(n) + y\n}\n"
	_, err := b.Build(context.Background(), []byte(src))
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Build = %v, want Errors", err)
	}
	var lines []int
	for _, e := range errs {
		lines = append(lines, e.Line)
	}
	if errs[0].Line != 4 || !strings.Contains(err.Error(), "declared and not used: x") || !strings.Contains(err.Error(), "5:20: undefined: y") {
		t.Errorf("Build = %v (lines %v)", err, lines)
	}
	// The refusal is cached too.
	if _, err2 := b.Build(context.Background(), []byte(src)); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second Build = %v", err2)
	}
}

func TestLookupUnknown(t *testing.T) {
	b := NewBuilder(Options{Dir: t.TempDir()})
	for _, id := range []string{"fib_rec", "custom-../../etc", ID([]byte("x"))} {
		if _, err := b.Lookup(id); err == nil || !strings.Contains(err.Error(), "unknown kernel") {
			t.Errorf("Lookup(%q) = %v", id, err)
		}
	}
}
