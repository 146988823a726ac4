package load

import (
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"time"
)

// Request describes the one HTTP request a run sends again and again.
type Request struct {
	Method string      // GET when empty
	URL    string      // absolute http:// or https:// URL
	Header http.Header // extra headers; Host overrides the URL's host
	Body   []byte      // sent with a Content-Length
}

func (r *Request) method() string {
	if r.Method == "" {
		return "GET"
	}
	return strings.ToUpper(r.Method)
}

// Client names an HTTP client implementation.
type Client string

const (
	// ClientRaw speaks HTTP/1.x on its own connection per worker goroutine: the fallback
	// default (open model, https, other systems). It and ClientEpoll can send HTTP/1.0.
	ClientRaw Client = "raw"
	// ClientStd uses net/http with a Transport whose pool is sized to the connections.
	ClientStd Client = "std"
	// ClientEpoll is the raw client driven by one epoll event loop per core instead of a
	// goroutine per connection, as wrk works (Linux, plain http, closed model).
	ClientEpoll Client = "epoll"
)

// Defaults and limits.
const (
	// DefaultTimeout bounds each request when Options.Timeout is zero.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxTime bounds a whole run when Options.MaxTime is zero.
	DefaultMaxTime = 10 * time.Minute
	// MaxConnections is the most connections one run may open.
	MaxConnections = 20000
	// DefaultLateAfter is how far behind its intended send time a request may start before
	// it counts as late, in the open model.
	DefaultLateAfter = time.Millisecond
)

// Options configures an HTTP run. The zero value of every field but Request.URL, Connections
// and one of Requests or Duration is right.
type Options struct {
	Request Request

	// Connections is the number of concurrent workers, each with its own connection when
	// keep-alive is on (ab -c, wrk -c). 1 when zero.
	Connections int
	// Requests stops the run after that many measured requests (ab -n). 0: no count bound.
	Requests int
	// Duration stops the run after that long, not counting the warm-up (wrk -d). 0: no time
	// bound other than MaxTime. One of Requests and Duration must be set.
	Duration time.Duration
	// Rate, when positive, selects the open model: Rate requests per second in total across
	// all connections, latency measured from each request's intended send time (wrk2 -R).
	// Zero selects the closed model.
	Rate float64
	// Ramp, when positive, ramps the open model's rate up linearly from 0 to Rate over
	// that long (LinearPacer), then holds it; each phase (the warm-up, then the measured
	// run) starts its ramp anew. Zero: Rate from the start (ConstantPacer).
	Ramp time.Duration
	// Warmup runs the same load for that long before measuring; its requests are not counted.
	Warmup time.Duration

	// NoKeepAlive opens a new connection for every request (ab without -k).
	NoKeepAlive bool
	// HTTP10 sends HTTP/1.0 requests, as ab does (raw and epoll clients; net/http cannot). With keep-alive on, it
	// sends "Connection: keep-alive", as ab -k does.
	HTTP10 bool
	// Client selects the HTTP client. Empty: ClientEpoll where it applies (Linux, http, the
	// closed model), ClientRaw otherwise.
	Client Client
	// Loops is the number of event loops (threads) of ClientEpoll, as wrk -t. Zero: one fewer
	// than GOMAXPROCS, at least one, so that one processor stays free for the Go runtime and
	// whatever else the process runs (a loop on every processor makes the runtime hand
	// processors back and forth on every blocking wait, which costs more CPU than it gives);
	// never more than Connections.
	Loops int
	// Timeout bounds each request, connection included; DefaultTimeout when zero.
	Timeout time.Duration
	// Insecure skips TLS certificate verification for https targets.
	Insecure bool

	// MaxTime is a hard bound on the whole run, warm-up included; DefaultMaxTime when zero.
	MaxTime time.Duration
	// LateAfter is the open model's tolerance before a request counts as late;
	// DefaultLateAfter when zero.
	LateAfter time.Duration

	// Progress, when set, is called about every ProgressEvery with the run's progress,
	// from one goroutine, never concurrently.
	Progress func(Progress)
	// ProgressEvery is the period of Progress calls; 250ms when zero.
	ProgressEvery time.Duration
	// Pid, when positive, is a process (the server) whose RSS and CPU are sampled during
	// the run (Linux /proc only).
	Pid int
}

