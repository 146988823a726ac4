package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// row is one line of the table: one server under one run kind, over -reps runs.
type row struct {
	server  string
	run     runKind
	missing string // "php not installed: apt-get install php-cli": the row holds nothing else
	failure string // why the row failed (a tool's error, lost messages), beside its figures

	rps      []float64       // req/s of each run
	p99      []time.Duration // the tool's p99 of each run
	requests int64           // requests answered over every run
	errors   int64           // failed requests over every run, as the tools count them
	cpu      time.Duration   // the server's CPU time over every run

	rssBefore, rssPeak, rssAfter int64 // bytes

	sent, delivered int64 // message route: messages answered 2xx, and received by john
}

// toolResult is what one run of one tool reports.
type toolResult struct {
	rps      float64
	p99      time.Duration
	requests int64 // requests finished, answered or not
	errors   int64 // failed requests and non-2xx answers
}

// cell is a row being measured: its server, its receiver, its figures so far.
type cell struct {
	row
	srv      *server
	pids     []int
	rec      *receiver
	began    bool
	done     bool // no more runs: failed, missing, or finished
	finished bool
}

// runOnce runs the cell's load once against its server, reading the server's memory and
// CPU around the run.
func (c *cell) runOnce(ctx context.Context, o *options, rep int, stderr io.Writer) {
	if c.done || ctx.Err() != nil {
		return
	}
	r := c.run
	if !c.began {
		c.began = true
		tool := map[string]string{"ab": "ab", "wrk": "wrk", "load": "wasmgap"}[r.tool]
		if msg := o.missing[tool]; msg != "" {
			c.missing, c.done = msg, true
			return
		}
		if r.message {
			rec, err := startReceiver(ctx, c.srv.url, "john", "mary: hello")
			if err != nil {
				c.failure, c.done = err.Error(), true
				return
			}
			c.rec = rec
		}
		c.pids = groupPIDs(c.srv.pgid())
		c.rssBefore = rss(c.pids)
	}
	fmt.Fprintf(stderr, "  %s: %s, run %d of %d\n", c.server, r.label, rep+1, o.reps)
	base := int64(0)
	if c.rec != nil {
		base = c.rec.count.Load()
	}
	cpu0 := cpuTime(c.pids)
	sampler := sampleRSS(c.pids)
	res, err := runTool(ctx, o, r, c.srv.url+r.path)
	if err == nil && c.rec != nil {
		sent := res.requests - res.errors
		c.sent += sent
		c.delivered += c.rec.waitFor(ctx, base+sent, 3*time.Second) - base
	}
	c.rssPeak = max(c.rssPeak, sampler.stop())
	c.cpu += cpuTime(c.pids) - cpu0
	c.rssAfter = rss(c.pids)
	if err != nil {
		c.failure, c.done = err.Error(), true
		fmt.Fprintf(stderr, "    %v\n", err)
		return
	}
	c.rps = append(c.rps, res.rps)
	c.p99 = append(c.p99, res.p99)
	c.requests += res.requests - res.errors
	c.errors += res.errors
}

// finish ends the cell's runs: its receiver logs out, and the row's verdict is set.
func (c *cell) finish() {
	if c.finished {
		return
	}
	c.finished, c.done = true, true
	if c.rec != nil {
		c.rec.close()
	}
	switch {
	case c.missing != "" || c.failure != "":
	case !c.began:
		c.failure = "not run: interrupted"
	case c.rec != nil && c.rec.err() != nil:
		c.failure = "the receiver's stream ended: " + c.rec.err().Error()
	case c.delivered != c.sent:
		c.failure = fmt.Sprintf("john received %d of the %d messages answered", c.delivered, c.sent)
	case c.errors > 0:
		c.failure = fmt.Sprintf("%d requests failed", c.errors)
	}
}

