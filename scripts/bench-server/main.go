//go:build linux

// Command bench-server measures `wasmgap chat` beside the servers its users would pick
// instead, side by side in one run on one machine: nginx serving the chat page's own bytes,
// the source article's PHP chat (chat.php: one php-cli process, stream_select, in memory) and
// the same chat on Node's http module (chat.js). The peers are written for this project and
// embedded in this program; each one serves the same page, fetched from a running
// `wasmgap chat` at start.
//
// Method. Each server is started on a free port of 127.0.0.1, loaded, and stopped (its whole
// process group) before the next one starts, so no two servers compete for the machine
// (with -interleave, all are started at once and the runs go round the servers rep by rep,
// so that the bad seconds of a busy machine fall on every server alike):
//
//   - ab -n N -c 10 /                      the article's run: HTTP/1.0, a connection per request
//   - wrk -t <cores> -c 100 -d D /         keep-alive
//   - wasmgap load -c 100 -d D /           keep-alive, then again with --no-keepalive
//   - ab -n N -c 10 /msg/mary/john%20hello with john logged in over SSE: the receiver counts
//     the "mary: hello" events it gets; a message answered but never delivered fails the row
//
// (the last only for the chat servers; `wasmgap chat --no-fsync` runs only the message
// route, since the page does not touch its store; -baseline adds an older wasmgap binary,
// measured on the page and the message route in the same run.) Each run is repeated -reps times and the
// median req/s is shown, with the tool's own p99 (ab prints whole milliseconds), the ratio
// to nginx and to the PHP chat for the same run, and the server's resident memory (the sum
// of VmRSS over its process group from /proc/PID/status) before the run, at its peak
// (sampled every 20 ms) and after it, and its CPU time (utime+stime from /proc/PID/stat,
// summed over the group) per 10,000 requests answered. `wasmgap chat` runs with
// --send-rate -1: the peers limit no sender, and ab must not meet a 429.
//
// A program that is not installed (php, node, nginx, wrk, ab) gives rows that say so and
// how to install it. Ctrl-C stops the load and every server started.
//
// With -fanout N it measures the chat beside Centrifugo instead: N receivers over WebSocket
// and SSE, broadcasts, and connection churn, against the floor of what the broadcasts' writes
// alone cost (fanout.go and floor.go say how).
//
// Usage: go run ./scripts/bench-server -wasmgap bin/wasmgap [-baseline old/wasmgap] [-n 10000]
// [-d 5s] [-reps 3] [-interleave] [-servers wasmgap,nginx,...] [-markdown]
//
//	go run ./scripts/bench-server -wasmgap bin/wasmgap -fanout 10000 [-servers wasmgap,centrifugo,floor]
//	[-broadcasts 41] [-broadcast-rate 10] [-churn 1000] [-churn-time 10s] [-reps 3] [-markdown]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/wasmgap/wasmgap/internal/gotool"
)

func main() {
	serveFloorIfAsked()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line's settings, program paths resolved.
type options struct {
	wasmgap, baseline          string
	php, node, nginx, wrk, ab  string
	n                          int
	duration                   time.Duration
	reps                       int
	markdown                   bool
	interleave                 bool
	servers                    []string // keys of serverSpecs, in their order
	missing                    map[string]string
	abConns, loadConns, wrkThr int

	// The fan-out mode (fanout.go): receivers, broadcasts and their rate, churn.
	centrifugo    string
	fanout        int
	broadcasts    int
	broadcastRate float64
	churn         int
	churnTime     time.Duration

	// procs is the GOMAXPROCS of the Go servers (the chat, Centrifugo); 0: Go's default.
	procs int
}

func run(args []string, stdout, stderr io.Writer) int {
	o, code, err := parseOptions(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench-server: %v\n", err)
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.fanout > 0 {
		return runFanout(ctx, o, stdout, stderr)
	}
	env := environment(ctx, o)
	rows, err := bench(ctx, o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench-server: %v\n", err)
		return 1
	}
	printTable(stdout, o, env, rows)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "bench-server: interrupted: every server started was stopped")
		return 130
	}
	return 0
}

