package load

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

//go:embed page.html
var pageHTML []byte

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

// HandlerOptions configures the load page.
type HandlerOptions struct {
	// BaseURL is this server's own address, e.g. "http://127.0.0.1:8080". Every run targets
	// it and nothing else; without it the page refuses to run anything.
	BaseURL string
	// ChatPath is the chat's path on this server, e.g. "/chat/" (the chat scenarios need it;
	// empty: "/chat/").
	ChatPath string
	// Limits caps the runs; zero fields select the defaults.
	Limits Limits
}

// RunRequest is what the page posts to start a run. Paths are relative to the server: the
// page cannot name another host.
type RunRequest struct {
	Scenario    string  `json:"scenario"` // "http" (default), "chat-send", "sse-fanout", "ws-fanout"
	Path        string  `json:"path"`     // http: the path to load, e.g. "/"
	Method      string  `json:"method"`   // http: GET (default), HEAD or POST
	Body        string  `json:"body"`     // http: request body
	Connections int     `json:"c"`        // http: connections; chat-send: sends in flight
	Requests    int     `json:"n"`        // requests (http) or messages (chat scenarios)
	Duration    float64 `json:"d"`        // seconds
	Rate        float64 `json:"rate"`     // per second; 0: closed model
	NoKeepAlive bool    `json:"no_keepalive"`
	HTTP10      bool    `json:"http10"`
	Receivers   int     `json:"receivers"` // chat scenarios
	Transport   string  `json:"transport"` // chat-send: sse or ws
}

