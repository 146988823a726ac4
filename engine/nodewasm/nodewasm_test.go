package nodewasm

import (
	"testing"

	"github.com/wasmgap/wasmgap/engine"
)

// Importing the package registers the engine as node-wasm.
func TestRegistered(t *testing.T) {
	e, err := engine.New("node-wasm")
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != Name {
		t.Errorf("Name() = %q, want %q", e.Name(), Name)
	}
}
