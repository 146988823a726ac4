// Package nodewasm registers the node-wasm engine: kernels.wasm, the Go kernels compiled to
// WebAssembly (package wasm), compiled by Node's V8 and run through node:wasi — the server's
// view of what a browser's engine does with the same module, beside wazero's compiler.
//
// The engine is a driver process of package native/peers (native/peers/nodewasm/driver.mjs)
// speaking the peers' line protocol, so that it is started, timed, killed and reported as
// the peers are; without Node, Load fails with "node not installed: apt-get install nodejs".
//
// Importing the package registers the engine; package runner imports it so that its
// workers offer it.
package nodewasm

import (
	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/native/peers"
)

// Name is the engine's name.
const Name = peers.NodeWasm

// Rank places the engine among the engines (package engine's registry lists engines by
// rank): after the Go tiers, first of the other WebAssembly engines.
const Rank = 50

func init() {
	engine.Register(Name, Rank, func() engine.Engine { return New() })
}

// New returns the engine, running the kernels.wasm built into this binary; Load starts
// its driver.
func New() *peers.Engine { return peers.NewEngine(Name, peers.Options{}) }
