package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

// TimedInPage is how a browser engine times a warm-up series (engine.CallTimer): by
// performance.now() in the page's Web Worker, each sample's calls back to back.
const TimedInPage = "performance.now() in the page's worker, back to back"

// timesRelay is the page's side of a warm-up series: one worker of the tier for the
// whole series (made by the first request, kept on the page for the next ones, so that
// the kernel stays loaded and its calls go on from the first), handed a request of
// timed calls and resolved with its answer.
const timesRelay = `new Promise((resolve) => {
  const req = %s;
  let w = globalThis.__wasmgapTimes;
  if (!w) {
    w = globalThis.__wasmgapTimes = new Worker(%s, { type: "module", name: %s });
  }
  w.onmessage = (ev) => {
    if (ev.data && ev.data.type === "times") resolve(ev.data.times);
  };
  w.onerror = (ev) => {
    ev.preventDefault();
    resolve({ failure: "the " + %[3]s + " worker failed: " + (ev.message || "could not start") });
  };
  w.postMessage(req);
})`

// timedCalls is the page's TimedCalls (web/src/protocol.ts).
type timedCalls struct {
	Times   []float64 `json:"times_ns"`
	Value   string    `json:"value"`
	Wrong   int       `json:"wrong"`
	Failure string    `json:"failure"`
	// Setup is the worker's load of the kernel (its first request only): the module's
	// compile and instantiate times, in ns as performance.now() saw them.
	Setup *struct {
		Compile     float64 `json:"compile_ns"`
		Instantiate float64 `json:"instantiate_ns"`
	} `json:"setup"`
}

// RunTimedCalls makes samples × group calls of the kernel in the page's worker, each
// group timed there with performance.now() (engine.CallTimer): the warm-up's series.
// The engine must be loaded (Load); its first request's first call is the browser's
// first call of the kernel, and later requests go on in the same worker; the first
// request's answer carries the worker's load of the kernel (TimedCalls.Setup: a wasm
// tier's compile and instantiate times; a JS tier's are zero). A call that gave another
// value than the first, or a first value other than the catalogue's, is an error.
func (e *Engine) RunTimedCalls(ctx context.Context, k *kernels.Kernel, args []int, samples, group int) (out engine.TimedCalls, err error) {
	if e.page == nil {
		return out, errors.New("the browser engine is not loaded: call Load first")
	}
	if k.Expected == nil {
		return out, errors.New("the browser engines run the catalogue's kernels only (a user's kernel runs in the page)")
	}
	if samples < 1 || group < 1 {
		return out, fmt.Errorf("samples = %d, group = %d: both must be at least 1", samples, group)
	}
	s := e.page
	req, script, err := s.request(e.tier, k, args, k.Expected(args))
	if err != nil {
		return out, err
	}
	req.Times = &timesRequest{Samples: samples, Group: group}
	reqJSON, _ := json.Marshal(req)
	scriptJSON, _ := json.Marshal("/" + script)
	nameJSON, _ := json.Marshal(e.tier)
	var tc timedCalls
	if err := s.page.Evaluate(ctx, fmt.Sprintf(timesRelay, reqJSON, scriptJSON, nameJSON), &tc); err != nil {
		return out, fmt.Errorf("the page's worker: %w", err)
	}
	if tc.Failure != "" {
		if tc.Failure == "stack overflow" {
			return out, fmt.Errorf("%s in %s: %w", k.Label(args), e.name, engine.ErrStackOverflow)
		}
		return out, errors.New(strings.TrimPrefix(tc.Failure, "crashed: "))
	}
	if len(tc.Times) != samples {
		return out, fmt.Errorf("the page's worker timed %d samples, want %d", len(tc.Times), samples)
	}
	if out.First, err = strconv.ParseInt(tc.Value, 10, 64); err != nil {
		return out, fmt.Errorf("the page's worker gave the value %q: %w", tc.Value, err)
	}
	if tc.Wrong > 0 {
		return out, fmt.Errorf("%s: %d of %d calls gave another value than the first (%d)", k.Label(args), tc.Wrong, samples*group, out.First)
	}
	// Every call gave the first's value (checked in the worker): the sum is that value
	// times the calls, wrapping as the drivers' sums do.
	out.Sum = out.First * int64(samples*group)
	out.Times = make([]time.Duration, len(tc.Times))
	for i, t := range tc.Times {
		out.Times[i] = time.Duration(t)
	}
	out.How = TimedInPage
	if tc.Setup != nil {
		out.Setup = &engine.Setup{Compile: time.Duration(tc.Setup.Compile), Instantiate: time.Duration(tc.Setup.Instantiate)}
	}
	return out, nil
}