// parseOptions reads the flags; a bad flag is an error that says what is allowed, with the
// exit code 2.
func parseOptions(args []string, stderr io.Writer) (*options, int, error) {
	fs := flag.NewFlagSet("bench-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{abConns: 10, loadConns: 100}
	var servers string
	fs.StringVar(&o.wasmgap, "wasmgap", "bin/wasmgap", "path of the wasmgap binary (go build -o bin/wasmgap ./cmd/wasmgap)")
	fs.StringVar(&o.php, "php", "php", "path of php (php-cli)")
	fs.StringVar(&o.node, "node", "node", "path of node")
	fs.StringVar(&o.nginx, "nginx", "nginx", "path of nginx (also looked for in /usr/sbin)")
	fs.StringVar(&o.wrk, "wrk", "wrk", "path of wrk")
	fs.StringVar(&o.ab, "ab", "ab", "path of ab (apache2-utils)")
	fs.IntVar(&o.n, "n", 10000, "requests of each ab run (at least 10, ab's -c)")
	fs.DurationVar(&o.duration, "d", 5*time.Second, "duration of each wrk and wasmgap load run, whole seconds (wrk counts in seconds)")
	fs.IntVar(&o.reps, "reps", 3, "runs of each case (the median req/s is shown)")
	fs.BoolVar(&o.interleave, "interleave", false, "start every server at once and take the runs round the servers, rep by rep, so that a busy machine's noise falls on all of them alike (default: one server after the other)")
	fs.BoolVar(&o.markdown, "markdown", false, "print the table in Markdown (for docs/BENCHMARKS.md)")
	fs.StringVar(&o.baseline, "baseline", "", "path of an older wasmgap binary, measured on the page and the message route beside -wasmgap in the same run (adds the server wasmgap-baseline)")
	fs.IntVar(&o.fanout, "fanout", 0, "fan-out mode: this many receivers (e.g. 10000) on each of -servers wasmgap,centrifugo,floor (the floor: each broadcast's frame written to every connection, nothing else), over WebSocket and SSE, instead of the page and message runs")
	fs.IntVar(&o.broadcasts, "broadcasts", 41, "fan-out mode: messages broadcast to every receiver per run")
	fs.Float64Var(&o.broadcastRate, "broadcast-rate", 10, "fan-out mode: broadcasts per second")
	fs.IntVar(&o.churn, "churn", 1000, "fan-out mode: WebSocket connects (and closes) per second of the churn run (0: none)")
	fs.DurationVar(&o.churnTime, "churn-time", 10*time.Second, "fan-out mode: length of the churn run")
	fs.IntVar(&o.procs, "procs", 0, "GOMAXPROCS of the Go servers measured (wasmgap, centrifugo), the same for each: 0 leaves Go's default (every core); 1 leaves the other cores to the load tools, which share the machine")
	fs.StringVar(&o.centrifugo, "centrifugo", "", "fan-out mode: path of centrifugo (default: "+gotool.Centrifugo.Version+", built into the tools' cache at first use)")
	defaults := slices.DeleteFunc(specKeys(), func(k string) bool { return k == "wasmgap-baseline" })
	fs.StringVar(&servers, "servers", strings.Join(defaults, ","), "servers to measure, comma-separated, in this order (wasmgap-baseline: the -baseline binary)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./scripts/bench-server [flags]\n\nLoads wasmgap chat, nginx, a PHP chat and a Node chat one after the other on 127.0.0.1 and prints one table.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil, 0, err
		}
		return nil, 2, fmt.Errorf("bad flags: %w", err)
	}
	switch {
	case fs.NArg() > 0:
		return nil, 2, fmt.Errorf("unexpected arguments %q: every setting is a flag", fs.Args())
	case o.n < o.abConns:
		return nil, 2, fmt.Errorf("-n %d: at least %d (ab needs as many requests as connections)", o.n, o.abConns)
	case o.n > 10_000_000:
		return nil, 2, fmt.Errorf("-n %d: at most 10,000,000", o.n)
	case o.duration < time.Second || o.duration > 10*time.Minute:
		return nil, 2, fmt.Errorf("-d %v: allowed 1s to 10m", o.duration)
	case o.duration%time.Second != 0:
		return nil, 2, fmt.Errorf("-d %v: give whole seconds (wrk counts in seconds)", o.duration)
	case o.reps < 1 || o.reps > 100:
		return nil, 2, fmt.Errorf("-reps %d: allowed 1 to 100", o.reps)
	case o.procs < 0 || o.procs > runtime.NumCPU():
		return nil, 2, fmt.Errorf("-procs %d: allowed 0 (Go's default) to %d (this machine's cores)", o.procs, runtime.NumCPU())
	}
	if o.fanout > 0 {
		return fanoutOptions(o, fs, servers)
	}
	known := map[string]bool{}
	for _, k := range specKeys() {
		known[k] = true
	}
	seen := map[string]bool{}
	for _, s := range strings.Split(servers, ",") {
		s = strings.TrimSpace(s)
		if !known[s] {
			return nil, 2, fmt.Errorf("-servers: unknown server %q: allowed %s", s, strings.Join(specKeys(), ", "))
		}
		if !seen[s] {
			o.servers = append(o.servers, s)
			seen[s] = true
		}
	}
	switch hasBaseline := slices.Contains(o.servers, "wasmgap-baseline"); {
	case hasBaseline && o.baseline == "":
		return nil, 2, errors.New("-servers wasmgap-baseline: give the older binary with -baseline")
	case !hasBaseline && o.baseline != "":
		at := slices.Index(o.servers, "wasmgap") + 1 // beside wasmgap, or first
		o.servers = slices.Insert(o.servers, at, "wasmgap-baseline")
	}
	if o.baseline != "" {
		full, err := exec.LookPath(o.baseline)
		if err != nil {
			return nil, 1, fmt.Errorf("-baseline %s: %v", o.baseline, err)
		}
		if o.baseline, err = filepath.Abs(full); err != nil {
			return nil, 1, err
		}
	}
	full, err := exec.LookPath(o.wasmgap)
	if err != nil {
		return nil, 1, fmt.Errorf("wasmgap binary %s: %v (build it: go build -o bin/wasmgap ./cmd/wasmgap)", o.wasmgap, err)
	}
	// The servers run in folders of their own: every path must be absolute.
	if o.wasmgap, err = filepath.Abs(full); err != nil {
		return nil, 1, err
	}
	// wrk: one thread per core, as many as the machine has.
	o.wrkThr = min(runtime.NumCPU(), o.loadConns)
	o.missing = map[string]string{}
	for _, t := range []struct {
		name string
		path *string
		pkg  string
	}{
		{"php", &o.php, "php-cli"},
		{"node", &o.node, "nodejs"},
		{"nginx", &o.nginx, "nginx-light"},
		{"wrk", &o.wrk, "wrk"},
		{"ab", &o.ab, "apache2-utils"},
	} {
		full, err := lookPath(*t.path)
		if err != nil {
			o.missing[t.name] = fmt.Sprintf("%s not installed: apt-get install %s", t.name, t.pkg)
			continue
		}
		if *t.path, err = filepath.Abs(full); err != nil {
			return nil, 1, err
		}
	}
	return o, 0, nil
}

// lookPath finds a program on PATH, or in /usr/sbin (where Debian puts nginx, and which a
// user's PATH may lack).
func lookPath(p string) (string, error) {
	full, err := exec.LookPath(p)
	if err == nil || strings.Contains(p, "/") {
		return full, err
	}
	return exec.LookPath("/usr/sbin/" + p)
}
