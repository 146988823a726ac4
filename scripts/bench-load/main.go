// Command bench-load runs wasmgap load, wrk, ab and vegeta against the same servers with the
// same connections and keep-alive setting, one after the other, and prints their requests/s
// and p99 side by side with the ratio to wrk.
//
// Servers: a CPU-bound Go server limited to one core and a Go handler that sleeps 2 ms (the
// server is the bottleneck: every tool should measure the same rate), the chat's page served
// by `wasmgap chat` (the same binary), and nginx with one worker (a fast server: the tools
// measure how much load they can generate). Each tool runs -reps times per case,
// alternating, and the median is shown. -baseline adds a second wasmgap binary (an older
// build) as a fourth tool, so that a change is measured before and after in the same run;
// -only keeps the cases whose server name contains one of its comma-separated words.
//
// vegeta (the Go tool its users know) runs every closed case as wrk does (-rate=0 with as
// many workers as connections), and the open case, a fixed rate on the 2 ms server, beside
// `wasmgap load -R` (wrk and ab have no open model: they sit that case out). The pinned vegeta
// is built from the module proxy into the tools' cache at first use (internal/gotool);
// -vegeta names another binary.
//
// The table starts with the date, the machine and the tools' versions.
//
// Usage: go run ./scripts/bench-load -wasmgap bin/wasmgap [-baseline old/wasmgap] [-only chat,nginx] [-d 5s] [-reps 3] [-markdown]
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/benchtool"
	"github.com/wasmgap/wasmgap/internal/gotool"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	wasmgap  string
	baseline string
	only     string
	wrk, ab  string
	vegeta   string
	nginx    string
	duration time.Duration
	reps     int
	markdown bool
}

// benchCase is one server and one client setting, run by every tool.
type benchCase struct {
	server    string // "go-cpu" or "nginx"
	url       string
	conns     int
	keepAlive bool
	// rate, when set, makes the case an open model: this many requests per second, sent
	// whether or not the answers keep up (wasmgap load -R, vegeta -rate), which wrk and ab
	// cannot do.
	rate int
}

// closedOnly are the tools with no open model.
var closedOnly = map[string]bool{"wrk": true, "ab": true}

