package load

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Historical is one figure from the source articles, kept as data with its method.
type Historical struct {
	Article  string  `json:"article"`  // which source text
	Server   string  `json:"server"`   // what was measured, with its version
	Command  string  `json:"command"`  // the tool's command line as printed
	Tool     string  `json:"tool"`     // the load tool
	Hardware string  `json:"hardware"` // the machine, as the article states it
	RPS      float64 `json:"requests_per_sec"`
	Note     string  `json:"note,omitempty"` // memory, CPU, or anything else the article adds
}

const (
	chatArticle = "seed 000: real-time chat over Server-Sent Events (2013)"
	chatMachine = "3.4 GHz single core QEMU VM (Hetzner VQ7)"
	nodeArticle = "seed 001: Node.js vs PHP CLI server vs Swoole"
	nodeMachine = "i5-3230M, 64-bit Ubuntu 14.04"
)

// HistoricalStatic are the chat article's static-page figures: ab -n 10000 -c 10.
var HistoricalStatic = []Historical{
	{chatArticle, "PHP 5.3.10 server.php", "ab -n 10000 -c 10 http://localhost:8000/", "ab", chatMachine, 11601.30, "memory about 12.5 MB"},
	{chatArticle, "Java (IcedTea7 2.3.3, 1.7.0_09) Server.java", "ab -n 10000 -c 10 http://localhost:8000/", "ab", chatMachine, 10440.45, ""},
	{chatArticle, "C (gcc 4.6.3) server.c", "ab -n 10000 -c 10 http://localhost:8000/", "ab", chatMachine, 15254.44, "memory about 0.5 MB"},
	{chatArticle, "Apache 2.2.22, from disk, logging on", "ab -n 10000 -c 10 http://localhost/public/test.html", "ab", chatMachine, 6491.84, ""},
	{chatArticle, "node.js v0.6.12 test.js (http module)", "ab -n 10000 -c 10 http://localhost:8000/", "ab", chatMachine, 5554.03, ""},
	{chatArticle, "node.js v0.6.12 test2.js (net module, raw answer)", "ab -n 10000 -c 10 http://localhost:8000/", "ab", chatMachine, 9075.90, ""},
}

// HistoricalSend is the chat article's message-send figure, with one SSE receiver.
var HistoricalSend = []Historical{
	{chatArticle, "PHP 5.3.10 server.php, one receiver (curl)", "ab -n 10000 -c 10 http://localhost:8000/msg/mary/john%20hello", "ab", chatMachine, 9872.04, ""},
}

// HistoricalNodePHP are the Node.js vs PHP article's figures: ab -c100 -n100000.
var HistoricalNodePHP = []Historical{
	{nodeArticle, "Node.js 0.10.35 http server", "ab -c100 -n100000 http://127.0.0.1:8082/t.js", "ab", nodeMachine, 6049, "memory 11 MB → 61 MB, system CPU idle 65%"},
	{nodeArticle, "PHP 5.4.31 CLI server, Zend opcache", "ab -c100 -n100000 http://127.0.0.1:8081/t.php", "ab", nodeMachine, 11405, "memory 19.6 MB → 20.0 MB, system CPU idle 57%"},
	{nodeArticle, "PHP 5.4.31 CLI server, no opcache", "ab -c100 -n100000 http://127.0.0.1:8081/t.php", "ab", nodeMachine, 8851, "memory 8.3 MB → 9.0 MB, system CPU idle 57%"},
	{nodeArticle, "PHP Swoole, 5 worker processes", "ab -c100 -n200000 http://127.0.0.1:9501/swoole.php", "ab", nodeMachine, 19216, "memory 117 MB, system CPU idle 39% (200,000 requests)"},
}

// SeedOptions configures the seed preset.
type SeedOptions struct {
	// Target is the chat's base URL (e.g. http://127.0.0.1:8080/).
	Target string
	// Server describes the target for the report (e.g. "wasmgap chat, in-process").
	Server string
	// Scale divides the request counts (1 or 0: the articles' counts), for quick runs.
	Scale int
	// Pid, when positive, is sampled during each run (see Options.Pid).
	Pid int
	// Progress receives each run's progress; the run's index is in SeedProgress.
	Progress func(SeedProgress)
	// MaxTime bounds each of the three runs; DefaultMaxTime when zero.
	MaxTime time.Duration
}

// SeedProgress is a Progress of one of the seed preset's runs.
type SeedProgress struct {
	Run   int    // 0, 1, 2
	Title string // the run's title
	Progress
}

// SeedRun is one of the seed preset's runs: this machine's figures beside the historical.
type SeedRun struct {
	Title      string       `json:"title"`
	Command    string       `json:"command"` // the article's command line
	Report     *Report      `json:"report"`
	Received   int64        `json:"received,omitempty"` // send run: messages the SSE receiver got
	Historical []Historical `json:"historical"`
}