// runTool runs one tool once and parses its report.
func runTool(ctx context.Context, o *options, r runKind, url string) (toolResult, error) {
	secs := strconv.Itoa(int(o.duration / time.Second))
	var cmd *exec.Cmd
	limit := 3*o.duration + 30*time.Second
	switch r.tool {
	case "ab":
		// HTTP/1.0 without keep-alive, as the article ran it; -s bounds each response.
		cmd = exec.Command(o.ab, "-q", "-s", "10", "-n", strconv.Itoa(o.n), "-c", strconv.Itoa(o.abConns), url)
		limit = 2*time.Minute + time.Duration(o.n)*time.Millisecond
	case "wrk":
		cmd = exec.Command(o.wrk, "-t", strconv.Itoa(o.wrkThr), "-c", strconv.Itoa(o.loadConns), "-d", secs+"s", "--latency", url)
	case "load":
		args := []string{"load", "-c", strconv.Itoa(o.loadConns), "-d", o.duration.String(), "--format", "json", "--progress", "off"}
		if !r.keepAlive {
			args = append(args, "--no-keepalive")
		}
		cmd = exec.Command(o.wasmgap, append(args, url)...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := startAndWait(ctx, cmd, limit); err != nil {
		if ctx.Err() != nil {
			return toolResult{}, fmt.Errorf("%s: interrupted", r.tool)
		}
		return toolResult{}, fmt.Errorf("%s: %v: %s", r.tool, err, firstLine(errb.String()))
	}
	switch r.tool {
	case "ab":
		return parseAb(out.String())
	case "wrk":
		return parseWrk(out.String())
	default:
		return parseLoad(out.Bytes())
	}
}

// startAndWait runs cmd in a process group of its own and kills the group on ctx's end or
// after limit.
func startAndWait(ctx context.Context, cmd *exec.Cmd, limit time.Duration) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("killed after %v", limit)
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return ctx.Err()
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

var (
	abRPS      = regexp.MustCompile(`Requests per second:\s+([0-9.]+)`)
	abP99      = regexp.MustCompile(`\n\s+99%\s+([0-9]+)`)
	abComplete = regexp.MustCompile(`Complete requests:\s+([0-9]+)`)
	// "Failed requests:        0" and "Non-2xx responses:      5"
	abErrs = regexp.MustCompile(`(?:Failed requests|Non-2xx responses):\s+([0-9]+)`)

	wrkRPS      = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkP99      = regexp.MustCompile(`\n\s+99%\s+([0-9.]+)(us|ms|s)`)
	wrkRequests = regexp.MustCompile(`([0-9]+) requests in`)
	// "Socket errors: connect 0, read 0, write 0, timeout 0", "Non-2xx or 3xx responses: 5"
	wrkErrs = regexp.MustCompile(`(?:connect|read|write|timeout) ([0-9]+)|Non-2xx or 3xx responses: ([0-9]+)`)
)

func sumMatches(re *regexp.Regexp, s string) int64 {
	var n int64
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		for _, g := range m[1:] {
			if v, err := strconv.ParseInt(g, 10, 64); err == nil {
				n += v
			}
		}
	}
	return n
}

func parseAb(s string) (toolResult, error) {
	m, l, c := abRPS.FindStringSubmatch(s), abP99.FindStringSubmatch(s), abComplete.FindStringSubmatch(s)
	if m == nil || l == nil || c == nil {
		return toolResult{}, fmt.Errorf("parse ab's report: %q", s)
	}
	rps, _ := strconv.ParseFloat(m[1], 64)
	ms, _ := strconv.Atoi(l[1])
	n, _ := strconv.ParseInt(c[1], 10, 64)
	// ab counts a failed request in "Complete requests" too, and a non-2xx answer in both
	// "Complete" and "Non-2xx"; a request can be both failed (length) and non-2xx: the sum
	// may count one request twice, never fewer than there are.
	errs := min(sumMatches(abErrs, s), n)
	return toolResult{rps: rps, p99: time.Duration(ms) * time.Millisecond, requests: n, errors: errs}, nil
}

func parseWrk(s string) (toolResult, error) {
	m, l, c := wrkRPS.FindStringSubmatch(s), wrkP99.FindStringSubmatch(s), wrkRequests.FindStringSubmatch(s)
	if m == nil || l == nil || c == nil {
		return toolResult{}, fmt.Errorf("parse wrk's report: %q", s)
	}
	rps, _ := strconv.ParseFloat(m[1], 64)
	v, _ := strconv.ParseFloat(l[1], 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[l[2]]
	n, _ := strconv.ParseInt(c[1], 10, 64)
	return toolResult{rps: rps, p99: time.Duration(v * float64(unit)), requests: n, errors: sumMatches(wrkErrs, s)}, nil
}

func parseLoad(b []byte) (toolResult, error) {
	var rep struct {
		RPS     float64 `json:"requests_per_sec"`
		Sent    int64   `json:"sent"`
		OK      int64   `json:"ok"`
		Latency struct {
			P99 float64 `json:"p99_ms"`
		} `json:"latency"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return toolResult{}, fmt.Errorf("parse wasmgap load's JSON: %w", err)
	}
	return toolResult{rps: rep.RPS, p99: time.Duration(rep.Latency.P99 * float64(time.Millisecond)),
		requests: rep.Sent, errors: rep.Sent - rep.OK}, nil
}
