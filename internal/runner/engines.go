package runner

// The worker offers every engine: importing them here registers them with package engine
// (see its package comment), for the worker and for every program that starts workers.
import (
	_ "github.com/wasmgap/wasmgap/internal/engine/browser"
	_ "github.com/wasmgap/wasmgap/internal/engine/external"
	_ "github.com/wasmgap/wasmgap/internal/engine/gccgo"
	_ "github.com/wasmgap/wasmgap/internal/engine/wazero"
	_ "github.com/wasmgap/wasmgap/internal/engine/yaegi"
	_ "github.com/wasmgap/wasmgap/native"
)
