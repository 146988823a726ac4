// Package external runs the articles' kernels in the articles' other languages, and the Go
// module kernels.wasm on Node, each as one driver process of package internal/engine/driver, kept
// alive across calls and speaking its line protocol: C compiled natively (gcc -O2), the same
// C compiled to wasm32-wasi by clang and run by wazero, Java on HotSpot with its JIT and
// interpreted (-Xint), JavaScript on Node with V8's JIT and without (--jitless), PHP without
// and with its JIT, Python on CPython and on PyPy, Lua on Lua 5.4, on LuaJIT and on LuaJIT's
// interpreter (-joff), and kernels.wasm on V8's tiers (node-wasm: Liftoff then TurboFan;
// node-wasm-liftoff: Liftoff alone; node-wasm-turbofan: TurboFan alone; node-wasm-opt: V8's
// default on kernels.wasm after binaryen's wasm-opt -O3). Start builds what
// needs building (cached by source hash), starts the driver and waits for it to be ready.
//
// The kernels in c/, java/, js/, php/, python/ and lua/ follow kernels/recursion.go and
// kernels/loops.go, and return the values kernels.Kernel.Expected computes, or refuse a call
// whose value the language cannot hold exactly (LuaJIT's and JavaScript's doubles past 2^53).
//
// Importing the package registers every engine it runs (engine.Describe), installed or not:
// a missing runtime makes Load fail with the packages to install.
package external

import (
	"io"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/driver"
)

// The engines' names: the language, and how it runs where that differs (package engine
// spells each once, and its Order places them).
const (
	C             = engine.C
	CWasm         = engine.CWasm
	Java          = engine.Java
	JavaInt       = engine.JavaInt
	NodeJS        = engine.NodeJS
	NodeJSJitless = engine.NodeJSJitless
	PHP           = engine.PHP
	PHPJIT        = engine.PHPJIT
	Python        = engine.Python
	PyPy          = engine.PyPy
	Lua           = engine.Lua
	LuaJIT        = engine.LuaJIT
	LuaJITInterp  = engine.LuaJITInterp
	// NodeWasm and its tiers run kernels.wasm, the Go kernels compiled to WebAssembly
	// (package wasm), on Node's V8 through node:wasi: not a language but the Go module on
	// one more engine, started and called as the peers are.
	NodeWasm         = engine.NodeWasm
	NodeWasmOpt      = engine.NodeWasmOpt
	NodeWasmLiftoff  = engine.NodeWasmLiftoff
	NodeWasmTurbofan = engine.NodeWasmTurbofan
)

// cacheNS is the cache directory's path under os.UserCacheDir.
const cacheNS = "wasmgap/peers"

// Names returns the names of every peer (the languages), installed or not; NodeWasms lists
// the others.
func Names() []string {
	return []string{C, CWasm, Java, JavaInt, NodeJS, NodeJSJitless, PHP, PHPJIT, Python, PyPy, Lua, LuaJIT, LuaJITInterp}
}

// NodeWasms returns the names of the engines that run kernels.wasm on Node.
func NodeWasms() []string { return []string{NodeWasm, NodeWasmOpt, NodeWasmLiftoff, NodeWasmTurbofan} }

// The driver's types and errors, under the names this package has always given them.
type (
	// Process is a running driver.
	Process = driver.Process
	// Setup is what starting a driver cost.
	Setup = driver.Setup
	// Result is a driver's answer to one call.
	Result = driver.Result
	// DriverError is a driver's "error" answer.
	DriverError = driver.DriverError
)

var (
	// ErrNotInstalled is returned by Start when a program the peer needs is missing; the
	// error's message names the Debian packages that provide it.
	ErrNotInstalled = driver.ErrNotInstalled
	// ErrStackOverflow is returned by Call when the kernel exhausted the driver's stack.
	ErrStackOverflow = driver.ErrStackOverflow
	// ErrExited is returned by Call when the driver process has exited.
	ErrExited = driver.ErrExited
)

// MaxReps is the largest number of calls one Call may ask for.
const MaxReps = driver.MaxReps

// Options configures Start. The zero value is ready to use.
type Options struct {
	// CacheDir holds the built drivers (C binaries, the .wasm module and wazero's compiled
	// code, Java classes), each under a name derived from its source's hash, so that a
	// driver is built once. Empty means os.UserCacheDir()/wasmgap/peers, or a temporary
	// directory removed by Close when the user has no cache directory.
	CacheDir string
	// Commands replaces the programs the peers run, by their usual names: "gcc", "clang",
	// "javac", "java", "node", "php", "python3", "pypy3", "lua5.4", "luajit". A value is a
	// path or a name looked up in PATH.
	Commands map[string]string
	// InterruptibleWasm (c-wasm only) builds the module with wazero's checks that let a
	// cancelled context stop a running call (wazero.RuntimeConfig.WithCloseOnContextDone).
	// They cost about 10x on call-heavy kernels (fib_rec), so they are off by default, as in
	// the repository's other wazero engines: then a c-wasm call that outlives its context
	// runs on in its goroutine until it returns, and only ending the process stops it.
	InterruptibleWasm bool
	// Module (node-wasm only) is the kernels.wasm to run; nil means the one built into this
	// binary (package wasm).
	Module []byte
	// Stderr receives what the driver writes to its standard error. Nil keeps only its
	// last few kilobytes, quoted in the error when the driver dies.
	Stderr io.Writer
	// RuntimeArgs are given to the runtime before the driver's own arguments, and Env,
	// when not nil, is the driver's whole environment: how package explain asks a
	// runtime to print the code it compiled (HotSpot's print, LuaJIT's -jdump).
	RuntimeArgs, Env []string
	// Stdout (node-wasm only) receives what the runtime prints on its stdout (V8's
	// --print-wasm-code), the driver answering on a pipe of its own (driver.Built.Stdout).
	Stdout io.Writer
}

// DefaultCacheDir returns the directory Options.CacheDir defaults to,
// os.UserCacheDir()/wasmgap/peers, or "" when the user has no cache directory.
func DefaultCacheDir() string { return driver.DefaultCacheDir(cacheNS) }
