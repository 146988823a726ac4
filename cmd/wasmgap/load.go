package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/wasmgap/wasmgap/load"
)

const loadUsage = `usage:
  wasmgap load [flags] URL                 HTTP load on one URL (closed model, or open with -R)
  wasmgap load chat-send [flags] --target URL   K receivers, senders posting to them
  wasmgap load sse-fanout [flags] --target URL  S SSE subscribers, one broadcaster
  wasmgap load ws-fanout [flags] --target URL   S WebSocket subscribers, one broadcaster
  wasmgap load churn -R N [flags] --target URL  N logins per second, each out at its welcome
  (--target repeated or URL,URL: receivers and sends spread round-robin over the nodes)
  wasmgap load seed [--target URL]         the source articles' ab runs, beside their figures

Every run is bounded: give -n (requests), -d (duration) or both; --max-time caps it anyway.
Chat scenarios exit with 3 when messages were lost, 4 when not every receiver was welcomed
within --login-time (the report says how many were; nothing is sent then).
`

// headerFlags collects repeated -H "Name: value" flags.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

// outputFlags are shared by every load subcommand.
type outputFlags struct {
	format   string
	progress string
}

func (o *outputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.format, "format", "text", "output format: text or json")
	fs.StringVar(&o.progress, "progress", "auto", "live progress bar on stderr: auto (only on a terminal), on or off")
}

func (o *outputFlags) check() error {
	if o.format != "text" && o.format != "json" {
		return fmt.Errorf("--format %q: allowed text or json", o.format)
	}
	if o.progress != "auto" && o.progress != "on" && o.progress != "off" {
		return fmt.Errorf("--progress %q: allowed auto, on or off", o.progress)
	}
	return nil
}

// bar returns a progress callback drawing on stderr, or nil when no bar is wanted.
func (o *outputFlags) bar(stderr io.Writer) (func(load.Progress), func()) {
	show := o.progress == "on"
	if o.progress == "auto" {
		if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			show = true
		}
	}
	if !show {
		return nil, func() {}
	}
	drawn := false
	return func(p load.Progress) {
			const width = 30
			fill := int(p.Fraction * width)
			bar := strings.Repeat("#", fill) + strings.Repeat(".", width-fill)
			fmt.Fprintf(stderr, "\r%-7s [%s] %3.0f%%  %9d done  %9.0f/s  %d errors  %s   ",
				p.Phase, bar, p.Fraction*100, p.Done, p.Rate, p.Errors, p.Elapsed.Round(100*time.Millisecond))
			drawn = true
		}, func() {
			if drawn {
				fmt.Fprint(stderr, "\r\033[K")
			}
		}
}

func (o *outputFlags) write(stdout io.Writer, rep *load.Report) error {
	if o.format == "json" {
		return load.WriteJSON(stdout, rep)
	}
	return load.WriteText(stdout, rep)
}

// interruptible returns a context cancelled by Ctrl-C or SIGTERM, so a run stops early but
// still reports.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// loadScenarios are load's named scenarios, the first argument that is not a URL.
var loadScenarios = []string{"chat-send", "sse-fanout", "ws-fanout", "churn", "seed"}

func runLoad(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "chat-send", "sse-fanout", "ws-fanout", "churn":
			return runLoadScenario(args[0], args[1:], stdout, stderr)
		case "seed":
			return runLoadSeed(args[1:], stdout, stderr)
		}
	}
	return runLoadHTTP(args, stdout, stderr)
}