func (o *Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

func (o *Options) maxTime() time.Duration {
	if o.MaxTime <= 0 {
		return DefaultMaxTime
	}
	return o.MaxTime
}

func (o *Options) lateAfter() time.Duration {
	if o.LateAfter <= 0 {
		return DefaultLateAfter
	}
	return o.LateAfter
}

func (o *Options) progressEvery() time.Duration {
	if o.ProgressEvery <= 0 {
		return 250 * time.Millisecond
	}
	return o.ProgressEvery
}

// Validate says what is wrong with the options, if anything, and what is allowed.
func (o *Options) Validate() error {
	u, err := url.Parse(o.Request.URL)
	if err != nil {
		return fmt.Errorf("target URL %q: %v (want an absolute http:// or https:// URL)", o.Request.URL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("target URL %q: want an absolute http:// or https:// URL", o.Request.URL)
	}
	if o.Connections < 0 || o.Connections > MaxConnections {
		return fmt.Errorf("connections %d: allowed 1 to %d", o.Connections, MaxConnections)
	}
	if o.Loops < 0 || o.Loops > maxShards {
		return fmt.Errorf("loops %d: allowed 1 to %d (0: one fewer than GOMAXPROCS)", o.Loops, maxShards)
	}
	if o.Loops > 0 && o.Client != "" && o.Client != ClientEpoll {
		return fmt.Errorf("loops %d: only the %q client runs event loops", o.Loops, ClientEpoll)
	}
	if o.Requests < 0 {
		return fmt.Errorf("requests %d: must not be negative", o.Requests)
	}
	if o.Duration < 0 || o.Warmup < 0 || o.Timeout < 0 || o.MaxTime < 0 {
		return fmt.Errorf("durations must not be negative")
	}
	if o.Requests == 0 && o.Duration == 0 {
		return fmt.Errorf("unbounded run: set a request count, a duration, or both")
	}
	if o.Rate < 0 {
		return fmt.Errorf("rate %g: must not be negative (0 selects the closed model)", o.Rate)
	}
	if o.Rate > 0 && o.Rate > 10_000_000 {
		return fmt.Errorf("rate %g: allowed up to 10,000,000 requests per second", o.Rate)
	}
	if err := checkRamp(o.Ramp, o.Rate); err != nil {
		return err
	}
	switch o.Client {
	case "", ClientRaw:
	case ClientStd:
		if o.HTTP10 {
			return fmt.Errorf("HTTP/1.0 needs the raw client: net/http cannot send HTTP/1.0 requests")
		}
	case ClientEpoll:
		switch {
		case !epollSupported:
			return fmt.Errorf("client %q needs Linux: use %q", ClientEpoll, ClientRaw)
		case o.Rate > 0:
			return fmt.Errorf("client %q runs the closed model only: use %q with a rate", ClientEpoll, ClientRaw)
		case u.Scheme != "http":
			return fmt.Errorf("client %q speaks plain http only: use %q for https", ClientEpoll, ClientRaw)
		}
	default:
		return fmt.Errorf("client %q: allowed %q, %q or %q", o.Client, ClientRaw, ClientStd, ClientEpoll)
	}
	if o.Requests > 0 && o.Connections > o.Requests {
		return fmt.Errorf("connections %d exceed requests %d: each connection needs at least one request", o.Connections, o.Requests)
	}
	return nil
}

// loops is the number of event loops an epoll run uses.
func (o *Options) loops() int {
	n := o.Loops
	if n == 0 {
		n = max(runtime.GOMAXPROCS(0)-1, 1)
	}
	return max(min(n, o.Connections, maxShards), 1)
}
