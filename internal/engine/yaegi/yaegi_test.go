package yaegi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

var _ engine.Engine = (*Engine)(nil)

// load returns a loaded engine, closed when the test ends.
func load(tb testing.TB) *Engine {
	tb.Helper()
	ctx := context.Background()
	e := New()
	if _, err := e.Load(ctx); err != nil {
		tb.Fatalf("Load: %v", err)
	}
	tb.Cleanup(func() { e.Close(ctx) })
	return e
}

func lookupKernel(tb testing.TB, name string) *kernels.Kernel {
	tb.Helper()
	k, err := kernels.Lookup(name)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// smallArgs are arguments small enough for the interpreter to run every kernel quickly.
// The pair kernels get a big array that reaches the small one (big > 20000), so that
// their checksums are not zero, and one case where the arrays do not meet.
var smallArgs = []struct {
	kernel string
	args   []int
}{
	{"fib_it", []int{0}},
	{"fib_it", []int{1}},
	{"fib_it", []int{50}},
	{"fib_it", []int{92}},
	{"fib_rec", []int{1}},
	{"fib_rec", []int{2}},
	{"fib_rec", []int{15}},
	{"ack_while", []int{0, 0}},
	{"ack_while", []int{1, 5}},
	{"ack_while", []int{2, 3}},
	{"ack_while", []int{3, 3}},
	{"ack", []int{0, 7}},
	{"ack", []int{1, 0}},
	{"ack", []int{2, 3}},
	{"ack", []int{3, 3}},
	{"test1", []int{20010, 20}},
	{"test1", []int{100, 10}},
	{"test1b", []int{20010, 20}},
	{"test2", []int{20010, 20}},
	{"test3", []int{20010, 20}},
	{"test4", []int{20010, 20}},
	{"test5", []int{20010, 20}},
	{"test6", []int{20010, 20}},
	{"test6", []int{1, 1}},
	{"test7", []int{1000}},
	{"test8", []int{1000}},
	{"test8b", []int{1000}},
	{"test8b", []int{1}},
}

func TestRunMatchesExpected(t *testing.T) {
	ctx := context.Background()
	e := load(t)
	covered := map[string]bool{}
	for _, c := range smallArgs {
		k := lookupKernel(t, c.kernel)
		covered[k.Name] = true
		t.Run(k.Label(c.args), func(t *testing.T) {
			if err := k.Check(c.args); err != nil {
				t.Fatalf("test arguments out of range: %v", err)
			}
			got, err := e.Run(ctx, k, c.args)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if want := k.Expected(c.args); got != want {
				t.Fatalf("Run = %d, want %d", got, want)
			}
		})
	}
	for _, k := range kernels.All() { // host_call is not yaegi's: it has no kernels.wasm
		if !covered[k.Name] {
			t.Errorf("kernel %s has no test case", k.Name)
		}
	}
}

func TestLoadReportsSetup(t *testing.T) {
	e := New()
	setup, err := e.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if setup.Compile <= 0 || setup.Instantiate <= 0 {
		t.Errorf("Load setup = %+v, want positive compile and instantiate times", setup)
	}
	if setup.Cached {
		t.Errorf("Load setup says cached: the interpreter has no cache")
	}
}

func TestReloadAfterClose(t *testing.T) {
	ctx := context.Background()
	e := load(t)
	k := lookupKernel(t, "fib_it")
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, k, []int{10}); err == nil || !strings.Contains(err.Error(), "not loaded") {
		t.Fatalf("Run after Close: err = %v, want a not-loaded error", err)
	}
	if _, err := e.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Run(ctx, k, []int{10}); err != nil || got != 55 {
		t.Fatalf("Run after reload = %d, %v; want 55", got, err)
	}
}

func TestRunErrors(t *testing.T) {
	loaded := load(t)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	unknown := *lookupKernel(t, "fib_it")
	unknown.Name = "fib_nope"

	tests := []struct {
		name   string
		engine *Engine
		ctx    context.Context
		kernel *kernels.Kernel
		args   []int
		want   []string // substrings of the error
		is     error
	}{
		{"not loaded", New(), context.Background(), lookupKernel(t, "fib_it"), []int{1}, []string{"fib_it", "call Load first"}, nil},
		{"nil kernel", loaded, context.Background(), nil, []int{1}, []string{"no kernel"}, nil},
		{"unknown kernel", loaded, context.Background(), &unknown, []int{1}, []string{"fib_nope", "valid kernels are fib_it"}, nil},
		{"too few args", loaded, context.Background(), lookupKernel(t, "ack"), []int{1}, []string{"ack(1)", "takes 2 arguments, got 1"}, nil},
		{"too many args", loaded, context.Background(), lookupKernel(t, "fib_rec"), []int{1, 2}, []string{"fib_rec(1, 2)", "takes 1 arguments, got 2"}, nil},
		{"no args", loaded, context.Background(), lookupKernel(t, "test7"), nil, []string{"takes 1 arguments, got 0"}, nil},
		{"canceled", loaded, canceled, lookupKernel(t, "fib_rec"), []int{10}, []string{"fib_rec(10)"}, context.Canceled},
		// A negative size makes the interpreted make() panic: the panic is an error.
		{"interpreter panic", loaded, context.Background(), lookupKernel(t, "test7"), []int{-1}, []string{"test7(-1)", "panic", "negative len", "loops.go:"}, nil},
		{"interpreter panic 2 args", loaded, context.Background(), lookupKernel(t, "test5"), []int{-5, 3}, []string{"test5(-5, 3)", "panic"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.engine.Run(tt.ctx, tt.kernel, tt.args)
			if err == nil {
				t.Fatalf("Run = %d, nil; want an error", got)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
		})
	}

	// The engine keeps working after a panic.
	k := lookupKernel(t, "test7")
	if got, err := loaded.Run(context.Background(), k, []int{10}); err != nil || got != k.Expected([]int{10}) {
		t.Fatalf("Run after a panic = %d, %v; want %d", got, err, k.Expected([]int{10}))
	}
}

func TestPanicErrorNamesPosition(t *testing.T) {
	e := load(t)
	_, err := e.Run(context.Background(), lookupKernel(t, "test8b"), []int{-1})
	if err == nil {
		t.Fatal("Run(test8b(-1)) succeeded, want a panic error")
	}
	// The interpreter reports where the panic happened in the kernel source.
	if !strings.Contains(err.Error(), "loops.go:") {
		t.Errorf("error %q does not name the source position", err)
	}
}

func TestPanicErrorStackOverflow(t *testing.T) {
	e := load(t)
	k := lookupKernel(t, "ack")
	tests := []struct {
		recovered any
		overflow  bool
	}{
		{"runtime: goroutine stack exceeds limit: stack overflow", true},
		{errors.New("Stack Overflow in interpreter"), true},
		{"index out of range [3] with length 3", false},
		{42, false},
	}
	for _, tt := range tests {
		err := e.panicError(k, []int{3, 10}, tt.recovered)
		if got := errors.Is(err, engine.ErrStackOverflow); got != tt.overflow {
			t.Errorf("panicError(%v) = %q: stack overflow = %v, want %v", tt.recovered, err, got, tt.overflow)
		}
		if !strings.Contains(err.Error(), "ack(3, 10)") {
			t.Errorf("panicError(%v) = %q does not name the call", tt.recovered, err)
		}
	}
}
