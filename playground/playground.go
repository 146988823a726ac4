// Package playground serves the playground page and its HTTP API: the kernel catalogue,
// runs of any kernel on any server engine (queued, streamed, cancelled with the request),
// the articles' historical figures, and the page's static bundle with compression,
// long-lived caching for content-hashed files and the cross-origin isolation headers that
// give the page's timers their full precision.
//
// Routes:
//
//	GET  /api/kernels   the catalogue, the server engines, limits, environment, panels
//	GET  /api/expected  ?kernel=K&<param>=<value>…: the catalogue's expected result
//	POST /api/forecast  a run request: the cell's expected time from this machine's stored runs (forecast.go)
//	POST /api/run       {kernel, engine, args, runs, warmup, min_sample_ms, warmup_ms}: NDJSON events, the last a result
//	GET  /api/history   the articles' historical figures
//	POST /api/compare   {old, new, alpha}: two runs' cells compared as `wasmgap compare` does
//	POST /api/warmup    a warm-up study: NDJSON events, the last a result with its stored id (warmup.go)
//	GET  /api/warmup/ID a stored warm-up study (warmup_stored.go)
//	POST /api/custom    {source}: a user's kernel checked and built; {id, func, params, engines}
//	GET  /api/custom/ID a built user kernel, with its source (…/kernel.wasm: its module)
//	POST /api/custom/format {source}: the source as gofmt prints it (format.go)
//	POST /api/farm      {mode, kernels, engines, args, …}: a Run's plan on a bench farm's agents, with Options.Farm (farm.go)
//	GET  /api/results…  stored runs, with Options.Results (results.go); POST /api/results/share: a browser's cells (share.go)
//	GET  /runs/{id}     a stored run's own page, with Options.Results (runpage.go); /runs/{id}.csv its cells as CSV
//	/chat/, /load/      the chat and load handlers, when Options sets them
//	GET  /…             the page (web/dist)
//
// POST /api/run takes only application/json (415 otherwise) and refuses what a browser
// marks as sent by another origin (403). A query of /api/… or /runs/… that names a
// parameter twice is refused (400 naming it). A request's body must arrive within
// Options.BodyTimeout. Shutdown ends the runs in progress and tells their clients.
package playground

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/httpguard"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/web"
)

// Options configure a Server. The zero value serves the embedded bundle with every server
// engine, one run per CPU at once.
type Options struct {
	// Dist holds the built page (web/dist: manifest.json, index.html and the hashed files);
	// nil means the bundle embedded in this binary.
	Dist fs.FS
	// Engines lists the server engines offered; nil means every engine (engine.Names()).
	Engines []string
	// MaxConcurrent is how many runs may run at once; 0 means one per CPU.
	MaxConcurrent int
	// MaxQueued is how many runs may wait for a slot; 0 means 64. Past it, POST /api/run
	// answers 503. One address may hold half of the slots (rounded up) and a quarter of
	// the waiting places, for runs, warm-up studies and builds of user kernels together;
	// the line is served by round, an address's first waiting run before any address's
	// second (queue.go).
	MaxQueued int
	// Timeout bounds one run, setup included; 0 means the runner's default (30s).
	Timeout time.Duration
	// BodyTimeout bounds the time to read a request's body, from the end of its headers;
	// 0 means 10s. A body that is not in by then fails (its connection is closed), so
	// that a client sending one byte a second holds no handler. Requests without a body,
	// such as the chat's SSE and WebSocket streams, have no such limit.
	BodyTimeout time.Duration
	// Chat, when set, is mounted under /chat/ (with the prefix stripped) and the page
	// shows it in a side panel.
	Chat http.Handler
	// Load, when set, is mounted under /load/ (with the prefix stripped) and the page
	// shows it in a side panel.
	Load http.Handler
	// Custom, when set, builds users' kernels (POST /api/custom) that POST /api/run then
	// runs on the sandboxed engines (custom.Engines), and the page shows its "Your
	// kernel" tab; nil turns user kernels off.
	Custom *custom.Builder
	// Results, when set, stores every server cell the page runs and the browser cells a
	// page shares, and serves them to the Results tab (results.go, share.go).
	Results *results.Store
	// Farm, when set, is the bench farm that POST /api/farm sends a Run's plan to
	// (farm.go), its results stored in Results.
	Farm *FarmOptions
}

const (
	// defaultMaxQueued is Options.MaxQueued's default.
	defaultMaxQueued = 64
	// defaultBodyTimeout is Options.BodyTimeout's default.
	defaultBodyTimeout = 10 * time.Second
	// maxRequestBody bounds the JSON of a run request.
	maxRequestBody = 64 << 10
)

// runFunc runs one job; runner.Run in production, a stand-in in tests of the API alone.
type runFunc func(ctx context.Context, job runner.Job, opts runner.Options) (measure.Result, error)

