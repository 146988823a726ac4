// Package runner runs measurements in worker processes (this same binary, started with a
// hidden switch) so that no kernel can take down its caller: a runaway run is killed at
// its time limit, a native stack overflow or any other crash ends only the worker, and
// every outcome comes back as a measure.Result.
package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmgap/wasmgap/engine"
	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/measure"
)

// workersStarted counts the workers this process started (tests check that invalid jobs
// start none).
var workersStarted atomic.Int64

// Bounds on a job's runs and warm-up runs.
const (
	MaxRuns   = 1000
	MaxWarmup = 100
)

// budgetShare is the percentage of a job's time limit its runs are planned to fit in
// (measure.Options.Budget), leaving room for the worker's start and a run slower than the
// ones before it.
const budgetShare = 85

// DefaultTimeout bounds a job whose Timeout is zero.
const DefaultTimeout = 30 * time.Second

// workerEnv is the environment variable that turns a process into a worker.
const workerEnv = "WASMGAP_WORKER"

// killGrace is how long Run waits for a killed worker's output to drain.
const killGrace = 500 * time.Millisecond

// stderrKeep bounds how much of a worker's stderr is kept, at its start and at its end.
const stderrKeep = 16 << 10

// Job is one measurement to run in a worker.
type Job struct {
	Engine  string          `json:"engine"`
	Kernel  string          `json:"kernel"`
	Args    []int           `json:"args"`
	Options measure.Options `json:"options"`
	// Timeout bounds the whole job, setup included (default 30s). Unless Options.Budget
	// is set, runs that would not fit in 85% of it are skipped (Result.Runs says how many
	// ran); a job still running at the limit is killed and reported as timed out.
	Timeout time.Duration `json:"timeout_ns"`
}

// Progress is reported while a job runs.
type Progress struct {
	// Phase is "load", "warmup" or "run".
	Phase string `json:"phase"`
	// Done and Total count runs within the phase.
	Done  int `json:"done"`
	Total int `json:"total"`
}

// Options configure Run. The zero value is ready to use.
type Options struct {
	// OnProgress, if set, is called as the worker reports progress.
	OnProgress func(Progress)
}

// message is one line a worker writes on its stdout: progress, or the final result.
type message struct {
	Progress *Progress       `json:"progress,omitempty"`
	Result   *measure.Result `json:"result,omitempty"`
}

// Validate checks that the job names a known engine and kernel and that its arguments
// fit the kernel's parameters, with an error that says what is allowed.
func (j Job) Validate() error {
	if j.Timeout < 0 {
		return fmt.Errorf("timeout %v is negative: give a positive duration, or zero for %v", j.Timeout, DefaultTimeout)
	}
	if j.Options.Runs < 0 || j.Options.Runs > MaxRuns {
		return fmt.Errorf("runs = %d is out of range: allowed 1 to %d (0 for the default %d)", j.Options.Runs, MaxRuns, measure.DefaultRuns)
	}
	if j.Options.Warmup > MaxWarmup {
		return fmt.Errorf("warm-up = %d is out of range: allowed up to %d (0 for the default %d, negative for none)", j.Options.Warmup, MaxWarmup, measure.DefaultWarmup)
	}
	if _, err := engineCheck(j.Engine); err != nil {
		return err
	}
	k, err := kernels.Lookup(j.Kernel)
	if err != nil {
		return err
	}
	return k.Check(j.Args)
}

// engineCheck builds the engine only to check its name; building does no work (Load does).
func engineCheck(name string) (string, error) {
	e, err := engine.New(name)
	if err != nil {
		return "", err
	}
	return e.Name(), nil
}

