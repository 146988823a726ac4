// Package yaegi runs the kernels from their Go source with the yaegi interpreter:
// the "interpreted Go" row, the twin of the articles' PHP rows.
//
// The engine evaluates exactly the files of kernels.Source — the code the native engine
// and the wasm module run — in a sandboxed interpreter with no standard library symbols
// (the kernels import nothing), then keeps each kernel's interpreted function as a typed
// Go func value, so that Run pays for the call and nothing else.
//
// yaegi runs interpreted calls on the Go stack. A recursion deep enough to exhaust it
// (Go's limit is 1 GB) is a fatal error that no recover can catch, and a runaway call
// cannot be interrupted: run measurements in worker processes (package runner).
//
// Importing the package registers the engine as engine.Yaegi.
package yaegi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/traefik/yaegi/interp"

	"github.com/wasmgap/wasmgap/internal/capped"
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// packageName is the package clause of the kernel sources: interpreted symbols are
// looked up as kernels.<Func>.
const packageName = "kernels"

// stderrLimit bounds what is kept of the interpreter's panic trace for an error message.
const stderrLimit = 2 << 10

func init() {
	engine.Describe(engine.Info{
		Name: engine.Yaegi, Title: "yaegi",
		What:  "the Go source interpreted by yaegi",
		Color: "#b279a2", Version: engine.ModuleVersion("yaegi", "github.com/traefik/yaegi"),
		Runtime: "Go", Tier: engine.TierInterpreter,
	}, func() engine.Engine { return New() })
}

// Engine interprets kernels.Source. Load it once, then Run; Run is not safe for
// concurrent use.
type Engine struct {
	// funcs holds the interpreted kernel functions by kernel name, each one either a
	// func(int) int64 or a func(int, int) int64.
	funcs map[string]any
	// stderr receives the interpreter's own report of a panic (file, line, function).
	stderr *capped.Buffer
}

// New returns an engine; call Load before Run.
func New() *Engine { return &Engine{} }

// Name returns engine.Yaegi.
func (*Engine) Name() string { return engine.Yaegi }

// Load parses and evaluates the kernel sources in a fresh interpreter and looks up every
// catalogue kernel's function. Setup.Compile is the parse and evaluation time;
// Setup.Instantiate is the time to create the interpreter and look the functions up.
// Calling Load again replaces the interpreter.
func (e *Engine) Load(ctx context.Context) (engine.Setup, error) {
	if err := ctx.Err(); err != nil {
		return engine.Setup{}, fmt.Errorf("yaegi: load: %w", err)
	}
	var setup engine.Setup
	start := time.Now()
	// Only the start is kept: a panic inside a deep recursion cannot fill memory with
	// one trace line per frame.
	stderr := &capped.Buffer{Head: stderrLimit}
	i := interp.New(interp.Options{
		// The kernels are read from the embedded sources, never from the disk.
		SourcecodeFilesystem: kernels.Source,
		// Sandboxed: no unrestricted symbols, an empty environment and no arguments.
		Env:    []string{},
		Args:   []string{},
		Stdin:  strings.NewReader(""),
		Stdout: io.Discard,
		Stderr: stderr,
	})
	setup.Instantiate = time.Since(start)

	start = time.Now()
	for _, file := range kernels.SourceFiles {
		if _, err := evalFile(i, file); err != nil {
			return engine.Setup{}, fmt.Errorf("yaegi: evaluate %s: %w", file, err)
		}
	}
	setup.Compile = time.Since(start)

	start = time.Now()
	funcs := make(map[string]any)
	for _, k := range kernels.All() {
		fn, err := lookup(i, k)
		if err != nil {
			return engine.Setup{}, fmt.Errorf("yaegi: %w", err)
		}
		funcs[k.Name] = fn
	}
	setup.Instantiate += time.Since(start)

	e.funcs, e.stderr = funcs, stderr
	return setup, nil
}

