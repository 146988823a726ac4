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
//	POST /api/run       {kernel, engine, args, runs, warmup}: NDJSON events, the last a result
//	GET  /api/history   the articles' historical figures
//	/chat/, /load/      the chat and load handlers, when Options sets them
//	GET  /…             the page (web/dist)
package playground

import (
	"context"
	"io/fs"
	"net/http"
	"runtime"
	"time"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/measure"
	"github.com/wasmgap/wasmgap/runner"
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
	// answers 503.
	MaxQueued int
	// Timeout bounds one run, setup included; 0 means the runner's default (30s).
	Timeout time.Duration
	// Chat, when set, is mounted under /chat/ (with the prefix stripped) and the page
	// shows it in a side panel.
	Chat http.Handler
	// Load, when set, is mounted under /load/ (with the prefix stripped) and the page
	// shows it in a side panel.
	Load http.Handler
}

// Limits on one run, as the API enforces and reports them.
const (
	DefaultRuns   = 5
	MaxRuns       = 100
	DefaultWarmup = 1
	MaxWarmup     = 100
	// defaultMaxQueued is Options.MaxQueued's default.
	defaultMaxQueued = 64
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
	env     environment
	run     runFunc
	mux     *http.ServeMux
}

// New returns a server for the options.
func New(opts Options) *Server {
	s := &Server{opts: opts, run: runner.Run, env: currentEnvironment()}
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
	dist := opts.Dist
	if dist == nil {
		dist = web.Dist()
	}
	s.static = newStatic(dist)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/kernels", s.handleKernels)
	mux.HandleFunc("GET /api/expected", s.handleExpected)
	mux.HandleFunc("POST /api/run", s.handleRun)
	mux.HandleFunc("GET /api/history", s.handleHistory)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, apiError{Error: "no such API route: " + r.Method + " " + r.URL.Path +
			"; routes are GET /api/kernels, GET /api/expected, POST /api/run, GET /api/history"})
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
	s.mux.ServeHTTP(w, r)
}
