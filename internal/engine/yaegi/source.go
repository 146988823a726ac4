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

// SourceOptions say what a SourceEngine interprets.
type SourceOptions struct {
	// Source is one Go file of package Package declaring the function Func.
	Source []byte
	// Package is the source's package clause.
	Package string
	// Func is the function to call, with integer parameters (int, int32, int64) and an
	// int64 result.
	Func string
	// Symbols are the only symbols the source can import (nil: none); package custom
	// restricts them to its allow-list.
	Symbols interp.Exports
}

// SourceEngine interprets one Go source given at run time, a user's kernel, with a
// restricted symbol table. Like Engine it runs one call at a time and cannot interrupt a
// call: run it in a worker process.
type SourceEngine struct {
	opts   SourceOptions
	fn     reflect.Value
	stderr *capped.Buffer
}

// NewSource returns an engine for opts; call Load before Run.
func NewSource(opts SourceOptions) *SourceEngine { return &SourceEngine{opts: opts} }

// Name returns engine.Yaegi.
func (*SourceEngine) Name() string { return engine.Yaegi }

// Load evaluates the source in a fresh interpreter that sees only opts.Symbols and looks
// up the function.
func (e *SourceEngine) Load(ctx context.Context) (setup engine.Setup, err error) {
	if err := ctx.Err(); err != nil {
		return engine.Setup{}, fmt.Errorf("yaegi: load: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaegi: load %s: interpreter panicked: %v", e.opts.Func, r)
		}
	}()
	start := time.Now()
	stderr := &capped.Buffer{Head: stderrLimit}
	i := interp.New(interp.Options{
		Env: []string{}, Args: []string{},
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr,
	})
	if e.opts.Symbols != nil {
		if err := i.Use(e.opts.Symbols); err != nil {
			return engine.Setup{}, fmt.Errorf("yaegi: load symbols: %w", err)
		}
	}
	setup.Instantiate = time.Since(start)
	start = time.Now()
	if _, err := i.Eval(string(e.opts.Source)); err != nil {
		return engine.Setup{}, fmt.Errorf("yaegi: evaluate the source: %w", err)
	}
	v, err := i.Eval(e.opts.Package + "." + e.opts.Func)
	if err != nil {
		return engine.Setup{}, fmt.Errorf("yaegi: look up %s.%s: %w", e.opts.Package, e.opts.Func, err)
	}
	setup.Compile = time.Since(start)
	if !v.IsValid() || v.Kind() != reflect.Func {
		return engine.Setup{}, fmt.Errorf("yaegi: %s.%s is not a function", e.opts.Package, e.opts.Func)
	}
	t := v.Type()
	if t.NumOut() != 1 || t.Out(0).Kind() != reflect.Int64 {
		return engine.Setup{}, fmt.Errorf("yaegi: %s.%s has type %v: want an int64 result", e.opts.Package, e.opts.Func, t)
	}
	for j := 0; j < t.NumIn(); j++ {
		switch t.In(j).Kind() {
		case reflect.Int, reflect.Int32, reflect.Int64:
		default:
			return engine.Setup{}, fmt.Errorf("yaegi: %s.%s has type %v: want integer parameters", e.opts.Package, e.opts.Func, t)
		}
	}
	e.fn, e.stderr = v, stderr
	return setup, nil
}

// Run calls the function with args converted to its parameter types.
func (e *SourceEngine) Run(ctx context.Context, k *kernels.Kernel, args []int) (v int64, err error) {
	if !e.fn.IsValid() {
		return 0, errors.New("yaegi: run: engine not loaded: call Load first")
	}
	t := e.fn.Type()
	if len(args) != t.NumIn() {
		return 0, fmt.Errorf("yaegi: run %s: it takes %d arguments, got %d", k.Label(args), t.NumIn(), len(args))
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("yaegi: run %s: %w", k.Label(args), err)
	}
	in := make([]reflect.Value, len(args))
	for j, a := range args {
		in[j] = reflect.ValueOf(a).Convert(t.In(j))
	}
	e.stderr.Reset()
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint(r)
			where := firstLine(e.stderr.String())
			if where != "" {
				where = " (" + where + ")"
			}
			if strings.Contains(strings.ToLower(msg), "stack overflow") {
				err = fmt.Errorf("yaegi: run %s: %w: %s%s", k.Label(args), engine.ErrStackOverflow, msg, where)
				return
			}
			err = fmt.Errorf("yaegi: run %s: panic: %s%s", k.Label(args), msg, where)
		}
	}()
	return e.fn.Call(in)[0].Int(), nil
}

// Close drops the interpreter.
func (e *SourceEngine) Close(context.Context) error {
	e.fn, e.stderr = reflect.Value{}, nil
	return nil
}