// measurement is one tool's result on one case.
type measurement struct {
	tool   string
	rps    []float64
	p99    []time.Duration
	errors int64 // failed requests over all runs, as the tool counts them
	// cpuPerReq is the tool's own CPU time (user + system, from the kernel's rusage) per
	// request, one value per run: how much of the machine the tool needs for a request,
	// which other processes on a shared machine disturb far less than the rate.
	cpuPerReq []time.Duration
	err       error
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.wasmgap, "wasmgap", "bin/wasmgap", "path of the wasmgap binary")
	fs.StringVar(&o.baseline, "baseline", "", "path of another wasmgap binary (an older build), run as one more tool")
	fs.StringVar(&o.only, "only", "", "comma-separated words: keep only the cases whose server name contains one (e.g. chat,nginx)")
	fs.StringVar(&o.wrk, "wrk", "wrk", "path of wrk")
	fs.StringVar(&o.ab, "ab", "ab", "path of ab (apache2-utils)")
	fs.StringVar(&o.nginx, "nginx", "/usr/sbin/nginx", "path of nginx (skipped when absent)")
	fs.StringVar(&o.vegeta, "vegeta", "", "path of vegeta (default: "+gotool.Vegeta.Name+" "+gotool.Vegeta.Version+", built into the tools' cache at first use)")
	fs.DurationVar(&o.duration, "d", 5*time.Second, "duration of each tool's run")
	fs.IntVar(&o.reps, "reps", 3, "runs per tool and case (the median is shown)")
	fs.BoolVar(&o.markdown, "markdown", false, "print a Markdown table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.reps < 1 || o.duration <= 0 {
		fmt.Fprintln(stderr, "bench-load: -reps must be at least 1 and -d positive")
		return 2
	}
	if o.vegeta == "" {
		p, err := gotool.Vegeta.Ensure(context.Background(), stderr)
		if err != nil {
			fmt.Fprintf(stderr, "bench-load: %v (or give -vegeta PATH)\n", err)
			return 1
		}
		o.vegeta = p
	}
	paths := []*string{&o.wasmgap, &o.wrk, &o.ab, &o.vegeta}
	if o.baseline != "" {
		paths = append(paths, &o.baseline)
	}
	for _, p := range paths {
		full, err := exec.LookPath(*p)
		if err != nil {
			fmt.Fprintf(stderr, "bench-load: %s not found: %v\n", *p, err)
			return 1
		}
		*p = full
	}

	// The machine and the tools' versions, for the table's header (before any load runs).
	nginxMissing := ""
	if _, err := os.Stat(o.nginx); err != nil {
		nginxMissing = "absent: the fast-server cases are skipped"
	}
	env := benchtool.Environment(context.Background(), []benchtool.Program{
		{Name: "wasmgap", Path: o.wasmgap, Args: []string{"version"}},
		{Name: "wrk", Path: o.wrk, Args: []string{"-v"}},
		{Name: "ab", Path: o.ab, Args: []string{"-V"}},
		{Name: "vegeta", Path: o.vegeta, GoBuildInfo: true},
		{Name: "nginx", Path: o.nginx, Args: []string{"-v"}, Missing: nginxMissing},
	})

	goURL, stopGo, err := startCPUServer()
	if err != nil {
		fmt.Fprintf(stderr, "bench-load: %v\n", err)
		return 1
	}
	defer stopGo()
	cases := []benchCase{
		{"go-cpu (1 core)", goURL, 10, true, 0},
		{"go-cpu (1 core)", goURL, 100, true, 0},
		{"go-sleep (2 ms)", goURL + "sleep", 10, true, 0},
		{"go-sleep (2 ms)", goURL + "sleep", 50, true, 2000},
	}
	chatURL, stopChat, err := startChat(o.wasmgap)
	if err != nil {
		fmt.Fprintf(stderr, "bench-load: %v\n", err)
		return 1
	}
	defer stopChat()
	cases = append(cases, benchCase{"wasmgap chat (page)", chatURL, 50, true, 0})
	if _, err := os.Stat(o.nginx); err == nil {
		ngURL, stopNginx, err := startNginx(o.nginx)
		if err != nil {
			fmt.Fprintf(stderr, "bench-load: %v\n", err)
			return 1
		}
		defer stopNginx()
		cases = append(cases,
			benchCase{"nginx (1 worker)", ngURL, 10, true, 0},
			benchCase{"nginx (1 worker)", ngURL, 100, true, 0},
			benchCase{"nginx (1 worker)", ngURL, 10, false, 0},
		)
	} else {
		fmt.Fprintf(stderr, "bench-load: %s absent: the fast-server cases are skipped\n", o.nginx)
	}

	if o.only != "" {
		var kept []benchCase
		for _, c := range cases {
			for _, w := range strings.Split(o.only, ",") {
				if w != "" && strings.Contains(c.server, w) {
					kept = append(kept, c)
					break
				}
			}
		}
		cases = kept
		if len(cases) == 0 {
			fmt.Fprintf(stderr, "bench-load: -only %q keeps no case\n", o.only)
			return 2
		}
	}
	tools := []string{"wasmgap load", "wrk", "ab", "vegeta"}
	if o.baseline != "" {
		tools = []string{"wasmgap load", "wasmgap load (baseline)", "wrk", "ab", "vegeta"}
	}
	fmt.Fprintf(stderr, "bench-load: %d cases × %d tools × %d runs of %s\n", len(cases), len(tools), o.reps, o.duration)
	results := make([][]measurement, len(cases))
	for i, c := range cases {
		var ms []measurement
		for _, t := range tools {
			if c.rate == 0 || !closedOnly[t] {
				ms = append(ms, measurement{tool: t})
			}
		}
		for rep := 0; rep < o.reps; rep++ {
			for j := range ms {
				fmt.Fprintf(stderr, "  %s: %s run %d\n", c.label(), ms[j].tool, rep+1)
				rps, p99, nerr, cpu, err := runTool(&o, ms[j].tool, c)
				if err != nil {
					ms[j].err = err
					fmt.Fprintf(stderr, "    %v\n", err)
					continue
				}
				ms[j].errors += nerr
				if cpu > 0 {
					ms[j].cpuPerReq = append(ms[j].cpuPerReq, cpu)
				}
				ms[j].rps = append(ms[j].rps, rps)
				ms[j].p99 = append(ms[j].p99, p99)
			}
		}
		results[i] = ms
	}
	benchtool.PrintHeader(stdout, o.markdown, env)
	printTable(stdout, &o, cases, results)
	return 0
}

