package peer

import (
	"testing"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/native/peers"
)

// Importing the package registers every peer as an engine of the same name.
func TestRegistered(t *testing.T) {
	for _, name := range peers.Names() {
		e, err := engine.New(name)
		if err != nil {
			t.Fatalf("engine.New(%q): %v", name, err)
		}
		if e.Name() != name {
			t.Errorf("engine.New(%q).Name() = %q", name, e.Name())
		}
	}
}
