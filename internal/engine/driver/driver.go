// Package driver runs engines whose calls are served by another program, a driver: the
// articles' languages (package internal/engine/external), kernels.wasm on Node, the Go kernels built
// by gccgo (package internal/engine/gccgo) and a user's kernel built natively (package custom). Every
// driver speaks the one line protocol below, and times its calls itself, so that a call's
// time is the kernel's and not the pipe's round trip. Command starts a driver process and
// waits for it to be ready; Process.Call asks it for one timed batch of calls; Engine puts a
// driver behind the engine.Engine contract; Prepare builds a driver's files once into a
// cache directory; package driver/goserve is the protocol's server for drivers written in Go.
//
// # The line protocol
//
// The driver reads requests from stdin and writes answers to stdout, one line each, in
// ASCII, fields separated by one space. Once loaded, before reading anything, it writes
//
//	ready <language> <runtime version...>
//
// e.g. "ready c gcc 12.2.0" or "ready php PHP 8.2.36 (opcache on, JIT tracing)". Then, for each request
//
//	<kernel> <reps> <arg1> [<arg2>]
//
// e.g. "fib_rec 1 25" or "fib_it 100000 40", it calls the kernel reps times (1 to 10^9) with
// the arguments, and answers
//
//	ok <first> <sum> <elapsed>
//
// where first is the value of the first call, sum the sum of all reps values wrapped to
// int64 (so that no compiler or JIT can drop a call whose value is unused, and so that
// every call's value is checked: sum = reps × first), and elapsed the nanoseconds all reps
// took, measured inside the driver with its monotonic clock (so a caller gets time per call
// as elapsed/reps, free of the pipe's round trip). Or it answers
//
//	error <message>
//
// for an unknown kernel, a malformed request, an argument outside the catalogue's range
// (which every driver checks on its own), or a failure the language lets the driver catch:
// a stack overflow ("error stack overflow: ..."; C catches SIGSEGV on an alternate stack,
// Java StackOverflowError, Node RangeError) or a PHP fatal error ("error fatal: ...", after
// which the PHP driver exits). The node-wasm driver (NodeWasm: kernels.wasm on Node's V8)
// exits after answering a failed call too, as an exception leaves the module's Go runtime
// unusable, and so does a Go driver whose runtime gave up. Otherwise a driver stays usable after an error answer. It exits
// when stdin closes. A failure the driver cannot catch ends it (a wasm trap, a signal): Call
// then returns ErrExited, with ErrStackOverflow too for a SIGSEGV or wazero's stack trap.
//
// The protocol serves a harness that checks every value and times one call per sample
// (reps = 1), and one that calibrates samples (reps = k, time per call = elapsed / k). A
// driver may also serve the per-call mode of the warm-up's series, "times <kernel>
// <samples> <group> <args>" (see CallTimes); one that does not answers it with an error.
package driver

import (
	"errors"
	"time"
)

var (
	// ErrNotInstalled is returned by Start when a program the peer needs is missing; the
	// error's message names the Debian packages that provide it.
	ErrNotInstalled = errors.New("not installed")
	// ErrStackOverflow is returned by Call when the kernel exhausted the driver's stack.
	ErrStackOverflow = errors.New("stack overflow")
	// ErrExited is returned by Call when the driver process has exited: killed, crashed,
	// timed out (the context's deadline kills it) or closed.
	ErrExited = errors.New("driver exited")
)

// Setup is what starting a driver cost, each phase apart.
type Setup struct {
	// Build is the time the compiler took (gcc, clang, javac); zero when the driver came
	// from the cache, or when the driver has nothing to build (node-js, php).
	Build time.Duration `json:"build"`
	// Cached reports that the driver came from the cache.
	Cached bool `json:"cached"`
	// Compile is the time wazero took to compile the .wasm module to machine code (c-wasm
	// only; short when wazero's compilation cache had it).
	Compile time.Duration `json:"compile"`
	// Start is the time from starting the driver (instantiating the module, for c-wasm)
	// to its ready line: the runtime's own start-up.
	Start time.Duration `json:"start"`
}

// Result is a driver's answer to one Call.
type Result struct {
	// First is the value of the first call.
	First int64 `json:"first"`
	// Sum is the sum of every call's value, wrapped to int64: reps × First when every call
	// returned the same value.
	Sum int64 `json:"sum"`
	// Elapsed is the time all reps calls took, measured inside the driver.
	Elapsed time.Duration `json:"elapsed"`
}

// DriverError is a driver's "error" answer: the call failed, and the driver is still usable.
type DriverError struct {
	// Peer is the driver's name.
	Peer string
	// Message is the driver's message, after "error ".
	Message string
}

// Error returns the peer's name and the driver's message.
func (e *DriverError) Error() string { return e.Peer + ": " + e.Message }

// Unwrap returns ErrStackOverflow when the driver reported one.
func (e *DriverError) Unwrap() error {
	if len(e.Message) >= len("stack overflow") && e.Message[:len("stack overflow")] == "stack overflow" {
		return ErrStackOverflow
	}
	return nil
}