// evalFile evaluates one file of kernels.Source, turning an interpreter panic into an error.
func evalFile(i *interp.Interpreter, file string) (_ reflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("interpreter panicked: %v", r)
		}
	}()
	return i.EvalPath(file)
}

// lookup finds the kernel's function in the interpreter and returns it as a typed func
// value whose type matches the kernel's parameters.
func lookup(i *interp.Interpreter, k *kernels.Kernel) (fn any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("look up %s.%s for %s: interpreter panicked: %v", packageName, k.Func, k.Name, r)
		}
	}()
	v, err := i.Eval(packageName + "." + k.Func)
	if err != nil {
		return nil, fmt.Errorf("look up %s.%s for %s: %w", packageName, k.Func, k.Name, err)
	}
	if !v.IsValid() || !v.CanInterface() {
		return nil, fmt.Errorf("look up %s.%s for %s: no usable value", packageName, k.Func, k.Name)
	}
	fn = v.Interface()
	switch fn.(type) {
	case func(int) int64:
		if len(k.Params) == 1 {
			return fn, nil
		}
	case func(int, int) int64:
		if len(k.Params) == 2 {
			return fn, nil
		}
	}
	return nil, fmt.Errorf("%s.%s for %s has type %v: want a func of %d int parameters returning int64",
		packageName, k.Func, k.Name, v.Type(), len(k.Params))
}

// Run calls the kernel's interpreted function once with args. A panic inside the
// interpreter is returned as an error naming the call; one that reports a stack overflow
// wraps engine.ErrStackOverflow. The context is checked before the call only: an
// interpreted call cannot be interrupted once it runs.
func (e *Engine) Run(ctx context.Context, k *kernels.Kernel, args []int) (int64, error) {
	if k == nil {
		return 0, errors.New("yaegi: run: no kernel given")
	}
	if e.funcs == nil {
		return 0, fmt.Errorf("yaegi: run %s: engine not loaded: call Load first", k.Name)
	}
	fn, ok := e.funcs[k.Name]
	if !ok {
		return 0, fmt.Errorf("yaegi: run %s: unknown kernel: valid kernels are %s", k.Name, strings.Join(kernels.Names(), ", "))
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("yaegi: run %s: %w", k.Label(args), err)
	}
	e.stderr.Reset()
	switch f := fn.(type) {
	case func(int) int64:
		if len(args) == 1 {
			return e.call1(f, k, args)
		}
	case func(int, int) int64:
		if len(args) == 2 {
			return e.call2(f, k, args)
		}
	}
	return 0, fmt.Errorf("yaegi: run %s: %s takes %d arguments, got %d", k.Label(args), k.Name, len(k.Params), len(args))
}

func (e *Engine) call1(f func(int) int64, k *kernels.Kernel, args []int) (v int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = e.panicError(k, args, r)
		}
	}()
	return f(args[0]), nil
}

func (e *Engine) call2(f func(int, int) int64, k *kernels.Kernel, args []int) (v int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = e.panicError(k, args, r)
		}
	}()
	return f(args[0], args[1]), nil
}

// panicError turns a recovered panic into an error with the call and, when the
// interpreter reported one, the source position where it happened.
func (e *Engine) panicError(k *kernels.Kernel, args []int, r any) error {
	msg := fmt.Sprint(r)
	where := firstLine(e.stderr.String())
	if where != "" {
		where = " (" + where + ")"
	}
	if strings.Contains(strings.ToLower(msg), "stack overflow") {
		return fmt.Errorf("yaegi: run %s: %w: %s%s", k.Label(args), engine.ErrStackOverflow, msg, where)
	}
	if err, ok := r.(error); ok {
		return fmt.Errorf("yaegi: run %s: panic: %w%s", k.Label(args), err, where)
	}
	return fmt.Errorf("yaegi: run %s: panic: %s%s", k.Label(args), msg, where)
}

// Close drops the interpreter; Load may be called again afterwards.
func (e *Engine) Close(context.Context) error {
	e.funcs, e.stderr = nil, nil
	return nil
}

// firstLine returns the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}
