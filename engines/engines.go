// Package engines is the registry of server engines: it names them and builds them.
package engines

import (
	"fmt"
	"strings"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/interpreted"
	"github.com/wasmgap/wasmgap/native"
	"github.com/wasmgap/wasmgap/wasm"
)

// Names lists the server engines in the order reports show them.
func Names() []string {
	return []string{engine.Native, engine.WazeroCompiler, engine.WazeroInterpreter, engine.Yaegi}
}

// New builds the named engine, or says which names are valid.
func New(name string) (engine.Engine, error) {
	switch name {
	case engine.Native:
		return native.New(), nil
	case engine.WazeroCompiler:
		return wasm.New(wasm.Options{}), nil
	case engine.WazeroInterpreter:
		return wasm.New(wasm.Options{Interpreter: true}), nil
	case engine.Yaegi:
		return interpreted.New(), nil
	}
	return nil, fmt.Errorf("unknown engine %q: valid engines are %s", name, strings.Join(Names(), ", "))
}