// label names a case in progress lines.
func (c benchCase) label() string {
	l := fmt.Sprintf("%s c=%d keep-alive=%v", c.server, c.conns, c.keepAlive)
	if c.rate > 0 {
		l += fmt.Sprintf(" open %d/s", c.rate)
	}
	return l
}

// runTool runs one tool once on one case and returns its requests/s, p99, error count and
// CPU time per request.
func runTool(o *options, tool string, c benchCase) (float64, time.Duration, int64, time.Duration, error) {
	secs := strconv.Itoa(int(o.duration.Seconds()))
	conns := strconv.Itoa(c.conns)
	var cmd *exec.Cmd
	parse := benchtool.ParseLoad // the tool's report read from its output
	switch tool {
	case "wasmgap load", "wasmgap load (baseline)":
		args := []string{"load", "-c", conns, "-d", o.duration.String(), "--format", "json", "--progress", "off"}
		if !c.keepAlive {
			args = append(args, "--no-keepalive")
		}
		if c.rate > 0 {
			args = append(args, "-R", strconv.Itoa(c.rate))
		}
		bin := o.wasmgap
		if tool != "wasmgap load" {
			bin = o.baseline
		}
		cmd = exec.Command(bin, append(args, c.url)...)
	case "wrk":
		// Two threads, as many as the machine has cores here; wrk needs at least one
		// connection per thread.
		threads := strconv.Itoa(min(runtime.NumCPU(), c.conns))
		args := []string{"-t", threads, "-c", conns, "-d", secs + "s", "--latency"}
		if !c.keepAlive {
			args = append(args, "-H", "Connection: close")
		}
		cmd, parse = exec.Command(o.wrk, append(args, c.url)...), benchtool.ParseWrk
	case "ab":
		// -t bounds the time; -n must come after it, or -t sets it to 50000.
		args := []string{"-q", "-c", conns, "-t", secs, "-n", "100000000"}
		if c.keepAlive {
			args = append(args, "-k")
		}
		cmd, parse = exec.Command(o.ab, append(args, c.url)...), benchtool.ParseAb
	case "vegeta":
		f, err := os.CreateTemp("", "bench-load-vegeta-*.bin")
		if err != nil {
			return 0, 0, 0, 0, err
		}
		f.Close()
		vegetaOut := f.Name() // the attack's results file, read by vegeta report
		defer os.Remove(vegetaOut)
		cmd = exec.Command(o.vegeta, vegetaAttackArgs(c, o.duration, vegetaOut)...)
		cmd.Stdin = strings.NewReader("GET " + c.url + "\n")
		// The report is read by a second process, whose CPU is not the attack's.
		parse = func([]byte) (benchtool.Result, error) {
			rep := exec.Command(o.vegeta, "report", "-type=json", vegetaOut)
			return benchtool.RunTool(context.Background(), "vegeta report", rep, time.Minute, benchtool.ParseVegeta)
		}
	}
	res, err := benchtool.RunTool(context.Background(), tool, cmd, o.duration*3+30*time.Second, parse)
	// The run lasted about the duration; requests ≈ rate × duration.
	cpu := benchtool.CPUPerRequest(cmd, res.RPS*o.duration.Seconds())
	return res.RPS, res.P99, res.Errors, cpu, err
}

// vegetaAttackArgs are vegeta attack's flags for a case. A closed case is vegeta's
// -rate=0 ("as fast as it answers") with exactly as many workers as the other tools'
// connections, each waiting for its answer before the next request; an open case is a fixed
// rate with vegeta's own worker pool, which grows when answers lag.
func vegetaAttackArgs(c benchCase, d time.Duration, output string) []string {
	args := []string{"attack", "-duration", d.String(), "-timeout", "30s", "-output", output,
		"-keepalive=" + strconv.FormatBool(c.keepAlive)}
	if c.rate > 0 {
		return append(args, "-rate", strconv.Itoa(c.rate)+"/1s", "-workers", strconv.Itoa(c.conns))
	}
	w := strconv.Itoa(c.conns)
	return append(args, "-rate", "0", "-workers", w, "-max-workers", w)
}

