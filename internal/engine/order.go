package engine

import (
	"fmt"
	"slices"
)

// Names of the engines, as the CLI, the API, the page and the reports spell them. Each is
// written here once: an engine package registers under one of these (its own Name
// constants are these), and Order places each in its group.
const (
	// Go's own tiers.
	Native            = "native"
	WazeroCompiler    = "wazero-compiler"
	WazeroCompilerOpt = "wazero-compiler-opt" // kernels.wasm after wasm-opt -O3
	WazeroInterpreter = "wazero-interpreter"
	Yaegi             = "yaegi"
	GCCGo             = "gccgo"

	// kernels.wasm, the Go kernels compiled to WebAssembly, on the other WebAssembly
	// engines. BrowserWasm runs in the page (Page); the others on the server.
	BrowserWasm      = "browser-wasm"
	NodeWasm         = "node-wasm"
	NodeWasmOpt      = "node-wasm-opt" // kernels.wasm after wasm-opt -O3
	NodeWasmTurbofan = "node-wasm-turbofan"
	NodeWasmLiftoff  = "node-wasm-liftoff"
	Wasmtime         = "wasmtime"
	ChromiumWasm     = "chromium-wasm"
	FirefoxWasm      = "firefox-wasm"

	// The articles' other languages, and their JIT-off twins. BrowserJS runs in the page.
	C             = "c"
	CWasm         = "c-wasm"
	Java          = "java"
	JavaInt       = "java-int"
	NodeJS        = "node-js"
	BrowserJS     = "browser-js"
	ChromiumJS    = "chromium-js"
	FirefoxJS     = "firefox-js"
	NodeJSJitless = "node-js-jitless"
	LuaJIT        = "luajit"
	PyPy          = "pypy"
	PHPJIT        = "php-jit"
	PHP           = "php"
	LuaJITInterp  = "luajit-interp"
	Lua           = "lua"
	Python        = "python"
)

// Grouping is one group of engines and its engines, in the order the page and the reports
// show them.
type Grouping struct {
	// Group is GroupGo, GroupWasm, GroupBrowsers or GroupOther.
	Group string
	// Engines are the group's engine names, in order.
	Engines []string
}

// Order is the one place the engines' order and grouping are declared: the groups in the
// order the page shows them, each with its engines, the baseline first, then within a
// group roughly from the fastest to the slowest, a JIT before its interpreter. A
// registration (Describe) and a page engine (Page) name their place by their name alone:
// their Info's Group and Rank come from here. A new engine adds its name above and one
// line here, where it belongs; a registration whose name has no place here panics.
var Order = []Grouping{
	{GroupGo, []string{Native, WazeroCompiler, WazeroCompilerOpt, WazeroInterpreter, Yaegi, GCCGo}},
	{GroupWasm, []string{BrowserWasm, NodeWasm, NodeWasmOpt, NodeWasmTurbofan, NodeWasmLiftoff, Wasmtime}},
	{GroupBrowsers, []string{ChromiumWasm, FirefoxWasm, ChromiumJS, FirefoxJS}},
	{GroupOther, []string{C, CWasm, Java, JavaInt, NodeJS, BrowserJS, NodeJSJitless,
		LuaJIT, PyPy, PHPJIT, PHP, LuaJITInterp, Lua, Python}},
}

// place returns the group and the rank (1 for the first engine of Order, counting on
// across the groups) of the named engine, or false when Order does not list it.
func place(name string) (group string, rank int, ok bool) {
	for _, g := range Order {
		if i := slices.Index(g.Engines, name); i >= 0 {
			return g.Group, rank + i + 1, true
		}
		rank += len(g.Engines)
	}
	return "", 0, false
}

// placed returns info with its Group and Rank taken from Order. It panics, as a
// programming error, when the name has no place there or info sets either field itself.
func placed(info Info) Info {
	group, rank, ok := place(info.Name)
	if !ok {
		panic(fmt.Sprintf("engine: %s has no place in engine.Order: add it there, in its group", info.Name))
	}
	if info.Group != "" || info.Rank != 0 {
		panic(fmt.Sprintf("engine: %s sets its Group or Rank: engine.Order places it", info.Name))
	}
	info.Group, info.Rank = group, rank
	return info
}
