// Package benchtool is what the benchmark tools share: running a load tool
// (ab, wrk, wasmgap load) in a process group of its own under a time limit and
// reading its report (scripts/bench-server, scripts/bench-load), and reading a
// process's CPU time and resident memory from /proc (those scripts, and the
// load generator's --pid sampler), and printing the scripts' tables (Table).
//
// Every parser returns the same Result, counted the same way: Errors are the
// failed requests and the answers that are not 2xx (3xx for wrk), as each tool
// counts them.
package benchtool

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/childproc"
)

// Result is one run of one tool, as its report gives it.
type Result struct {
	RPS      float64       // requests per second
	P99      time.Duration // the tool's own 99th percentile latency
	Requests int64         // requests finished, answered or not
	Errors   int64         // failed requests and non-2xx answers
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

// ParseAb reads ab's report (ab 2.3).
func ParseAb(report []byte) (Result, error) {
	out := string(report)
	m, l, c := abRPS.FindStringSubmatch(out), abP99.FindStringSubmatch(out), abComplete.FindStringSubmatch(out)
	if m == nil || l == nil || c == nil {
		return Result{}, fmt.Errorf("parse ab's report: %q", out)
	}
	rps, _ := strconv.ParseFloat(m[1], 64)
	ms, _ := strconv.Atoi(l[1])
	n, _ := strconv.ParseInt(c[1], 10, 64)
	// ab counts a failed request in "Complete requests" too, and a non-2xx answer in both
	// "Complete" and "Non-2xx"; a request can be both failed (length) and non-2xx: the sum
	// may count one request twice, never fewer than there are.
	errs := min(sumMatches(abErrs, out), n)
	return Result{RPS: rps, P99: time.Duration(ms) * time.Millisecond, Requests: n, Errors: errs}, nil
}

// ParseWrk reads wrk's report, run with --latency (wrk 4).
func ParseWrk(report []byte) (Result, error) {
	out := string(report)
	m, l, c := wrkRPS.FindStringSubmatch(out), wrkP99.FindStringSubmatch(out), wrkRequests.FindStringSubmatch(out)
	if m == nil || l == nil || c == nil {
		return Result{}, fmt.Errorf("parse wrk's report (run with --latency): %q", out)
	}
	rps, _ := strconv.ParseFloat(m[1], 64)
	v, _ := strconv.ParseFloat(l[1], 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[l[2]]
	n, _ := strconv.ParseInt(c[1], 10, 64)
	return Result{RPS: rps, P99: time.Duration(v * float64(unit)), Requests: n, Errors: sumMatches(wrkErrs, out)}, nil
}

// ParseLoad reads the JSON report of `wasmgap load --format json`.
func ParseLoad(out []byte) (Result, error) {
	var rep struct {
		RPS     *float64 `json:"requests_per_sec"`
		Sent    int64    `json:"sent"`
		OK      int64    `json:"ok"`
		Latency struct {
			P99 float64 `json:"p99_ms"`
		} `json:"latency"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return Result{}, fmt.Errorf("parse wasmgap load's JSON report: %w", err)
	}
	if rep.RPS == nil {
		return Result{}, fmt.Errorf("parse wasmgap load's JSON report: no requests_per_sec in %.200q", out)
	}
	return Result{RPS: *rep.RPS, P99: time.Duration(rep.Latency.P99 * float64(time.Millisecond)),
		Requests: rep.Sent, Errors: rep.Sent - rep.OK}, nil
}

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

// Run runs cmd in a process group of its own (internal/childproc) and kills
// the whole group when ctx ends or after limit.
func Run(ctx context.Context, cmd *exec.Cmd, limit time.Duration) error {
	if err := childproc.Start(cmd); err != nil {
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
		childproc.KillGroup(cmd)
		<-done
		return fmt.Errorf("killed after %v", limit)
	case <-ctx.Done():
		childproc.KillGroup(cmd)
		<-done
		return ctx.Err()
	}
}

// RunTool runs a load tool's command under a time limit (Run) and reads its standard
// output with parse; an error names the tool and quotes the first line it wrote to its
// standard error, or says it was interrupted when ctx ended.
func RunTool(ctx context.Context, tool string, cmd *exec.Cmd, limit time.Duration, parse func([]byte) (Result, error)) (Result, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := Run(ctx, cmd, limit); err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("%s: interrupted", tool)
		}
		return Result{}, fmt.Errorf("%s: %v: %s", tool, err, FirstLine(errb.String()))
	}
	return parse(out.Bytes())
}

// CPUPerRequest is the CPU time (user + system) a finished command used per
// request, for a run of requests requests; 0 when unknown.
func CPUPerRequest(cmd *exec.Cmd, requests float64) time.Duration {
	if cmd.ProcessState == nil || requests <= 0 {
		return 0
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return time.Duration(float64(cpu) / requests)
}

// FreeAddr is a loopback address (127.0.0.1:port) with a port free right now, for a
// server the caller starts next.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FirstLine is the first non-empty line of a tool's output, for an error message.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Median is the middle value of xs (the upper one of an even count); xs is
// not changed. It panics on an empty xs.
func Median[T cmp.Ordered](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