func printTable(w io.Writer, o *options, cases []benchCase, results [][]measurement) {
	t := benchtool.NewTable(w, o.markdown, "lrllrrrrrrrl", "server", "-c", "keep-alive / rate", "tool", "req/s (median)", "vs wrk", "best", "best vs wrk", "p99 (median)", "CPU/req (median)", "errors", "runs")
	for i, c := range cases {
		var wrkRate, wrkBest float64
		for _, m := range results[i] {
			if m.tool == "wrk" && len(m.rps) > 0 {
				wrkRate, wrkBest = benchtool.Median(m.rps), slices.Max(m.rps)
			}
		}
		for _, m := range results[i] {
			ka := "yes"
			if !c.keepAlive {
				ka = "no"
			}
			if c.rate > 0 {
				ka += fmt.Sprintf(", open %d/s", c.rate)
			}
			if len(m.rps) == 0 {
				t.Row(c.server, strconv.Itoa(c.conns), ka, m.tool, "failed: "+m.err.Error(), "", "", "", "", "", "", "")
				continue
			}
			rate := benchtool.Median(m.rps)
			best := slices.Max(m.rps)
			ratio, bestRatio := "—", "—"
			if wrkRate > 0 {
				ratio = fmt.Sprintf("%.2f", rate/wrkRate)
				bestRatio = fmt.Sprintf("%.2f", best/wrkBest)
			}
			t.Row(c.server, strconv.Itoa(c.conns), ka, m.tool, strconv.FormatFloat(rate, 'f', 0, 64), ratio,
				strconv.FormatFloat(best, 'f', 0, 64), bestRatio,
				benchtool.P99(m.tool, benchtool.Median(m.p99)), cpuString(m.cpuPerReq), strconv.FormatInt(m.errors, 10), benchtool.Rates(m.rps))
		}
	}
	t.Flush()
}

func cpuString(xs []time.Duration) string {
	if len(xs) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f µs", float64(benchtool.Median(xs))/float64(time.Microsecond))
}

// startCPUServer serves a 2 KB page, hashing it 16 times per request, on one core: a server
// that is the bottleneck, whatever the tool. At /sleep it answers after 2 ms instead.
func startCPUServer() (string, func(), error) {
	runtime.GOMAXPROCS(1)
	page := bytes.Repeat([]byte("<p>wasmgap load benchmark page</p>\n"), 60)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sleep" {
			// A server bound by waiting, not by CPU: the rate is about -c / 2 ms whatever
			// else runs on the machine.
			time.Sleep(2 * time.Millisecond)
			w.Write(page)
			return
		}
		sum := sha256.Sum256(page)
		for i := 0; i < 15; i++ {
			sum = sha256.Sum256(append(page[:len(page):len(page)], sum[:]...))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Sum", fmt.Sprintf("%x", sum[:4]))
		w.Write(page)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/", func() { srv.Close() }, nil
}

// startChat starts `wasmgap chat` on a free loopback port with a temporary store; its page
// (GET /) is the case.
func startChat(bin string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "bench-load-chat-")
	if err != nil {
		return "", nil, err
	}
	addr, err := benchtool.FreeAddr()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "chat", "-addr", addr, "-data", dir)
	return startListening("wasmgap chat", cmd, addr, dir, 10*time.Second)
}

// startNginx starts nginx with one worker on a free loopback port, from a temporary config.
func startNginx(bin string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "bench-load-nginx-")
	if err != nil {
		return "", nil, err
	}
	addr, err := benchtool.FreeAddr()
	if err != nil {
		return "", nil, err
	}
	conf, err := benchtool.NginxConf(dir, addr, "1", bytes.Repeat([]byte("<p>wasmgap load benchmark page</p>\n"), 60))
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "-e", filepath.Join(dir, "error.log"), "-c", conf, "-p", dir, "-g", "daemon off;")
	return startListening("nginx", cmd, addr, dir, 5*time.Second)
}

// startListening starts a server's cmd and waits up to limit for it to accept connections
// on addr. It returns the server's URL and stop, which interrupts the server, waits for it
// and removes its folder dir.
func startListening(name string, cmd *exec.Cmd, addr, dir string, limit time.Duration) (string, func(), error) {
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start %s: %w", name, err)
	}
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		os.RemoveAll(dir)
	}
	deadline := time.Now().Add(limit)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return "http://" + addr + "/", stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("%s did not listen on %s: %s", name, addr, errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