// SeedReport is the seed preset's outcome.
type SeedReport struct {
	Target string    `json:"target"`
	Server string    `json:"server"`
	Runs   []SeedRun `json:"runs"`
}

// RunSeed runs the source articles' three ab runs against a chat server, with ab's method:
// HTTP/1.0, a new connection per request (ab without -k).
func RunSeed(ctx context.Context, o SeedOptions) (*SeedReport, error) {
	base, err := chatBase(o.Target)
	if err != nil {
		return nil, fmt.Errorf("seed %w", err)
	}
	scale := max(o.Scale, 1)
	out := &SeedReport{Target: base.String(), Server: o.Server}
	runs := []struct {
		title, command string
		path           string
		n, c           int
		receiver       bool
		hist           []Historical
	}{
		{"Static page (seed 000)", "ab -n 10000 -c 10 http://localhost:8000/", "", 10000, 10, false, HistoricalStatic},
		{"Message send with one SSE receiver (seed 000)", "ab -n 10000 -c 10 http://localhost:8000/msg/mary/john%20hello", "msg/mary/john%20hello", 10000, 10, true, HistoricalSend},
		{"Static page, 100 connections (seed 001)", "ab -c100 -n100000 http://127.0.0.1:8082/", "", 100000, 100, false, HistoricalNodePHP},
	}
	for i, r := range runs {
		var rec *Receiver
		if r.receiver {
			if rec, err = Listen(ctx, base.String(), "john", "mary: hello"); err != nil {
				return nil, err
			}
		}
		opts := Options{
			Request:     Request{URL: base.String() + r.path},
			Connections: r.c,
			Requests:    max(r.n/scale, r.c),
			NoKeepAlive: true,
			HTTP10:      true,
			Pid:         o.Pid,
			MaxTime:     o.MaxTime,
		}
		if o.Progress != nil {
			opts.Progress = func(p Progress) { o.Progress(SeedProgress{Run: i, Title: r.title, Progress: p}) }
		}
		rep, err := Run(ctx, opts)
		var received int64
		if rec != nil {
			if rep != nil {
				received = rec.WaitFor(ctx, rep.OK, 2*time.Second)
			}
			rec.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.title, err)
		}
		out.Runs = append(out.Runs, SeedRun{Title: r.title, Command: r.command, Report: rep,
			Received: received, Historical: r.hist})
	}
	return out, nil
}

// WriteSeedText prints each run's figures beside the articles', the historical ones labelled.
func WriteSeedText(w io.Writer, rep *SeedReport) error {
	fmt.Fprintf(w, "Seed preset against %s (%s)\n", rep.Target, rep.Server)
	fmt.Fprintln(w, "Method: the articles' ab runs, HTTP/1.0, a new connection per request (ab without -k), no warm-up.")
	for _, r := range rep.Runs {
		fmt.Fprintf(w, "\n== %s\n   article's command: %s\n", r.Title, r.Command)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "   \treq/s\tserver\ttool\tmachine")
		x := r.Report
		fmt.Fprintf(tw, "   now\t%10.2f\t%s\twasmgap load -n %d -c %d --http1.0 --no-keepalive\tthis machine\n",
			x.RequestsPerSec, rep.Server, x.Requests, x.Connections)
		for _, h := range r.Historical {
			fmt.Fprintf(tw, "   historical\t%10.2f\t%s\t%s\t%s\n", h.RPS, h.Server, h.Tool, h.Hardware)
		}
		tw.Flush()
		note := fmt.Sprintf("p50 %s, p99 %s; %d ok, %d errors", fmtDuration(x.Latency.P50), fmtDuration(x.Latency.P99), x.OK, x.ErrorCount())
		if strings.Contains(r.Command, "/msg/") {
			note += fmt.Sprintf("; the SSE receiver got %d of %d messages", r.Received, x.OK)
		}
		if x.Server != nil {
			note += fmt.Sprintf("; server RSS %s → peak %s → %s, CPU %.0f%% of a core, system idle %.0f%%",
				bytesString(float64(x.Server.RSSBefore)), bytesString(float64(x.Server.RSSPeak)),
				bytesString(float64(x.Server.RSSAfter)), x.Server.CPUMean, x.Server.SystemIdle)
		}
		fmt.Fprintf(w, "   now: %s\n", note)
		for _, h := range r.Historical {
			if h.Note != "" {
				fmt.Fprintf(w, "   historical, %s: %s\n", h.Server, h.Note)
			}
		}
	}
	fmt.Fprintln(w, "\nHistorical figures are quoted from the source articles: other machines, other years;")
	fmt.Fprintln(w, "compare the shape, not the digits.")
	return nil
}