// Server is the playground's HTTP handler.
type Server struct {
	opts    Options
	engines []string
	queue   *queue
	static  *static
	env     report.Environment
	run     runFunc
	explain explainFunc
	mux     *http.ServeMux

	// closing ends when Shutdown begins; every run's context ends with it.
	closing  context.Context
	shutdown context.CancelFunc
	mu       sync.Mutex // guards closed, and active.Add against Shutdown's Wait
	closed   bool
	active   sync.WaitGroup // runs in progress or queued

	pageRuns pageRuns // the page's Runs, each stored as one run (pagerun.go)
	explains explainCache
}

// New returns a server for the options.
func New(opts Options) *Server {
	s := &Server{opts: opts, run: runner.Run, explain: runner.Explain, env: report.CurrentEnvironment()}
	s.env.Time = time.Time{} // a standing description, not one measurement's moment
	s.closing, s.shutdown = context.WithCancel(context.Background())
	if s.opts.BodyTimeout <= 0 {
		s.opts.BodyTimeout = defaultBodyTimeout
	}
	s.engines = opts.Engines
	if s.engines == nil {
		s.engines = engine.Names()
	}
	slots := opts.MaxConcurrent
	if slots <= 0 {
		slots = runtime.NumCPU()
	}
	waiting := opts.MaxQueued
	if waiting <= 0 {
		waiting = defaultMaxQueued
	}
	s.queue = newQueue(slots, waiting)
	if opts.Custom != nil {
		s.queue.runs = opts.Custom // its cache warm-up pauses while runs go on
	}
	dist := opts.Dist
	if dist == nil {
		dist = web.Dist()
	}
	s.static = newStatic(dist)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/kernels", s.handleKernels)
	mux.HandleFunc("GET /api/expected", s.handleExpected)
	mux.Handle("POST /api/run", httpguard.CrossOrigin(http.HandlerFunc(s.handleRun)))
	mux.Handle("POST /api/forecast", httpguard.CrossOrigin(http.HandlerFunc(s.handleForecast)))
	mux.HandleFunc("GET /api/history", s.handleHistory)
	mux.Handle("POST /api/compare", httpguard.CrossOrigin(http.HandlerFunc(s.handleCompare)))
	mux.Handle("POST /api/warmup", httpguard.CrossOrigin(http.HandlerFunc(s.handleWarmup)))
	mux.HandleFunc("GET /api/warmup/{id}", s.handleWarmupGet)
	mux.Handle("POST /api/custom", httpguard.CrossOrigin(http.HandlerFunc(s.handleCustom)))
	mux.Handle("POST /api/custom/format", httpguard.CrossOrigin(http.HandlerFunc(s.handleFormat)))
	mux.HandleFunc("GET /api/custom/{id}", s.handleCustomGet)
	mux.HandleFunc("GET /api/custom/{id}/kernel.wasm", s.handleCustomWasm)
	s.mountResults(mux)
	s.mountRunPages(mux)
	mux.HandleFunc("GET /api/explain", s.handleExplain)
	mux.Handle("POST /api/farm", httpguard.CrossOrigin(http.HandlerFunc(s.handleFarm)))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, apiError{Error: "no such API route: " + r.Method + " " + r.URL.Path +
			"; routes are GET /api/kernels, GET /api/expected, POST /api/run, POST /api/forecast, GET /api/history, POST /api/compare, POST /api/warmup, GET /api/warmup/{id}, POST /api/custom, GET /api/custom/{id}, GET /api/custom/{id}/kernel.wasm, GET /api/explain, POST /api/farm"})
	})
	if opts.Chat != nil {
		mux.Handle("/chat/", http.StripPrefix("/chat", opts.Chat))
	}
	if opts.Load != nil {
		mux.Handle("/load/", http.StripPrefix("/load", opts.Load))
	}
	mux.Handle("/", s.static)
	s.mux = mux
	return s
}

// ServeHTTP serves the page, the API and the mounted panels, every response with the
// cross-origin isolation headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Cross-origin isolation: performance.now() at full precision in the page and its
	// workers. Every response carries it, so that same-origin iframes (chat, load) and
	// worker scripts may load inside the isolated page.
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Embedder-Policy", "require-corp")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Body != nil && r.Body != http.NoBody {
		httpguard.LimitBody(w, r, s.opts.BodyTimeout)
	}
	if strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/runs/") {
		if aerr := checkQuery(r); aerr != nil {
			writeError(w, http.StatusBadRequest, *aerr)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// enter admits a run; false once Shutdown began.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active.Add(1)
	return true
}

// Shutdown ends the runs in progress or waiting (their workers are killed and their
// clients get an "error" event saying the server is shutting down), refuses new ones with
// 503, and waits for their handlers to finish or ctx to end. Call it when the HTTP server
// shuts down: http.Server.Shutdown waits for those handlers.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.shutdown()
	done := make(chan struct{})
	go func() { s.active.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("playground shutdown: runs still ending: %w", ctx.Err())
	}
}
