package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/web"
)

// session is a browser on the page's bundle, served by this process on loopback.
type session struct {
	page     headless.Page
	srv      *http.Server
	manifest web.Manifest
}

// benchPage is the page the browser opens: the workers need a document of the bundle's
// origin, and nothing else (the worker runs the kernel; the page only relays).
const benchPage = `<!doctype html><meta charset="utf-8"><title>wasmgap browser engine</title>`

// workerScripts names the page's worker of each tier in the manifest.
var workerScripts = map[string]string{tierWasm: "worker-wasm.js", tierJS: "worker-js.js"}

// open serves the bundle on 127.0.0.1 and starts the browser on it.
func open(ctx context.Context, kind headless.Kind) (*session, error) {
	if _, err := headless.Path(kind); err != nil {
		return nil, err
	}
	dist := web.Dist()
	b, err := fs.ReadFile(dist, "manifest.json")
	if err != nil {
		return nil, errors.New("this binary embeds no page bundle: build it with `go tool task build` (go run ./build) and rebuild wasmgap")
	}
	s := &session{}
	if err := json.Unmarshal(b, &s.manifest); err != nil {
		return nil, fmt.Errorf("read the bundle's manifest.json: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serve the page on loopback: %w", err)
	}
	files := http.FileServerFS(dist)
	s.srv = &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			// Cross-origin isolated, as the playground serves the page: performance.now()
			// then steps by microseconds in both browsers (a millisecond in Firefox without).
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			h.Set("Cross-Origin-Embedder-Policy", "require-corp")
			h.Set("Cross-Origin-Resource-Policy", "same-origin")
			h.Set("Cache-Control", "no-store")
			if r.URL.Path == "/" {
				h.Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, benchPage)
				return
			}
			files.ServeHTTP(w, r)
		}),
	}
	go s.srv.Serve(ln)
	s.page, err = headless.Start(ctx, kind, headless.Options{})
	if err != nil {
		s.srv.Close()
		return nil, err
	}
	if err := s.page.Navigate(ctx, "http://"+ln.Addr().String()+"/"); err != nil {
		s.close()
		return nil, fmt.Errorf("open the page in %s: %w", kind, err)
	}
	return s, nil
}

func (s *session) close() error {
	err := s.page.Close()
	s.srv.Close()
	return err
}

// request is the page's WorkerRequest (web/src/protocol.ts).
type request struct {
	Kernel      string  `json:"kernel"`
	Export      string  `json:"export"`
	Args        []int   `json:"args"`
	Runs        int     `json:"runs"`
	Warmup      int     `json:"warmup"`
	Expected    string  `json:"expected"`
	MinSampleMS float64 `json:"min_sample_ms"`
	BudgetMS    float64 `json:"budget_ms,omitempty"`
	WarmupMS    float64 `json:"warmup_ms"`
	WasmURL     string  `json:"wasmUrl,omitempty"`
	// Times, when set, asks for a warm-up series' timed calls (RunTimedCalls).
	Times *timesRequest `json:"times,omitempty"`
}

// timesRequest is WorkerRequest.times: samples × group calls, each group timed.
type timesRequest struct {
	Samples int `json:"samples"`
	Group   int `json:"group"`
}

// cellResult is the page's CellResult (web/src/types.ts), the fields a cell keeps.
type cellResult struct {
	Runs       int       `json:"runs"`
	Warmup     int       `json:"warmup"`
	WarmedUpNS float64   `json:"warmed_up_ns"`
	Calls      int       `json:"calls"`
	Value      string    `json:"value"`
	Expected   string    `json:"expected"`
	Samples    []float64 `json:"samples_ns"`
	Min        float64   `json:"min_ns"`
	Median     float64   `json:"median_ns"`
	Max        float64   `json:"max_ns"`
	CI         *struct {
		Lo    float64 `json:"lo_ns"`
		Hi    float64 `json:"hi_ns"`
		Level float64 `json:"level"`
	} `json:"ci"`
	FirstNS float64 `json:"first_ns"`
	Setup   struct {
		Compile     float64 `json:"compile_ns"`
		Instantiate float64 `json:"instantiate_ns"`
	} `json:"setup"`
	Failure string `json:"failure"`
	Note    string `json:"note"`
	Browser *struct {
		Isolated        bool    `json:"cross_origin_isolated"`
		TimerResolution float64 `json:"timer_resolution_ns"`
	} `json:"browser"`
}