// StreamEvent is one line of the NDJSON stream the page reads while a run goes.
type StreamEvent struct {
	Type     string    `json:"type"` // "progress", "report" or "error"
	Progress *Progress `json:"progress,omitempty"`
	Report   *Report   `json:"report,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Handler serves the load page and its API, to be mounted under a prefix with
// http.StripPrefix (e.g. "/load"): GET / is the page, GET /limits the caps, POST /run starts a
// run against this server only and streams NDJSON StreamEvents. One run goes at a time.
func Handler(opts HandlerOptions) http.Handler {
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
	mux.HandleFunc("POST /run", h.run)
	return mux
}

type handler struct {
	opts   HandlerOptions
	limits Limits
	base   *url.URL // nil: not configured, nothing runs
	busy   sync.Mutex
}

func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'")
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

// errBadRun is a run request that breaks the page's rules.
var errBadRun = errors.New("bad run request")

// targetURL joins a path to this server's base URL, refusing anything that would leave it.
func (h *handler) targetURL(path string) (string, error) {
	if path == "" {
		path = "/"
	}
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || strings.ContainsAny(path, "\\\r\n\t ") {
		return "", fmt.Errorf("%w: path %q: give a path on this server starting with one /, e.g. /chat/ (other hosts are not allowed)", errBadRun, path)
	}
	u, err := url.Parse(h.base.String() + path)
	if err != nil {
		return "", fmt.Errorf("%w: path %q: %v", errBadRun, path, err)
	}
	if u.Scheme != h.base.Scheme || u.Host != h.base.Host || u.User != nil {
		return "", fmt.Errorf("%w: path %q leaves this server", errBadRun, path)
	}
	return u.String(), nil
}

// options turns a page request into bounded run options.
func (h *handler) options(req *RunRequest) (any, error) {
	l := h.limits
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{errBadRun}, a...)...)
	}
	if req.Requests < 0 || req.Duration < 0 || req.Rate < 0 || req.Connections < 0 || req.Receivers < 0 {
		return nil, bad("counts, durations and rates must not be negative")
	}
	if req.Requests == 0 && req.Duration == 0 {
		return nil, bad("give a count (n) or a duration (d): every run is bounded")
	}
	d := time.Duration(req.Duration * float64(time.Second))
	if d > l.MaxDuration {
		return nil, bad("duration %.1fs: at most %s from this page", req.Duration, l.MaxDuration)
	}
	if req.Rate > l.MaxRate {
		return nil, bad("rate %g: at most %g per second from this page", req.Rate, l.MaxRate)
	}
	if req.Connections > l.MaxConnections {
		return nil, bad("connections %d: at most %d from this page", req.Connections, l.MaxConnections)
	}
	maxTime := l.MaxDuration + 30*time.Second
	switch req.Scenario {
	case "", "http":
		if req.Requests > l.MaxRequests {
			return nil, bad("requests %d: at most %d from this page", req.Requests, l.MaxRequests)
		}
		method := strings.ToUpper(req.Method)
		switch method {
		case "":
			method = "GET"
		case "GET", "HEAD", "POST":
		default:
			return nil, bad("method %q: GET, HEAD or POST", req.Method)
		}
		if len(req.Body) > 64<<10 {
			return nil, bad("body of %d bytes: at most 64 KiB", len(req.Body))
		}
		target, err := h.targetURL(req.Path)
		if err != nil {
			return nil, err
		}
		o := Options{
			Request:     Request{Method: method, URL: target, Body: []byte(req.Body)},
			Connections: max(req.Connections, 1), Requests: req.Requests, Duration: d, Rate: req.Rate,
			NoKeepAlive: req.NoKeepAlive, HTTP10: req.HTTP10, Timeout: 10 * time.Second, MaxTime: maxTime,
		}
		if err := o.Validate(); err != nil {
			return nil, bad("%v", err)
		}
		return o, nil
	case ScenarioChatSend, ScenarioSSEFanout, ScenarioWSFanout:
		if req.Requests > l.MaxMessages {
			return nil, bad("messages %d: at most %d from this page", req.Requests, l.MaxMessages)
		}
		if req.Receivers > l.MaxReceivers {
			return nil, bad("receivers %d: at most %d from this page", req.Receivers, l.MaxReceivers)
		}
		target, err := h.targetURL(h.opts.ChatPath)
		if err != nil {
			return nil, err
		}
		o := ScenarioOptions{Scenario: req.Scenario, Target: target, Receivers: req.Receivers,
			Transport: req.Transport, Concurrency: req.Connections, Messages: req.Requests, Duration: d,
			Rate: req.Rate, Drain: 3 * time.Second, Timeout: 10 * time.Second, MaxTime: maxTime}
		if req.Connections > 0 {
			o.Senders = req.Connections
		}
		if err := o.Validate(); err != nil {
			return nil, bad("%v", err)
		}
		return o, nil
	default:
		return nil, bad("scenario %q: http, chat-send, sse-fanout or ws-fanout", req.Scenario)
	}
}

func (h *handler) run(w http.ResponseWriter, r *http.Request) {
	if h.base == nil {
		http.Error(w, "load runs are off: the server did not give the load page its own address", http.StatusServiceUnavailable)
		return
	}
	// A JSON content type makes a cross-site form post impossible without a CORS preflight,
	// which this handler never grants.
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		http.Error(w, "POST the run as JSON (Content-Type: application/json)", http.StatusUnsupportedMediaType)
		return
	}
	var req RunRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 128<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, "bad run request: "+err.Error(), http.StatusBadRequest)
		return
	}
	opts, err := h.options(&req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !h.busy.TryLock() {
		http.Error(w, "a load run is already going on this server: wait for it to finish", http.StatusConflict)
		return
	}
	defer h.busy.Unlock()

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	send := func(ev StreamEvent) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(ev)
		rc.Flush()
	}
	progress := func(p Progress) { send(StreamEvent{Type: "progress", Progress: &p}) }
	var rep *Report
	switch o := opts.(type) {
	case Options:
		o.Progress, o.ProgressEvery = progress, 200*time.Millisecond
		rep, err = Run(r.Context(), o)
	case ScenarioOptions:
		o.Progress, o.ProgressEvery = progress, 200*time.Millisecond
		rep, err = RunScenario(r.Context(), o)
	}
	if err != nil {
		send(StreamEvent{Type: "error", Error: err.Error()})
		return
	}
	send(StreamEvent{Type: "report", Report: rep})
}
