//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"time"

	"github.com/wasmgap/wasmgap/internal/benchtool"
	"github.com/wasmgap/wasmgap/load"
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

// cell is a row being measured: its server, its receiver, its figures so far.
type cell struct {
	row
	srv      *server
	pids     []int
	rec      *load.Receiver
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
			rec, err := load.Listen(ctx, c.srv.url, "john", "mary: hello")
			if err != nil {
				c.failure, c.done = err.Error(), true
				return
			}
			c.rec = rec
		}
		c.pids = benchtool.GroupPIDs(c.srv.pgid())
		c.rssBefore = benchtool.RSS(c.pids...)
	}
	fmt.Fprintf(stderr, "  %s: %s, run %d of %d\n", c.server, r.label, rep+1, o.reps)
	base := int64(0)
	if c.rec != nil {
		base = c.rec.Count()
	}
	cpu0 := benchtool.CPUTime(c.pids...)
	sampler := benchtool.SampleRSS(c.pids...)
	res, err := runTool(ctx, o, r, c.srv.url+r.path)
	if err == nil && c.rec != nil {
		sent := res.Requests - res.Errors
		c.sent += sent
		c.delivered += c.rec.WaitFor(ctx, base+sent, 3*time.Second) - base
	}
	c.rssPeak = max(c.rssPeak, sampler.Stop())
	c.cpu += benchtool.CPUTime(c.pids...) - cpu0
	c.rssAfter = benchtool.RSS(c.pids...)
	if err != nil {
		c.failure, c.done = err.Error(), true
		fmt.Fprintf(stderr, "    %v\n", err)
		return
	}
	c.rps = append(c.rps, res.RPS)
	c.p99 = append(c.p99, res.P99)
	c.requests += res.Requests - res.Errors
	c.errors += res.Errors
}

// finish ends the cell's runs: its receiver logs out, and the row's verdict is set.
func (c *cell) finish() {
	if c.finished {
		return
	}
	c.finished, c.done = true, true
	var drops int64
	if c.rec != nil {
		drops = c.rec.Close()
	}
	switch {
	case c.missing != "" || c.failure != "":
	case !c.began:
		c.failure = "not run: interrupted"
	case drops > 0:
		c.failure = fmt.Sprintf("the receiver's stream dropped %d time(s)", drops)
	case c.delivered != c.sent:
		c.failure = fmt.Sprintf("john received %d of the %d messages answered", c.delivered, c.sent)
	case c.errors > 0:
		c.failure = fmt.Sprintf("%d requests failed", c.errors)
	}
}

// runTool runs one tool once and parses its report.
func runTool(ctx context.Context, o *options, r runKind, url string) (benchtool.Result, error) {
	secs := strconv.Itoa(int(o.duration / time.Second))
	var cmd *exec.Cmd
	limit := 3*o.duration + 30*time.Second
	parse := benchtool.ParseLoad // the tool's report read from its output
	switch r.tool {
	case "ab":
		// HTTP/1.0 without keep-alive, as the article ran it; -s bounds each response.
		cmd, parse = exec.Command(o.ab, "-q", "-s", "10", "-n", strconv.Itoa(o.n), "-c", strconv.Itoa(o.abConns), url), benchtool.ParseAb
		limit = 2*time.Minute + time.Duration(o.n)*time.Millisecond
	case "wrk":
		cmd, parse = exec.Command(o.wrk, "-t", strconv.Itoa(o.wrkThr), "-c", strconv.Itoa(o.loadConns), "-d", secs+"s", "--latency", url), benchtool.ParseWrk
	case "load":
		args := []string{"load", "-c", strconv.Itoa(o.loadConns), "-d", o.duration.String(), "--format", "json", "--progress", "off"}
		if !r.keepAlive {
			args = append(args, "--no-keepalive")
		}
		cmd = exec.Command(o.wasmgap, append(args, url)...)
	}
	return benchtool.RunTool(ctx, r.tool, cmd, limit, parse)
}
