// Package runner runs measurements in worker processes (this same binary, started with a
// hidden switch) so that no kernel can take down its caller: a runaway run is killed at
// its time limit, a native stack overflow or any other crash ends only the worker, and
// every outcome comes back as a measure.Result.
package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wasmgap/wasmgap/internal/capped"
	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/sandbox"
	"github.com/wasmgap/wasmgap/kernels"
)

// workersStarted counts the workers this process started (tests check that invalid jobs
// start none).
var workersStarted atomic.Int64

// Bounds on the runs of one job, whoever asks: the CLI, the page's API and the page state
// and enforce these. A hundred samples put the median's interval within a few percent;
// more would only hold a shared server longer.
const (
	MaxJobRuns   = 100
	MaxJobWarmup = 100
)

// budgetShare is the percentage of a job's time limit its runs are planned to fit in
// (measure.Options.Budget), leaving room for the worker's start and a run slower than the
// ones before it.
const budgetShare = 85

// DefaultTimeout bounds a job whose Timeout is zero.
const DefaultTimeout = 30 * time.Second

// workerEnv is the environment variable that turns a process into a worker, of the role
// its value names (cellWorker, warmupWorker, explainWorker).
const workerEnv = "WASMGAP_WORKER"

// cellWorker is the value of workerEnv that makes a process a measured cell's worker (Run).
const cellWorker = "1"

// killGrace is how long Run waits for a killed worker's output to drain.
const killGrace = 500 * time.Millisecond

// workerMargin is how long past its job's time limit a worker lives before it ends itself:
// the parent kills it at the limit, so a worker still running then has lost its parent.
const workerMargin = 5 * time.Second

// stderrKeep bounds how much of a worker's stderr is kept, at its start and at its end.
const stderrKeep = 16 << 10

// Job is one cell to measure: a kernel with checked arguments on one engine, with its runs
// and time limit. Jobs are made by Plan.Jobs, the one place that checks them; the zero Job
// is not runnable.
type Job struct {
	engine  string
	kernel  *kernels.Kernel
	custom  *custom.Kernel // the user kernel behind kernel, if it is one
	args    []int
	options measure.Options
	timeout time.Duration
	// executions is how many worker processes measure the cell (0: DefaultExecutions).
	executions int
}

// Engine is the name of the engine that runs the job.
func (j Job) Engine() string { return j.engine }

// Kernel is the kernel the job runs.
func (j Job) Kernel() *kernels.Kernel { return j.kernel }

// Custom is the user kernel the job runs, or nil for a catalogue kernel.
func (j Job) Custom() *custom.Kernel { return j.custom }

// Args are the kernel's arguments, in the order of its parameters.
func (j Job) Args() []int { return slices.Clone(j.args) }

// Options are the job's runs and warm-up runs, as measure.Measure takes them.
func (j Job) Options() measure.Options { return j.options }

// Executions is how many worker processes measure the cell, one after another (Run), or
// in turns with the other engines of its row (RunCells): its options' runs spread over
// them, never more processes than runs.
func (j Job) Executions() int {
	n := j.executions
	if n <= 0 {
		n = DefaultExecutions
	}
	return min(n, j.options.WithDefaults().Runs)
}

// Timeout bounds each execution of the job, setup included. Unless Options.Budget is set, runs that
// would not fit in 85% of it are skipped (Result.Runs says how many ran); a job still
// running at the limit is killed and reported as timed out.
func (j Job) Timeout() time.Duration { return j.timeout }

// Label renders the job's call as the articles write it, "fib_rec(40)".
func (j Job) Label() string {
	if j.kernel == nil {
		return "(no kernel)"
	}
	return j.kernel.Label(j.args)
}

// wireJob is a job as the parent hands it to a worker, on the worker's stdin.
type wireJob struct {
	Engine  string          `json:"engine"`
	Kernel  string          `json:"kernel"`
	Args    []int           `json:"args"`
	Options measure.Options `json:"options"`
	Timeout time.Duration   `json:"timeout_ns"`
	// Custom names a user kernel's build (its id, function and folder) instead of Kernel.
	Custom *wireCustom `json:"custom,omitempty"`
}