// Run checks the job (unknown engine or kernel, arguments out of range: an error that says
// what is allowed, before anything runs), then runs it in a worker process. Failures of the
// run itself (stack overflow, time limit, crash, wrong result) come back in Result.Failure.
// When ctx ends first, the worker is killed and Run returns ctx.Err().
func Run(ctx context.Context, job Job, opts Options) (measure.Result, error) {
	if err := job.Validate(); err != nil {
		return measure.Result{}, err
	}
	if job.Timeout == 0 {
		job.Timeout = DefaultTimeout
	}
	if job.Options.Budget == 0 {
		// Runs that would not end well inside the time limit are skipped, so that a slow
		// cell reports fewer runs rather than no time at all.
		job.Options.Budget = job.Timeout * budgetShare / 100
	}
	input, err := json.Marshal(job)
	if err != nil {
		return measure.Result{}, fmt.Errorf("encode job: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return measure.Result{}, fmt.Errorf("find this program to start a worker: %w", err)
	}

	runCtx, cancel := context.WithTimeout(ctx, job.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, exe)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	cmd.Stdin = bytes.NewReader(input)
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
	cmd.WaitDelay = killGrace

	out := &lineWriter{}
	var result *measure.Result
	var protocolErr error
	out.onLine = func(line []byte) {
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			if protocolErr == nil {
				protocolErr = fmt.Errorf("worker wrote %q: %w", truncate(string(line), 200), err)
			}
			return
		}
		switch {
		case m.Result != nil:
			result = m.Result
		case m.Progress != nil && opts.OnProgress != nil:
			opts.OnProgress(*m.Progress)
		}
	}
	cmd.Stdout = out
	stderr := &capBuffer{keep: stderrKeep}
	cmd.Stderr = stderr

	if err := cmd.Start(); err != nil {
		return measure.Result{}, fmt.Errorf("start worker: %w", err)
	}
	workersStarted.Add(1)
	waitErr := cmd.Wait()
	out.flush()

	if err := ctx.Err(); err != nil {
		return measure.Result{}, err
	}
	base := measure.Result{
		Kernel: job.Kernel, Args: append([]int(nil), job.Args...), Engine: job.Engine,
	}
	opt := job.Options.WithDefaults()
	base.Runs, base.Warmup = opt.Runs, opt.Warmup
	if k, err := kernels.Lookup(job.Kernel); err == nil {
		base.Expected = k.Expected(job.Args)
	}
	if result != nil && waitErr == nil {
		return *result, nil
	}
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		base.Failure = "timed out after " + job.Timeout.String()
		return base, nil
	}
	if protocolErr != nil && waitErr == nil {
		return measure.Result{}, protocolErr
	}
	base.Failure = crashReason(stderr.String(), waitErr)
	return base, nil
}

// crashReason says why a worker died: "stack overflow" when the runtime says so, else
// "crashed: " and the most telling line of its stderr, or its exit status.
func crashReason(stderr string, waitErr error) string {
	if strings.Contains(stderr, "goroutine stack exceeds") || strings.Contains(stderr, "stack overflow") {
		return measure.FailureStackOverflow
	}
	var last, telling string
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "[signal") || line == stderrCut {
			continue
		}
		if telling == "" && (strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ")) {
			telling = line
		}
		last = line
	}
	reason := telling
	if reason == "" {
		reason = last
	}
	if reason == "" {
		if waitErr != nil {
			reason = waitErr.Error()
		} else {
			reason = "worker exited without a result"
		}
	}
	return "crashed: " + truncate(reason, 300)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ServeWorkerIfRequested turns this process into a worker when it was started as one, and
// exits when the job is done; otherwise it returns at once. Call it first in main, and in
// TestMain of every package whose tests use Run.
func ServeWorkerIfRequested() {
	if os.Getenv(workerEnv) != "1" {
		return
	}
	if err := serveWorker(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wasmgap worker:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

// serveWorker reads one Job from in, measures it and writes progress and the result to out
// as JSON lines.
func serveWorker(in io.Reader, out io.Writer) error {
	var job Job
	if err := json.NewDecoder(in).Decode(&job); err != nil {
		return fmt.Errorf("read job: %w", err)
	}
	k, err := kernels.Lookup(job.Kernel)
	if err != nil {
		return err
	}
	if err := k.Check(job.Args); err != nil {
		return err
	}
	e, err := engine.New(job.Engine)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	var writeErr error
	send := func(m message) {
		if writeErr == nil {
			writeErr = enc.Encode(m)
		}
		if writeErr == nil {
			writeErr = w.Flush()
		}
	}
	r := measure.Measure(context.Background(), e, k, job.Args, job.Options, func(phase string, done, total int) {
		send(message{Progress: &Progress{Phase: phase, Done: done, Total: total}})
	})
	send(message{Result: &r})
	if writeErr != nil {
		return fmt.Errorf("write result: %w", writeErr)
	}
	return nil
}

// lineWriter calls onLine for every complete line written to it.
type lineWriter struct {
	buf    []byte
	onLine func([]byte)
}

// maxLine bounds a line a worker may write; a longer one is cut.
const maxLine = 1 << 20

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.onLine(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > maxLine {
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	if len(bytes.TrimSpace(w.buf)) > 0 {
		w.onLine(w.buf)
	}
	w.buf = nil
}

// stderrCut marks where capBuffer dropped the middle of a worker's stderr.
const stderrCut = "[…]"

// capBuffer keeps the first and the last keep bytes written to it: a crashing Go program
// says why at the start of its stderr and may print megabytes of stack after it.
type capBuffer struct {
	mu      sync.Mutex
	keep    int
	head    []byte
	tail    []byte
	dropped bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.keep - len(b.head); room > 0 {
		take := min(room, len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	if len(p) > 0 {
		b.tail = append(b.tail, p...)
		if over := len(b.tail) - b.keep; over > 0 {
			b.tail = append(b.tail[:0], b.tail[over:]...)
			b.dropped = true
		}
	}
	return n, nil
}

func (b *capBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped {
		return string(b.head) + "\n" + stderrCut + "\n" + string(b.tail)
	}
	return string(b.head) + string(b.tail)
}
