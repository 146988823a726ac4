// Package browser registers the browsers as engines of the server: chromium-wasm and
// chromium-js (Chromium's V8), firefox-wasm and firefox-js (Firefox's SpiderMonkey), over
// the same kernels.wasm and the same JavaScript port of the kernels as the playground page.
//
// An engine's cell starts one headless browser (package internal/headless: chromedp for
// Chromium, WebDriver BiDi for Firefox), serves the page's bundle (package web) on
// 127.0.0.1 from the worker process itself, cross-origin isolated as the playground serves
// it (so that performance.now() steps by microseconds, not by a millisecond), and runs the
// kernel in the page's own Web Worker (web/src/worker-wasm.ts, worker-js.ts): the harness of
// web/src/harness.ts takes the first call alone, the warm-up, the calibrated samples and
// checks every value, exactly as when a person presses Run in the page. The worker's
// result becomes the cell: compile and instantiate apart (wasm), the first call, the
// samples, the browser's version as the runtime line. The browser is killed, its whole
// process group, when the cell ends, and dies with the worker on Linux.
//
// The engines measure themselves (measure.SelfMeasurer): Run, a single call, is not how a
// browser is driven. A warm-up series (package internal/warmup) is timed in the page too
// (engine.CallTimer): every call from the first, each sample of calls by performance.now()
// in one worker that keeps the kernel loaded for the whole series. A browser that is not installed is a cell that says what to install.
package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
)

// Names of the browser engines (package engine spells each once, and its Order places
// them: the wasm tier with the other WebAssembly engines, the JavaScript one after node-js).
const (
	ChromiumWasm = engine.ChromiumWasm
	ChromiumJS   = engine.ChromiumJS
	FirefoxWasm  = engine.FirefoxWasm
	FirefoxJS    = engine.FirefoxJS
)

// Tiers of the page's workers.
const (
	tierWasm = "wasm"
	tierJS   = "js"
)

// engines are the package's engines, in engine.Order's order.
var engines = []struct {
	name string
	kind headless.Kind
	tier string
}{
	{ChromiumWasm, headless.Chromium, tierWasm},
	{FirefoxWasm, headless.Firefox, tierWasm},
	{ChromiumJS, headless.Chromium, tierJS},
	{FirefoxJS, headless.Firefox, tierJS},
}

func init() {
	for _, e := range engines {
		// The wasm tier calls kernels.wasm's exports from the page's worker, one call per
		// kernel call: it runs the host-call kernel too.
		engine.Describe(engine.Info{Name: e.name, KernelsWasm: e.tier == tierWasm},
			func() engine.Engine { return &Engine{name: e.name, kind: e.kind, tier: e.tier} })
	}
}

// Names lists the browser engines in engine.Order's order.
func Names() []string {
	names := make([]string, len(engines))
	for i, e := range engines {
		names[i] = e.name
	}
	return names
}

// New returns the named browser engine, or an error that lists the valid names.
func New(name string) (*Engine, error) {
	for _, e := range engines {
		if e.name == name {
			return &Engine{name: e.name, kind: e.kind, tier: e.tier}, nil
		}
	}
	return nil, fmt.Errorf("unknown browser engine %q: valid browser engines are %s", name, strings.Join(Names(), ", "))
}

// Engine is one browser and one of the page's tiers (kernels.wasm, or the JavaScript port).
type Engine struct {
	name    string
	kind    headless.Kind
	tier    string
	version string
	page    *session
}

// ErrSelfMeasured is what Run returns: a browser engine is measured whole (MeasureSelf).
var ErrSelfMeasured = errors.New("a browser engine runs the page's harness whole (measure.Measure calls MeasureSelf), not one call at a time")

// Name is the engine's name.
func (e *Engine) Name() string { return e.name }

// Browser is the browser the engine runs in.
func (e *Engine) Browser() headless.Kind { return e.kind }

// Load starts the browser on the page's bundle, ready to measure. MeasureSelf loads the
// engine itself; Load is for callers that drive the engine directly.
func (e *Engine) Load(ctx context.Context) (engine.Setup, error) {
	if e.page != nil {
		return engine.Setup{}, nil
	}
	s, err := open(ctx, e.kind)
	if err != nil {
		return engine.Setup{}, err
	}
	e.page, e.version = s, s.page.Version()
	return engine.Setup{}, nil
}

// Run is not how a browser engine runs: see MeasureSelf.
func (e *Engine) Run(ctx context.Context, k *kernels.Kernel, args []int) (int64, error) {
	return 0, ErrSelfMeasured
}

// Close ends the browser and the page's server.
func (e *Engine) Close(ctx context.Context) error {
	if e.page == nil {
		return nil
	}
	err := e.page.close()
	e.page = nil
	return err
}

// Version is the browser's version line after Load: "Chromium 156.0.8078.114 (V8 …)",
// "Firefox 153.8.0esr (SpiderMonkey)".
func (e *Engine) Version() string { return e.version }

// MeasureSelf starts the browser (unless Load did), runs the kernel in the page's worker
// with the page's harness, and returns the cell; the browser ends with it. Every failure —
// a missing browser, a missing bundle, a wrong value, a stack overflow — is the result's
// Failure.
func (e *Engine) MeasureSelf(ctx context.Context, k *kernels.Kernel, args []int, opts measure.Options, onProgress func(phase string, done, total int)) measure.Result {
	opts = opts.WithDefaults()
	progress := func(phase string, done, total int) {
		if onProgress != nil {
			onProgress(phase, done, total)
		}
	}
	r := measure.Result{
		Kernel: k.Name,
		Args:   append([]int(nil), args...),
		Engine: e.name,
		Runs:   opts.Runs,
		Warmup: opts.Warmup,
	}
	if k.Expected == nil {
		r.Failure = "load failed: the browser engines run the catalogue's kernels only (a user's kernel runs in the page)"
		return r
	}
	r.Expected = k.Expected(args)
	progress(measure.PhaseLoad, 0, 1)
	if _, err := e.Load(ctx); err != nil {
		r.Failure = fmt.Sprintf("load failed: %v", err)
		return r
	}
	defer e.Close(context.WithoutCancel(ctx))
	r.Runtime = e.version
	progress(measure.PhaseLoad, 1, 1)
	progress(measure.PhaseRun, 0, opts.Runs)
	cell, err := e.page.measure(ctx, e.tier, k, args, r.Expected, opts)
	if err != nil {
		r.Failure = err.Error()
		return r
	}
	cell.fill(&r)
	progress(measure.PhaseRun, r.Runs, opts.Runs)
	return r
}