// wireCustom is a built user kernel as a worker finds it: in its build folder.
type wireCustom struct {
	ID   string      `json:"id"`
	Func custom.Func `json:"func"`
	Dir  string      `json:"dir"`
	// Native says the kernel was built natively too (the server allows native runs).
	Native bool `json:"native,omitempty"`
}

// Progress is reported while a job runs.
type Progress struct {
	// Phase is one of measure's phases: "load", "warmup", "calibrate" or "run".
	Phase string `json:"phase"`
	// Done and Total count runs within the phase.
	Done  int `json:"done"`
	Total int `json:"total"`
	// Execution is the worker process reporting, from 1, of the cell's Executions.
	Execution  int `json:"execution,omitempty"`
	Executions int `json:"executions,omitempty"`
}

// Options configure Run. The zero value is ready to use.
type Options struct {
	// OnProgress, if set, is called as the worker reports progress.
	OnProgress func(Progress)
	// OnFence, if set, is called with the layers of the fence (package sandbox) in force
	// in a worker that runs a user kernel, before the kernel runs.
	OnFence func(sandbox.Report)
}

// message is one line a worker writes on its stdout: the fence, progress, or the final
// result.
type message struct {
	Fence    *sandbox.Report `json:"fence,omitempty"`
	Progress *Progress       `json:"progress,omitempty"`
	Result   *measure.Result `json:"result,omitempty"`
}

// Run measures the job's cell in its executions (Job.Executions), one worker process
// after another, and returns the cell with its figures over them (Result.Executions).
// Failures of the run itself (stack overflow, time limit, crash, wrong result) come back
// in Result.Failure: the first failed execution ends the cell (a later one that reaches the
// time limit ends it keeping the executions before it, named in Result.Lost). When ctx ends first, the
// worker is killed and Run returns ctx.Err(). A worker also ends when this process does,
// however it ends (see ServeWorkerIfRequested). RunCells interleaves a row's cells.
func Run(ctx context.Context, job Job, opts Options) (measure.Result, error) {
	if job.kernel == nil {
		return measure.Result{}, errors.New("runner: the job was not made by Plan.Jobs: it has no kernel")
	}
	c := &cell{job: job}
	for !c.done() {
		if err := c.run(ctx, opts); err != nil {
			return measure.Result{}, err
		}
	}
	return c.result(), nil
}

