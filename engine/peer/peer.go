// Package peer registers the articles' other languages as engines: the kernels in C
// compiled natively (c), the same C compiled to wasm32-wasi and run by wazero (c-wasm),
// Java (java), JavaScript on Node (node-js), and PHP without and with its JIT (php,
// php-jit). Each is a driver process of package native/peers, started by Load and kept for
// the engine's calls; a runtime that is not installed makes Load fail with the packages to
// install ("php not installed: apt-get install php-cli"), which the harness reports as the
// cell's result.
//
// Importing the package registers the six engines; package runner imports it so that its
// workers offer them.
package peer

import (
	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/native/peers"
)

// Ranks of the peers among the engines (package engine's registry lists engines by rank):
// after the Go tiers and the other WebAssembly engines, compiled languages first.
const (
	RankC = 100 + 10*iota
	RankCWasm
	RankJava
	RankNodeJS
	RankPHPJIT
	RankPHP
)

func init() {
	for _, p := range []struct {
		name string
		rank int
	}{
		{peers.C, RankC},
		{peers.CWasm, RankCWasm},
		{peers.Java, RankJava},
		{peers.NodeJS, RankNodeJS},
		{peers.PHPJIT, RankPHPJIT},
		{peers.PHP, RankPHP},
	} {
		engine.Register(p.name, p.rank, func() engine.Engine { return New(p.name) })
	}
}

// New returns the named peer as an engine, its drivers built in the default cache
// directory (peers.DefaultCacheDir). The name is one of peers.Names().
func New(name string) *peers.Engine { return peers.NewEngine(name, peers.Options{}) }
