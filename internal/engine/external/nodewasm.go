package external

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wasmgap/wasmgap/internal/engine/driver"
	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/wasm"
)

// catalogueEntry is one kernel as the node-wasm driver reads its catalogue.json.
type catalogueEntry struct {
	Name   string          `json:"name"`
	Export string          `json:"export"`
	Params []kernels.Param `json:"params"`
}

// nodeWasmFiles are the named node-wasm engine's driver files: the driver, the module
// (Options.Module, or the one built into this binary; for NodeWasmOpt that module after
// wasm-opt, driver.OptimizedModule) and the catalogue the driver checks arguments against.
func nodeWasmFiles(ctx context.Context, name string, opts Options) ([]driver.File, error) {
	module := opts.Module
	if module == nil {
		b, err := wasm.Embedded()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		module = b
	}
	if name == NodeWasmOpt {
		b, err := driver.OptimizedModule(ctx, module)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		module = b
	}
	var cat []catalogueEntry
	for _, k := range kernels.Every() {
		cat = append(cat, catalogueEntry{Name: k.Name, Export: k.Export, Params: k.Params})
	}
	js, err := json.Marshal(cat)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return append(embedded("nodewasm/driver.mjs"),
		driver.File{Name: "kernels.wasm", Data: module},
		driver.File{Name: "catalogue.json", Data: js},
	), nil
}