func runLoadHTTP(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), loadUsage, "\nflags for HTTP load:\n")
		fs.PrintDefaults()
	}
	var (
		o           load.Options
		out         outputFlags
		headers     headerFlags
		body        string
		bodyFile    string
		headersFile string
		client      string
	)
	fs.IntVar(&o.Connections, "c", 1, "concurrent connections (workers)")
	fs.IntVar(&o.Requests, "n", 0, "measured requests to send (0: bounded by -d only)")
	fs.DurationVar(&o.Duration, "d", 0, "measured duration, e.g. 10s (0: bounded by -n only)")
	fs.Float64Var(&o.Rate, "R", 0, "open model: total requests per second across all connections (0: closed model)")
	fs.DurationVar(&o.Ramp, "ramp", 0, "open model: ramp the rate up linearly from 0 to -R over this long, then hold it (0: -R from the start)")
	fs.DurationVar(&o.Warmup, "warmup", 0, "warm-up duration before measuring, excluded from the figures")
	fs.StringVar(&o.Request.Method, "m", "GET", "HTTP method")
	fs.Var(&headers, "H", `request header "Name: value" (repeatable)`)
	fs.StringVar(&headersFile, "headers-file", "", `file of request headers, one "Name: value" per line`)
	fs.StringVar(&body, "body", "", "request body")
	fs.StringVar(&bodyFile, "body-file", "", "file whose content is the request body")
	fs.BoolVar(&o.NoKeepAlive, "no-keepalive", false, "open a new connection for every request (as ab without -k)")
	fs.BoolVar(&o.HTTP10, "http1.0", false, "send HTTP/1.0 requests (as ab does; raw client only)")
	fs.StringVar(&client, "client", "auto", "HTTP client: auto (epoll where it applies, else raw), epoll (event loop per core, like wrk), raw (HTTP/1.x on a goroutine per connection) or std (net/http, pool sized to -c)")
	fs.IntVar(&o.Loops, "t", 0, "event loops (threads) of the epoll client, as wrk -t (0: one fewer than GOMAXPROCS, at least 1)")
	fs.DurationVar(&o.Timeout, "timeout", load.DefaultTimeout, "timeout of each request")
	fs.DurationVar(&o.MaxTime, "max-time", load.DefaultMaxTime, "hard cap on the whole run, warm-up included")
	fs.IntVar(&o.Pid, "pid", 0, "sample this process's RSS and CPU during the run (Linux)")
	fs.BoolVar(&o.Insecure, "insecure", false, "skip TLS certificate verification")
	cpuProfile := fs.String("cpuprofile", "", "write the generator's own CPU profile to this file")
	out.register(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "wasmgap load: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() != 1 {
		return fail("want exactly one URL after the flags, got %d arguments (see -h)", fs.NArg())
	}
	if !strings.Contains(fs.Arg(0), "://") {
		return fail("%q is neither a scenario nor a URL: the scenarios are %s; a URL starts with http:// or https://", fs.Arg(0), strings.Join(loadScenarios, ", "))
	}
	if err := out.check(); err != nil {
		return fail("%v", err)
	}
	if o.Requests == 0 && o.Duration == 0 {
		return fail("refusing an unbounded run: give -n (requests), -d (duration) or both")
	}
	if o.Connections < 1 {
		return fail("-c %d: want at least 1 connection", o.Connections)
	}
	o.Request.URL = fs.Arg(0)
	if client != "auto" {
		o.Client = load.Client(client)
	}
	if o.Loops < 0 {
		return fail("-t %d: want 1 or more event loops, or 0 for the default", o.Loops)
	}
	h, err := parseHeaders(headers, headersFile)
	if err != nil {
		return fail("%v", err)
	}
	o.Request.Header = h
	if body != "" && bodyFile != "" {
		return fail("give --body or --body-file, not both")
	}
	o.Request.Body = []byte(body)
	if bodyFile != "" {
		if o.Request.Body, err = os.ReadFile(bodyFile); err != nil {
			return fail("read --body-file: %v", err)
		}
	}
	if err := o.Validate(); err != nil {
		return fail("%v", err)
	}
	progress, clear := out.bar(stderr)
	o.Progress = progress
	ctx, stop := interruptible()
	defer stop()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fail("--cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail("--cpuprofile: %v", err)
		}
		defer pprof.StopCPUProfile()
	}
	rep, err := load.Run(ctx, o)
	clear()
	if err != nil {
		return exitf(stderr, 1, "wasmgap load: %v", err)
	}
	if err := out.write(stdout, rep); err != nil {
		return exitf(stderr, 1, "wasmgap load: write report: %v", err)
	}
	return requestsFailed("wasmgap load", rep, stderr)
}

// requestsFailed is the exit status of an HTTP load run after its report: 1, said on
// stderr, when nothing succeeded or any request failed (a script must not read a run
// against a dead server as a fast one), else 0.
func requestsFailed(cmd string, rep *load.Report, stderr io.Writer) int {
	failed := rep.ErrorCount()
	switch {
	case rep.OK == 0:
		return exitf(stderr, 1, "%s: no request succeeded (%d sent, %d failed): the report's Errors lines say why", cmd, rep.Sent, failed)
	case failed > 0:
		return exitf(stderr, 1, "%s: %d of %d requests failed: the report's Errors lines say why", cmd, failed, rep.Sent)
	}
	return 0
}

// parseHeaders reads -H flags and a headers file into an http.Header.
func parseHeaders(flags []string, file string) (http.Header, error) {
	lines := append([]string(nil), flags...)
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read --headers-file: %w", err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
	}
	h := http.Header{}
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
			return nil, fmt.Errorf("header %q: want \"Name: value\"", l)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}
