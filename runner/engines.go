package runner

// The worker offers every engine: importing them here registers them with package engine
// (see its package comment), for the worker and for every program that starts workers.
import (
	_ "github.com/wasmgap/wasmgap/engine/browser"
	_ "github.com/wasmgap/wasmgap/engine/external"
	_ "github.com/wasmgap/wasmgap/engine/wazero"
	_ "github.com/wasmgap/wasmgap/engine/yaegi"
	_ "github.com/wasmgap/wasmgap/native"
	_ "github.com/wasmgap/wasmgap/native/gccgo"
)
