package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
)

// explainWorker is the value of workerEnv that makes a process an explain worker: one
// engine's explanation (Explain).
const explainWorker = "explain"

// maxExplainLine bounds an explanation's one line: every trace of a tracing JIT, decoded,
// is a few megabytes.
const maxExplainLine = 64 << 20

// wireExplain is an explanation as the parent hands it to a worker.
type wireExplain struct {
	Kernel  string          `json:"kernel"`
	Args    []int           `json:"args"`
	Engine  string          `json:"engine"`
	Options explain.Options `json:"options"`
	Timeout time.Duration   `json:"timeout_ns"`
}

// ExplainTimeout is the time limit of one engine's explanation: a cell's time limit (an
// engine's start, its first call, a runtime's printed code; DefaultTimeout when zero), and
// the warm-up and the profile the options ask for on top.
func ExplainTimeout(cell time.Duration, opts explain.Options) time.Duration {
	d := cmp.Or(cell, DefaultTimeout) + measure.Options{Warmup: 1, WarmupTime: opts.WarmupTime}.WarmupTarget()
	if opts.Profile {
		d += max(opts.ProfileTime, explain.DefaultProfileTime)
	}
	return d
}

// Explain explains kernel k called with args on one engine (package explain) in a fresh
// worker process, killed at timeout (ExplainTimeout's when zero) or when ctx ends: the
// native engine and wazero run the kernel in the explaining process, where a call cannot
// be interrupted, so no caller runs them in its own. The report has the one engine, or its
// refusal: a tier explain cannot show, the time limit, the worker's crash. An error is a bad
// request (an unknown engine, arguments out of range) or ctx's.
func Explain(ctx context.Context, k *kernels.Kernel, args []int, engine string, opts explain.Options, timeout time.Duration) (*explain.Report, error) {
	if err := k.Check(args); err != nil {
		return nil, err
	}
	if err := explain.CheckEngines([]string{engine}); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = ExplainTimeout(0, opts)
	}
	input, err := json.Marshal(wireExplain{Kernel: k.Name, Args: args, Engine: engine, Options: opts, Timeout: timeout})
	if err != nil {
		return nil, fmt.Errorf("encode explain job: %w", err)
	}
	var rep *explain.Report
	var protocolErr error
	out := &lineWriter{max: maxExplainLine, onLine: func(line []byte) {
		rep = new(explain.Report)
		protocolErr = json.Unmarshal(line, rep)
	}, onLong: func() { protocolErr = errLongLine }}
	start := time.Now()
	end, err := startWorker(ctx, workerCall{role: explainWorker, input: input, timeout: timeout, out: out})
	if err != nil {
		return nil, err
	}
	switch {
	case rep != nil && protocolErr == nil && end.waitErr == nil && len(rep.Engines) == 1:
		return rep, nil
	case end.timedOut:
		err = fmt.Errorf("timed out after %v", timeout)
	case protocolErr != nil:
		err = protocolErr
	default:
		err = errors.New(crashReason(end.stderr, end.waitErr))
	}
	return &explain.Report{Kernel: k.Name, Args: args, Label: k.Label(args), Arch: runtime.GOARCH, Engines: []explain.Explanation{
		{Engine: engine, Refused: fmt.Sprintf("explaining %s: %v", engine, err), Took: time.Since(start)},
	}}, nil
}

// serveExplain reads one explanation's job from in, explains it and writes the report to
// out as one JSON line.
func serveExplain(in io.Reader, out io.Writer, exit func(int)) error {
	br, wire, err := readJob[wireExplain](in)
	if err != nil {
		return err
	}
	k, err := kernels.Lookup(wire.Kernel)
	if err != nil {
		return err
	}
	defer guard(br, wire.Timeout, exit)()
	rep, err := explain.Explain(context.Background(), k, wire.Args, []string{wire.Engine}, wire.Options)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(out).Encode(rep); err != nil {
		return fmt.Errorf("write explanation: %w", err)
	}
	return nil
}
