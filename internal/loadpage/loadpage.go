// Package loadpage is the playground's load page: a form that runs the load generator (package
// load) against the server that serves it, and nothing else, and shows the run's progress and
// report as it streams in. It is mounted beside the playground under /load/.
//
// A run goes through three steps: the posted RunRequest is decoded, checked against the page's
// Limits and turned into the generator's options with this server as the only target, then
// run while its progress and its report stream back as NDJSON StreamEvents.
package loadpage

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/internal/httpguard"
	"github.com/wasmgap/wasmgap/internal/ndjson"
	"github.com/wasmgap/wasmgap/load"
)

// pageHTML is the page: one self-contained HTML file, its script and style inline, every URL
// in it relative.
//
//go:embed page.html
var pageHTML []byte

// pageCSP allows the page's own inline script (by hash) and style, and requests to this
// server only: an injected inline handler would not run even if some text ever reached the
// DOM as HTML.
var pageCSP = httpguard.PageCSP(pageHTML)

var pageLen = strconv.Itoa(len(pageHTML))

// Limits caps the runs started from the page. The zero value of each field selects the
// default shown in its comment.
type Limits struct {
	MaxRequests    int           // 20,000
	MaxConnections int           // 50
	MaxDuration    time.Duration // 10s
	MaxRate        float64       // 5,000 per second
	MaxReceivers   int           // 200 (chat scenarios)
	MaxMessages    int           // 5,000 (chat scenarios)
}

func (l Limits) withDefaults() Limits {
	if l.MaxRequests <= 0 {
		l.MaxRequests = 20000
	}
	if l.MaxConnections <= 0 {
		l.MaxConnections = 50
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = 10 * time.Second
	}
	if l.MaxRate <= 0 {
		l.MaxRate = 5000
	}
	if l.MaxReceivers <= 0 {
		l.MaxReceivers = 200
	}
	if l.MaxMessages <= 0 {
		l.MaxMessages = 5000
	}
	return l
}

// Options configures the load page.
type Options struct {
	// BaseURL is this server's own address, e.g. "http://127.0.0.1:8080". Every run targets
	// it and nothing else; without it the page refuses to run anything.
	BaseURL string
	// ChatPath is the chat's path on this server, e.g. "/chat/" (the chat scenarios need it;
	// empty: "/chat/").
	ChatPath string
	// Limits caps the runs; zero fields select the defaults.
	Limits Limits
}

// StreamEvent is one line of the NDJSON stream the page reads while a run goes.
type StreamEvent struct {
	Type     string         `json:"type"` // "progress", "report" or "error"
	Progress *load.Progress `json:"progress,omitempty"`
	Report   *load.Report   `json:"report,omitempty"`
	Error    string         `json:"error,omitempty"`
}

// Handler serves the load page and its API, to be mounted under a prefix with
// http.StripPrefix (e.g. "/load"): GET / is the page, GET /limits the caps, POST /run starts a
// run against this server only and streams NDJSON StreamEvents. One run goes at a time, and
// only a JSON body from this server's own origin (or from a client that is not a browser)
// starts one. The Host header is the server's to check (httpguard.Hosts in front of it all).
func Handler(opts Options) http.Handler {
	h := &handler{opts: opts, limits: opts.Limits.withDefaults()}
	if h.opts.ChatPath == "" {
		h.opts.ChatPath = "/chat/"
	}
	if !strings.HasSuffix(h.opts.ChatPath, "/") {
		h.opts.ChatPath += "/"
	}
	if u, err := url.Parse(opts.BaseURL); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		h.base = &url.URL{Scheme: u.Scheme, Host: u.Host}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.page)
	mux.HandleFunc("GET /limits", h.serveLimits)
	// A run is started only from a page of this server's own origin (or by a client that is
	// not a browser): another site's page cannot spend this server's cores.
	mux.Handle("POST /run", httpguard.CrossOrigin(http.HandlerFunc(h.run)))
	return mux
}

type handler struct {
	opts   Options
	limits Limits
	base   *url.URL // nil: not configured, nothing runs
	busy   sync.Mutex
}

func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Length", pageLen)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Security-Policy", pageCSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	if r.Method == http.MethodHead {
		return
	}
	w.Write(pageHTML)
}

func (h *handler) serveLimits(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	target := ""
	if h.base != nil {
		target = h.base.String()
	}
	json.NewEncoder(w).Encode(map[string]any{
		"target": target, "chat_path": h.opts.ChatPath,
		"max_requests": h.limits.MaxRequests, "max_connections": h.limits.MaxConnections,
		"max_duration_s": h.limits.MaxDuration.Seconds(), "max_rate": h.limits.MaxRate,
		"max_receivers": h.limits.MaxReceivers, "max_messages": h.limits.MaxMessages,
	})
}

// progressEvery is how often a run streams its progress to the page.
const progressEvery = 200 * time.Millisecond

func (h *handler) run(w http.ResponseWriter, r *http.Request) {
	if h.base == nil {
		http.Error(w, "load runs are off: the server did not give the load page its own address", http.StatusServiceUnavailable)
		return
	}
	// A JSON content type makes a cross-site form post impossible without a CORS preflight,
	// which this handler never grants.
	if err := httpguard.RequireJSON(r); err != nil {
		http.Error(w, "POST the run as JSON: "+err.Error(), http.StatusUnsupportedMediaType)
		return
	}
	req, err := decodeRunRequest(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		http.Error(w, err.Error(), httpguard.BodyStatus(err, http.StatusBadRequest))
		return
	}
	p, err := h.plan(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !h.busy.TryLock() {
		http.Error(w, "a load run is already going on this server: wait for it to finish", http.StatusConflict)
		return
	}
	defer h.busy.Unlock()

	// A client that has gone away is not an error of the stream: the run's context ends it.
	st := ndjson.Start(w)
	progress := func(pr load.Progress) { _ = st.Send(StreamEvent{Type: "progress", Progress: &pr}) }
	var rep *load.Report
	if p.http != nil {
		p.http.Progress, p.http.ProgressEvery = progress, progressEvery
		rep, err = load.Run(r.Context(), *p.http)
	} else {
		p.chat.Progress, p.chat.ProgressEvery = progress, progressEvery
		rep, err = load.RunScenario(r.Context(), *p.chat)
	}
	if err != nil {
		_ = st.Send(StreamEvent{Type: "error", Error: err.Error()})
		return
	}
	_ = st.Send(StreamEvent{Type: "report", Report: rep})
}