// relay is the page's side of a measurement: it starts the tier's worker, hands it the
// request, and resolves with the worker's result (or a failure naming what went wrong).
const relay = `new Promise((resolve) => {
  const req = %s;
  const w = new Worker(%s, { type: "module", name: %s });
  w.onmessage = (ev) => {
    if (ev.data && ev.data.type === "result") { w.terminate(); resolve(ev.data.result); }
  };
  w.onerror = (ev) => {
    ev.preventDefault();
    w.terminate();
    resolve({ failure: "the " + %[3]s + " worker failed: " + (ev.message || "could not start") });
  };
  w.postMessage(req);
})`

// request is the worker's request for the kernel on the tier, with the script of the
// tier's worker in the bundle.
func (s *session) request(tier string, k *kernels.Kernel, args []int, expected int64) (request, string, error) {
	script := s.manifest.Files[workerScripts[tier]]
	if script == "" {
		return request{}, "", fmt.Errorf("load failed: the page bundle has no %s: rebuild it with `go tool task build`", workerScripts[tier])
	}
	req := request{
		Kernel:   k.Name,
		Export:   k.Export,
		Args:     args,
		Expected: strconv.FormatInt(expected, 10),
	}
	if tier == tierWasm {
		wasm := s.manifest.Files["kernels.wasm"]
		if wasm == "" {
			return request{}, "", errors.New("load failed: the page bundle has no kernels.wasm: build it with `go tool task build` (wasm/module present)")
		}
		req.WasmURL = "/" + wasm
	}
	return req, script, nil
}

// measure runs the kernel in the tier's worker and returns the worker's result.
func (s *session) measure(ctx context.Context, tier string, k *kernels.Kernel, args []int, expected int64, opts measure.Options) (*cellResult, error) {
	req, script, err := s.request(tier, k, args, expected)
	if err != nil {
		return nil, err
	}
	req.Runs = opts.Runs
	req.Warmup = opts.Warmup
	req.MinSampleMS = float64(opts.SampleTarget()) / 1e6
	req.WarmupMS = float64(opts.WarmupTarget()) / 1e6
	req.BudgetMS = float64(opts.Budget) / 1e6
	reqJSON, _ := json.Marshal(req)
	scriptJSON, _ := json.Marshal("/" + script)
	nameJSON, _ := json.Marshal(tier)
	var cell cellResult
	if err := s.page.Evaluate(ctx, fmt.Sprintf(relay, reqJSON, scriptJSON, nameJSON), &cell); err != nil {
		return nil, fmt.Errorf("crashed: the page's worker: %w", err)
	}
	if cell.Failure == "" && cell.Value != req.Expected {
		// The harness checks every call; a result that says otherwise is not one to keep.
		return nil, fmt.Errorf("wrong result: got %s, want %s", cell.Value, req.Expected)
	}
	return &cell, nil
}

// fill copies the worker's result into the cell.
func (c *cellResult) fill(r *measure.Result) {
	if v, err := strconv.ParseInt(c.Value, 10, 64); err == nil {
		r.Value = v
	}
	r.Failure = c.Failure
	r.Setup.Compile = time.Duration(c.Setup.Compile)
	r.Setup.Instantiate = time.Duration(c.Setup.Instantiate)
	r.First = time.Duration(c.FirstNS)
	if c.Browser != nil {
		timer := fmt.Sprintf("performance.now() steps %s", time.Duration(c.Browser.TimerResolution))
		if !c.Browser.Isolated {
			timer += ", not cross-origin isolated"
		}
		r.Runtime += " (" + timer + ")"
	}
	if r.Failed() {
		return
	}
	r.Runs = c.Runs
	r.Warmup = c.Warmup
	r.WarmedUp = time.Duration(c.WarmedUpNS)
	r.Calls = c.Calls
	r.Samples = c.Samples
	// The page's summary, and the server's from the same samples: one method (benchstat's
	// order statistics), so the two agree.
	r.Min, r.Median, r.Max, r.CI = measure.Summarize(c.Samples)
}
