package custom

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/traefik/yaegi/interp"
	"github.com/traefik/yaegi/stdlib"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/engine/wazero"
	"github.com/wasmgap/wasmgap/internal/engine/yaegi"
	"github.com/wasmgap/wasmgap/kernels"
)

// Group is the kernels.Kernel group of user kernels.
const Group = "custom"

// Engines are the engines a user kernel runs on, in the reports' order: the sandboxed
// ones. Native runs are offered only for kernels built with Options.Native (EnginesFor):
// native code is confined by nothing but its worker's limits.
var Engines = []string{engine.WazeroCompiler, engine.WazeroInterpreter, engine.Yaegi}

// EnginesFor returns the engines that run k: Engines, after native when k was built
// natively.
func EnginesFor(k *Kernel) []string {
	if k.Native {
		return append([]string{engine.Native}, Engines...)
	}
	return Engines
}

// Kernel returns the user kernel as the engines and the runner take a kernel: named after
// its function, exporting Export, with parameters over the int32 range (the module's
// calling convention) and no expected value (the tiers are compared instead).
func (k *Kernel) Kernel() *kernels.Kernel {
	params := make([]kernels.Param, len(k.Func.Params))
	for i, name := range k.Func.Params {
		params[i] = kernels.Param{Name: name, Doc: k.Func.Types[i], Default: 0, Min: math.MinInt32, Max: math.MaxInt32}
	}
	return &kernels.Kernel{
		Name: k.Func.Name, Export: Export, Func: k.Func.Name, Group: Group,
		Summary: "your kernel (" + k.ID + ")",
		Params:  params,
	}
}

// Symbols returns yaegi's symbol table restricted to Allowed: the only packages user
// code interpreted by yaegi can import.
func Symbols() interp.Exports {
	out := interp.Exports{}
	for key, syms := range stdlib.Symbols {
		// Keys are "<import path>/<package name>": "math/rand/v2/rand".
		if slices.Contains(Allowed, path.Dir(key)) {
			out[key] = syms
		}
	}
	return out
}

// NewEngine returns the named engine set up to run the built kernel k: its module on
// wazero, or its source on yaegi with Symbols. Other engines are refused.
func NewEngine(name string, k *Kernel) (engine.Engine, error) {
	kern := k.Kernel()
	switch name {
	case engine.WazeroCompiler, engine.WazeroInterpreter:
		mod, err := os.ReadFile(k.ModulePath())
		if err != nil {
			return nil, fmt.Errorf("read the module of %s: %w", k.ID, err)
		}
		// No on-disk compilation cache: the worker is fenced and may not write, and machine
		// code that a user's run wrote would be loaded and run by unfenced workers.
		return wazero.New(wazero.Options{Interpreter: name == engine.WazeroInterpreter, NoCache: true, Module: mod, Kernels: []*kernels.Kernel{kern}}), nil
	case engine.Yaegi:
		src, err := os.ReadFile(k.SourcePath())
		if err != nil {
			return nil, fmt.Errorf("read the source of %s: %w", k.ID, err)
		}
		return yaegi.NewSource(yaegi.SourceOptions{Source: src, Package: PackageName, Func: k.Func.Name, Symbols: Symbols()}), nil
	case engine.Native:
		if !k.Native {
			return nil, errors.New("native runs of user kernels are off: they run on " + strings.Join(Engines, ", ") + " (a server started with --allow-native-custom also runs them natively)")
		}
		return &nativeEngine{k: k}, nil
	}
	return nil, fmt.Errorf("engine %q does not run user kernels: they run on %s (and browser-wasm in the page)", name, strings.Join(Engines, ", "))
}