// runExecution runs the job's execution i (from 0) in a worker process: its share of the
// job's runs (runsOfExecution), under the job's time limit.
func runExecution(ctx context.Context, job Job, i int, opts Options) (measure.Result, error) {
	wire := wireJob{Engine: job.engine, Kernel: job.kernel.Name, Args: job.args, Options: job.options, Timeout: job.timeout}
	if n := job.Executions(); n > 1 {
		o := wire.Options.WithDefaults()
		wire.Options.Runs = runsOfExecution(i, o.Runs, n)
		wire.Options.Warmup = o.Warmup
	}
	if job.custom != nil {
		wire.Custom = &wireCustom{ID: job.custom.ID, Func: job.custom.Func, Dir: job.custom.Dir, Native: job.custom.Native}
	}
	if wire.Timeout == 0 {
		wire.Timeout = DefaultTimeout
	}
	if wire.Options.Budget == 0 {
		// Runs that would not end well inside the time limit are skipped, so that a slow
		// cell reports fewer runs rather than no time at all.
		wire.Options.Budget = CellBudget(wire.Timeout)
	}
	input, err := json.Marshal(wire)
	if err != nil {
		return measure.Result{}, fmt.Errorf("encode job: %w", err)
	}
	out := &lineWriter{}
	var result *measure.Result
	var protocolErr error
	out.onLong = func() {
		if protocolErr == nil {
			protocolErr = errLongLine
		}
	}
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
		case m.Fence != nil && opts.OnFence != nil:
			opts.OnFence(*m.Fence)
		}
	}
	end, err := startWorker(ctx, workerCall{role: cellWorker, input: input, timeout: wire.Timeout, isolate: job.custom != nil, out: out})
	if err != nil {
		return measure.Result{}, err
	}
	opt := wire.Options.WithDefaults()
	base := measure.Result{
		Kernel: job.kernel.Name, Args: job.Args(), Engine: job.engine,
		Runs: opt.Runs, Warmup: opt.Warmup,
	}
	if job.kernel.Expected != nil {
		base.Expected = job.kernel.Expected(job.args)
	}
	if result != nil && end.waitErr == nil {
		return *result, nil
	}
	if end.timedOut {
		base.Failure = "timed out after " + wire.Timeout.String()
		return base, nil
	}
	if protocolErr != nil && end.waitErr == nil {
		return measure.Result{}, protocolErr
	}
	base.Failure = crashReason(end.stderr, end.waitErr)
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
		if line == "" || strings.HasPrefix(line, "[signal") || line == capped.Cut {
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
//
// A worker never outlives its parent: on Linux the kernel kills it when the parent dies
// (the parent-death signal), everywhere it exits when its stdin, which the parent holds
// open, reaches its end, and in any case it exits once its job's time limit and a margin
// have passed.
func ServeWorkerIfRequested() {
	custom.ExecLimitedIfRequested()        // a build of a user kernel: it never returns
	serveRole(warmupWorker, serveWarmup)   // an execution of a warm-up series
	serveRole(explainWorker, serveExplain) // one engine's explanation
	serveRole(cellWorker, serveWorker)     // one measured cell
}

// Exit statuses of a worker that ends itself.
const (
	exitOrphaned = 4 // its parent is gone
	exitOverdue  = 5 // its job ran past the time limit and the margin
)

// serveWorker reads one job from in, measures it and writes progress and the result to out
// as JSON lines. It calls exit when in reaches its end (the parent is gone) or when the job
// outlives its time limit by workerMargin.
func serveWorker(in io.Reader, out io.Writer, exit func(int)) error {
	br, wire, err := readJob[wireJob](in)
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
	// The parent checked the job (Plan.Jobs); the names are only resolved here.
	var k *kernels.Kernel
	var e engine.Engine
	if wire.Custom != nil {
		ck := &custom.Kernel{ID: wire.Custom.ID, Func: wire.Custom.Func, Dir: wire.Custom.Dir, Native: wire.Custom.Native}
		if err := custom.LimitWorker(); err != nil {
			return fmt.Errorf("limit the memory of a user kernel's run: %w", err)
		}
		k = ck.Kernel()
		if e, err = custom.NewEngine(wire.Engine, ck); err != nil {
			return err
		}
		// The engine has read the module or the source; nothing of the user's has run yet
		// (yaegi evaluates the source in Load, inside measure.Measure).
		report, err := sandbox.Apply(custom.FencePolicy(ck, wire.Engine))
		if err != nil {
			return fmt.Errorf("fence the run of a user kernel: %w", err)
		}
		send(message{Fence: &report})
	} else {
		if k, err = kernels.Lookup(wire.Kernel); err != nil {
			return err
		}
		if e, err = engine.New(wire.Engine); err != nil {
			return err
		}
	}
	defer guard(br, wire.Timeout, exit)()
	r := measure.Measure(context.Background(), e, k, wire.Args, wire.Options, func(phase string, done, total int) {
		send(message{Progress: &Progress{Phase: phase, Done: done, Total: total}})
	})
	send(message{Result: &r})
	if writeErr != nil {
		return fmt.Errorf("write result: %w", writeErr)
	}
	return nil
}

// guard makes a worker end itself when its parent is gone (the end of in, the rest of its
// stdin) or when its job runs past timeout by workerMargin; the returned function stops
// the second watch.
func guard(in io.Reader, timeout time.Duration, exit func(int)) (stop func()) {
	go func() {
		// Nothing more comes on stdin: its end means the parent closed it or died.
		_, _ = io.Copy(io.Discard, in)
		fmt.Fprintln(os.Stderr, "wasmgap worker: the parent process is gone: stopping")
		exit(exitOrphaned)
	}()
	if timeout <= 0 {
		return func() {}
	}
	overdue := time.AfterFunc(timeout+workerMargin, func() {
		fmt.Fprintf(os.Stderr, "wasmgap worker: still running %v after the job's time limit of %v: stopping\n", workerMargin, timeout)
		exit(exitOverdue)
	})
	return func() { overdue.Stop() }
}
