package peers

import (
	"encoding/json"
	"fmt"

	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// NodeWasm is the driver that runs kernels.wasm, the Go kernels compiled to WebAssembly
// (package wasm), on Node's V8 through node:wasi: not a peer but the Go module on one more
// engine, started and called as the peers are. Names does not list it.
const NodeWasm = "node-wasm"

// catalogueEntry is one kernel as the node-wasm driver reads its catalogue.json.
type catalogueEntry struct {
	Name   string          `json:"name"`
	Export string          `json:"export"`
	Params []kernels.Param `json:"params"`
}

// nodeWasmFiles are the node-wasm driver's files: the driver, the module (Options.Module,
// or the one built into this binary) and the catalogue the driver checks arguments against.
func nodeWasmFiles(opts Options) ([]file, error) {
	module := opts.Module
	if module == nil {
		b, err := wasm.Embedded()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", NodeWasm, err)
		}
		module = b
	}
	var cat []catalogueEntry
	for _, k := range kernels.All() {
		cat = append(cat, catalogueEntry{Name: k.Name, Export: k.Export, Params: k.Params})
	}
	js, err := json.Marshal(cat)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", NodeWasm, err)
	}
	return append(embedded("nodewasm/driver.mjs"),
		file{name: "kernels.wasm", data: module},
		file{name: "catalogue.json", data: js},
	), nil
}
