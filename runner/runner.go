// Package runner runs measurements in worker processes (this same binary, started with a
// hidden switch) so that no kernel can take down its caller: a runaway run is killed at
// its time limit, a native stack overflow or any other crash ends only the worker, and
// every outcome comes back as a measure.Result.
package runner

import (
	"context"
	"errors"
	"time"

	"github.com/wasmgap/wasmgap/measure"
)

// Job is one measurement to run in a worker.
type Job struct {
	Engine  string          `json:"engine"`
	Kernel  string          `json:"kernel"`
	Args    []int           `json:"args"`
	Options measure.Options `json:"options"`
	// Timeout bounds the whole job, setup included (default 30s).
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

// Run checks the job (unknown engine or kernel, arguments out of range: an error that says
// what is allowed, before anything runs), then runs it in a worker process. Failures of the
// run itself (stack overflow, time limit, crash, wrong result) come back in Result.Failure.
func Run(ctx context.Context, job Job, opts Options) (measure.Result, error) {
	return measure.Result{}, errors.New("runner: not implemented yet")
}

// ServeWorkerIfRequested turns this process into a worker when it was started as one, and
// exits when the job is done; otherwise it returns at once. Call it first in main, and in
// TestMain of every package whose tests use Run.
func ServeWorkerIfRequested() {}
