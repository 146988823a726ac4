package loadpage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/load"
)

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

// Bounds of a run request beyond Limits.
const (
	maxRequestBytes = 128 << 10 // the posted JSON
	maxBodyBytes    = 64 << 10  // the body an http run sends
	// runSlack is how long a run may outlive its duration bound (connecting receivers,
	// draining deliveries, the last answers) before its hard time cap ends it.
	runSlack = 30 * time.Second
	// requestTimeout bounds each request (or send) of a run from the page.
	requestTimeout = 10 * time.Second
	// drain is how long a chat scenario waits for deliveries after its last send.
	drain = 3 * time.Second
)

// errBadRun is a run request that breaks the page's rules.
var errBadRun = errors.New("bad run request")

// decodeRunRequest reads one JSON object with only RunRequest's fields, and nothing after it.
func decodeRunRequest(r io.Reader) (*RunRequest, error) {
	var req RunRequest
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the body is empty: post one JSON object, e.g. {\"path\":\"/\",\"n\":1000}", errBadRun)
		}
		return nil, fmt.Errorf("%w: %w (post one JSON object with the fields scenario, path, method, body, c, n, d, rate, no_keepalive, http10, receivers, transport)", errBadRun, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: more after the JSON object: post exactly one object", errBadRun)
	}
	return &req, nil
}

// plan is a checked run: exactly one of http and chat is set.
type plan struct {
	http *load.Options
	chat *load.ScenarioOptions
}

// plan turns a page request into bounded run options against this server. Every number is
// checked against the limits before it is converted, so that no overflow slips past them.
func (h *handler) plan(req *RunRequest) (plan, error) {
	l := h.limits
	bad := func(format string, a ...any) (plan, error) {
		return plan{}, fmt.Errorf("%w: "+format, append([]any{errBadRun}, a...)...)
	}
	if req.Requests < 0 || req.Duration < 0 || req.Rate < 0 || req.Connections < 0 || req.Receivers < 0 {
		return bad("counts, durations and rates must not be negative")
	}
	if req.Requests == 0 && req.Duration == 0 {
		return bad("give a count (n) or a duration (d): every run is bounded")
	}
	if req.Duration > l.MaxDuration.Seconds() {
		return bad("duration %gs: at most %s from this page", req.Duration, l.MaxDuration)
	}
	d := time.Duration(req.Duration * float64(time.Second))
	if req.Requests == 0 && d <= 0 {
		return bad("duration %gs: too short to run, give at least 1ms or a count (n)", req.Duration)
	}
	if req.Rate > l.MaxRate {
		return bad("rate %g: at most %g per second from this page", req.Rate, l.MaxRate)
	}
	if req.Connections > l.MaxConnections {
		return bad("connections %d: at most %d from this page", req.Connections, l.MaxConnections)
	}
	maxTime := l.MaxDuration + runSlack
	switch req.Scenario {
	case "", "http":
		if req.Requests > l.MaxRequests {
			return bad("requests %d: at most %d from this page", req.Requests, l.MaxRequests)
		}
		method := strings.ToUpper(req.Method)
		switch method {
		case "":
			method = "GET"
		case "GET", "HEAD", "POST":
		default:
			return bad("method %q: GET, HEAD or POST", req.Method)
		}
		if len(req.Body) > maxBodyBytes {
			return bad("body of %d bytes: at most 64 KiB", len(req.Body))
		}
		target, err := h.targetURL(req.Path)
		if err != nil {
			return plan{}, err
		}
		o := load.Options{
			Request:     load.Request{Method: method, URL: target, Body: []byte(req.Body)},
			Connections: max(req.Connections, 1), Requests: req.Requests, Duration: d, Rate: req.Rate,
			NoKeepAlive: req.NoKeepAlive, HTTP10: req.HTTP10, Timeout: requestTimeout, MaxTime: maxTime,
		}
		if err := o.Validate(); err != nil {
			return bad("%v", err)
		}
		return plan{http: &o}, nil
	case load.ScenarioChatSend, load.ScenarioSSEFanout, load.ScenarioWSFanout:
		if req.Requests > l.MaxMessages {
			return bad("messages %d: at most %d from this page", req.Requests, l.MaxMessages)
		}
		if req.Receivers > l.MaxReceivers {
			return bad("receivers %d: at most %d from this page", req.Receivers, l.MaxReceivers)
		}
		target, err := h.targetURL(h.opts.ChatPath)
		if err != nil {
			return plan{}, err
		}
		o := load.ScenarioOptions{Scenario: req.Scenario, Target: target, Receivers: req.Receivers,
			Transport: req.Transport, Concurrency: req.Connections, Messages: req.Requests, Duration: d,
			Rate: req.Rate, Drain: drain, Timeout: requestTimeout, MaxTime: maxTime}
		if req.Connections > 0 {
			o.Senders = req.Connections
		}
		if err := o.Validate(); err != nil {
			return bad("%v", err)
		}
		return plan{chat: &o}, nil
	default:
		return bad("scenario %q: http, chat-send, sse-fanout or ws-fanout", req.Scenario)
	}
}

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
