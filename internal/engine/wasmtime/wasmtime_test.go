//go:build wasmtime

package wasmtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// load starts an engine with a cache of the test's own, skipping when kernels.wasm is not
// built into the test binary.
func load(t *testing.T, dir string) (*Engine, engine.Setup) {
	t.Helper()
	return loadWith(t, Options{CacheDir: dir})
}

func loadWith(t *testing.T, opts Options) (*Engine, engine.Setup) {
	t.Helper()
	e := New(opts)
	setup, err := e.Load(context.Background())
	if err != nil && strings.Contains(err.Error(), "go tool task wasm") {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e, setup
}

// Small arguments of recursion and loop kernels give the catalogue's values, and a second
// engine loads the compiled module from the cache.
func TestKernels(t *testing.T) {
	dir := t.TempDir()
	e, setup := load(t, dir)
	if setup.Cached || setup.Compile <= 0 {
		t.Errorf("first load: setup %+v, want a compilation", setup)
	}
	for _, c := range []struct {
		kernel string
		args   []int
	}{
		{"fib_it", []int{92}}, {"fib_rec", []int{20}}, {"ack", []int{2, 3}}, {"ack_while", []int{3, 3}},
		{"test1", []int{20_100, 100}}, {"test5", []int{20_100, 100}}, {"test7", []int{1_000}}, {"test8", []int{1_000}},
	} {
		k, err := kernels.Lookup(c.kernel)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.Run(context.Background(), k, c.args)
		if want := k.Expected(c.args); err != nil || v != want {
			t.Errorf("%s = %d, %v; want %d", k.Label(c.args), v, err, want)
		}
	}
	if _, setup := load(t, dir); !setup.Cached {
		t.Errorf("second load: setup %+v, want the module from the cache", setup)
	}
}

// A recursion deeper than the wasm stack allows is engine.ErrStackOverflow: ack(3, 10)
// recurses about 8,000 deep, past a 64 KiB stack.
func TestStackOverflow(t *testing.T) {
	e, _ := loadWith(t, Options{CacheDir: t.TempDir(), MaxWasmStack: 64 << 10})
	k, _ := kernels.Lookup("ack")
	_, err := e.Run(context.Background(), k, []int{3, 10})
	if !errors.Is(err, engine.ErrStackOverflow) {
		t.Errorf("ack(3, 10) on a 64 KiB stack: %v, want engine.ErrStackOverflow", err)
	}
}

func TestRegistered(t *testing.T) {
	if err := engine.Known(Name); err != nil {
		t.Error(err)
	}
}

// The engine names its runtime for the reports' environment: the wasmtime-go module.
func TestVersion(t *testing.T) {
	var v engine.Versioner = New(Options{})
	if got := v.Version(); !strings.HasPrefix(got, "wasmtime-go v39") {
		t.Errorf("Version() = %q, want wasmtime-go v39…", got)
	}
}

// TestRunBatch: one call of the export and one of its batch export give every call's value.
func TestRunBatch(t *testing.T) {
	e := New(Options{CacheDir: t.TempDir()})
	ctx := context.Background()
	if _, err := e.Load(ctx); err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	k, _ := kernels.Lookup("fib_it")
	for _, reps := range []int{1, 2, 7} {
		first, sum, err := e.RunBatch(ctx, k, []int{40}, reps)
		if err != nil || first != 102334155 || sum != int64(reps)*102334155 {
			t.Errorf("RunBatch(fib_it(40), %d) = %d, %d, %v", reps, first, sum, err)
		}
	}
}

// host_call returns the catalogue's value, once and in a batch of host calls (nop has no
// batch export: each call crosses cgo, as an embedder's does).
func TestHostCall(t *testing.T) {
	e := New(Options{CacheDir: t.TempDir()})
	ctx := context.Background()
	if _, err := e.Load(ctx); err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	k, err := kernels.Lookup("host_call")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := e.Run(ctx, k, nil); err != nil || v != kernels.NopValue {
		t.Errorf("Run(host_call()) = %d, %v; want %d", v, err, kernels.NopValue)
	}
	for _, reps := range []int{1, 3} {
		first, sum, err := e.RunBatch(ctx, k, nil, reps)
		if err != nil || first != kernels.NopValue || sum != int64(reps)*kernels.NopValue {
			t.Errorf("RunBatch(host_call(), %d) = %d, %d, %v", reps, first, sum, err)
		}
	}
}
