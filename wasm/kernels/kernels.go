// Package kernels runs kernels.wasm, wasmgap's kernels compiled by Go to a WASI reactor,
// under wazero from any Go program, with no build step: the module's bytes are committed
// with its source (wasm/kernels.wasm, package wasm) and embedded in this package, and each
// kernel is a typed method.
//
//	k, err := kernels.Load(ctx, kernels.Options{})
//	if err != nil {
//		return err
//	}
//	defer k.Close(ctx)
//	v, err := k.FibRec(30) // 832040
//
// The package shares its name with the kernel catalogue (github.com/wasmgap/wasmgap/kernels:
// parameters, ranges, expected values); a program that uses both renames one on import.
//
// # One call at a time
//
// An Instance runs one call at a time: the Go runtime inside the module is single-threaded
// and not re-entrant, so calls from several goroutines wait for each other. For parallel
// calls, Load one Instance per goroutine: they share the compiled code (compiled once per
// process and mode), so another Instance costs an instantiation, a few milliseconds.
//
// # Failures
//
// Arguments outside a kernel's range (the catalogue's, e.g. fib_rec's n in 0..92) are
// refused before the call with a *kernels.ArgError of the catalogue package. A call that
// traps returns an error wrapping ErrStackOverflow (deep recursion: ack(3, 10) on wazero's
// interpreter, which stops at about 2,000 frames) or ErrOutOfMemory (the module's memory is
// capped at 1 GiB), with what the module's Go runtime printed; the Instance then replaces
// its trapped module instance, whose state is unknown, so the next call runs on a fresh one.
//
// A call is not interrupted: wazero's cancellation checks cost 7–12x on Go-built wasm. A
// program that needs a time limit runs the kernels in a process it can kill.
package kernels

import (
	"context"
	"fmt"
	"sync"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/wazero"
	catalogue "github.com/wasmgap/wasmgap/kernels"
)

// ErrStackOverflow is wrapped by the error of a call that ran out of stack: wazero's call
// stack limit, or the module's Go runtime's own goroutine stack limit.
var ErrStackOverflow = engine.ErrStackOverflow

// ErrOutOfMemory is wrapped by the error of a call that needed more than the module's
// memory cap, 1 GiB.
var ErrOutOfMemory = wazero.ErrOutOfMemory

// Options say how to run the module. The zero value compiles it to machine code with
// wazero's optimizing compiler, in every process anew.
type Options struct {
	// Interpreter runs the module on wazero's interpreter instead of its compiler: it
	// starts in a fraction of the compiler's time and runs calls about 100 times slower,
	// and its call stack stops at about 2,000 frames.
	Interpreter bool
	// CacheDir, when not "", keeps the compiler's machine code in this directory across
	// processes (wazero.NewCompilationCacheWithDir): a later process loads it in about a
	// tenth of the time a compilation takes. Each build of kernels.wasm adds an entry of
	// about 8 MB. The interpreter does not use it.
	CacheDir string
}

// Instance is one instance of kernels.wasm. Its methods run one call at a time (see the
// package documentation); Close releases it.
type Instance struct {
	mu  sync.Mutex
	eng *wazero.Engine
}

// Load compiles kernels.wasm (or takes this process's earlier compilation for the same
// Options) and instantiates it, running its _initialize export once.
func Load(ctx context.Context, opts Options) (*Instance, error) {
	eng := wazero.New(wazero.Options{Interpreter: opts.Interpreter, CacheDir: opts.CacheDir, NoCache: opts.CacheDir == ""})
	if _, err := eng.Load(ctx); err != nil {
		return nil, fmt.Errorf("load kernels.wasm: %w", err)
	}
	return &Instance{eng: eng}, nil
}

// Close releases the instance; the compiled code stays with the process for the next Load.
// Calls after Close return an error.
func (i *Instance) Close(ctx context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.eng.Close(ctx)
}

// Call runs the kernel the catalogue names name ("fib_rec", "test1"; kernels.Names of the
// catalogue package lists them) with args in the order of its parameters, and returns its
// result. An unknown name or arguments outside the kernel's ranges are an error that says
// what is allowed; the kernel is not called.
func (i *Instance) Call(name string, args ...int) (int64, error) {
	k, err := catalogue.Lookup(name)
	if err != nil {
		return 0, err
	}
	if err := k.Check(args); err != nil {
		return 0, err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.eng.Run(context.Background(), k, args)
}

// FibIt returns the n-th Fibonacci number computed with a loop (n in 0..92).
func (i *Instance) FibIt(n int) (int64, error) { return i.Call("fib_it", n) }

// FibRec returns the n-th Fibonacci number computed by naive double recursion, as the
// articles do: 1 for n < 3 (n in 0..92; fib_rec(40) takes seconds).
func (i *Instance) FibRec(n int) (int64, error) { return i.Call("fib_rec", n) }

// Ack returns Ackermann's function A(n, m) computed by double recursion (n in 0..3, m in
// 0..20); ack(3, m) recurses about 2^(m+3) calls deep.
func (i *Instance) Ack(n, m int) (int64, error) { return i.Call("ack", n, m) }

// AckWhile returns Ackermann's function A(n, m) with the outer recursion as a loop (n in
// 0..3, m in 0..20).
func (i *Instance) AckWhile(n, m int) (int64, error) { return i.Call("ack_while", n, m) }

// The loop tests fill a big array with i*2 for i from 0 and a small one with i*2 for i
// from 20,000 (big in 1..1,000,000, small in 1..100,000, the articles' sizes 50,000 and
// 1,000), and return a checksum of the matches they found: the sum of the matched values.

// Test1 runs the articles' test1: foreach big (foreach small), comparing boxed values (PHP's
// loose ==).
func (i *Instance) Test1(big, small int) (int64, error) { return i.Call("test1", big, small) }

// Test1b runs test1b: test1 on typed int64 values (PHP's strict ===).
func (i *Instance) Test1b(big, small int) (int64, error) { return i.Call("test1b", big, small) }

// Test2 runs test2: foreach small (foreach big).
func (i *Instance) Test2(big, small int) (int64, error) { return i.Call("test2", big, small) }

// Test3 runs test3: foreach big (foreach small) with key lookup.
func (i *Instance) Test3(big, small int) (int64, error) { return i.Call("test3", big, small) }

// Test4 runs test4: foreach small (foreach big) with key lookup.
func (i *Instance) Test4(big, small int) (int64, error) { return i.Call("test4", big, small) }

// Test5 runs test5: for big (for small), count() outside the loops.
func (i *Instance) Test5(big, small int) (int64, error) { return i.Call("test5", big, small) }

// Test6 runs test6: for small (for big), count() outside the loops.
func (i *Instance) Test6(big, small int) (int64, error) { return i.Call("test6", big, small) }

// Test7 runs test7 over an array of large elements (1..10,000,000; the articles' size
// 1,000,000): foreach by reference, $val++. It returns large².
func (i *Instance) Test7(large int) (int64, error) { return i.Call("test7", large) }

// Test8 runs test8: for over large elements with count() in the condition,
// $array[$key]++. It returns large².
func (i *Instance) Test8(large int) (int64, error) { return i.Call("test8", large) }

// Test8b runs test8b: test8 with count() outside the loop. It returns large².
func (i *Instance) Test8b(large int) (int64, error) { return i.Call("test8b", large) }
