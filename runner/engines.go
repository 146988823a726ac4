package runner

// The worker offers every engine: importing them here registers them with package engine
// (see its package comment), for the worker and for every program that starts workers.
import (
	_ "github.com/wasmgap/wasmgap/engine/browser"
	_ "github.com/wasmgap/wasmgap/engine/nodewasm"
	_ "github.com/wasmgap/wasmgap/engine/peer"
	_ "github.com/wasmgap/wasmgap/engine/wazero"
	_ "github.com/wasmgap/wasmgap/engine/yaegi"
	_ "github.com/wasmgap/wasmgap/native"
)
