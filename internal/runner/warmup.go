package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/warmup"
	"github.com/wasmgap/wasmgap/kernels"
)

// warmupWorker is the value of workerEnv that makes a process a warm-up worker: one
// execution of a warm-up series (RunWarmup).
const warmupWorker = "warmup"

// wireWarmup is a warm-up execution as the parent hands it to a worker.
type wireWarmup struct {
	Engine     string            `json:"engine"`
	Kernel     string            `json:"kernel"`
	Args       []int             `json:"args"`
	Collection warmup.Collection `json:"collection"`
	Timeout    time.Duration     `json:"timeout_ns"`
}

// WarmupTimeout is the time limit of one warm-up execution whose job has none of its own:
// its budget (none: nothing) and the default time limit for the engine's start and the
// last samples.
func WarmupTimeout(c warmup.Collection) time.Duration {
	return max(c.WithDefaults().Budget, 0) + DefaultTimeout
}

// RunWarmup runs one execution of a warm-up series in a fresh worker process: the job's
// engine is loaded there and the kernel timed from its first call (warmup.Collect). A
// failure of the execution (a wrong value, a stack overflow, a crash, the time limit) is
// in Series.Failure; an error means the execution could not be asked for. The job comes
// from Plan.Jobs (its options are not used); its time limit, when zero, is the
// collection's budget plus DefaultTimeout.
func RunWarmup(ctx context.Context, job Job, c warmup.Collection) (warmup.Series, error) {
	if job.kernel == nil {
		return warmup.Series{}, errors.New("runner: the job was not made by Plan.Jobs: it has no kernel")
	}
	if job.custom != nil {
		return warmup.Series{}, fmt.Errorf("a warm-up runs catalogue kernels only, not the user kernel %s", job.kernel.Name)
	}
	c = c.WithDefaults()
	wire := wireWarmup{Engine: job.engine, Kernel: job.kernel.Name, Args: job.args, Collection: c, Timeout: job.timeout}
	if wire.Timeout == 0 {
		wire.Timeout = WarmupTimeout(c)
	}
	input, err := json.Marshal(wire)
	if err != nil {
		return warmup.Series{}, fmt.Errorf("encode warm-up job: %w", err)
	}
	var series *warmup.Series
	var protocolErr error
	out := &lineWriter{onLine: func(line []byte) {
		var s warmup.Series
		if err := json.Unmarshal(line, &s); err != nil {
			if protocolErr == nil {
				protocolErr = fmt.Errorf("worker wrote %q: %w", truncate(string(line), 200), err)
			}
			return
		}
		series = &s
	}}
	end, err := startWorker(ctx, workerCall{role: warmupWorker, input: input, timeout: wire.Timeout, out: out})
	if err != nil {
		return warmup.Series{}, err
	}
	switch {
	case series != nil && end.waitErr == nil:
		return *series, nil
	case end.timedOut:
		return warmup.Series{Group: c.Group, Failure: "timed out after " + wire.Timeout.String()}, nil
	case protocolErr != nil && end.waitErr == nil:
		return warmup.Series{}, protocolErr
	}
	return warmup.Series{Group: c.Group, Failure: crashReason(end.stderr, end.waitErr)}, nil
}

// serveWarmup reads one warm-up job from in, collects its series and writes it to out as
// one JSON line.
func serveWarmup(in io.Reader, out io.Writer, exit func(int)) error {
	br, wire, err := readJob[wireWarmup](in)
	if err != nil {
		return err
	}
	k, err := kernels.Lookup(wire.Kernel)
	if err != nil {
		return err
	}
	e, err := engine.New(wire.Engine)
	if err != nil {
		return err
	}
	defer guard(br, wire.Timeout, exit)()
	s := warmup.Collect(context.Background(), e, k, wire.Args, wire.Collection)
	if err := json.NewEncoder(out).Encode(s); err != nil {
		return fmt.Errorf("write series: %w", err)
	}
	return nil
}

// The defaults of a warm-up study: fib_rec(20) on the engines whose tiers it shows —
// native as the control (flat), HotSpot's C2, V8's TurboFan and PyPy's tracing JIT.
var (
	DefaultWarmupKernel  = "fib_rec"
	DefaultWarmupEngines = []string{engine.Native, "java", "node-js", "pypy"}
)

// Bounds and default of a study's executions (fresh processes per engine; Bounds).
const (
	DefaultWarmupExecutions = 5
	MaxWarmupExecutions     = 20
)

// WarmupPlan is a warm-up study: one kernel with its arguments on several engines, several
// executions each, its numbers checked already (WarmupSettings.Check, against Bounds).
// Empty fields take the defaults above.
type WarmupPlan struct {
	Engines []string
	Kernel  string
	// Args sets the kernel's parameters by name; the rest keep their defaults.
	Args       map[string]int
	Executions int
	Collection warmup.Collection
	// Options tune the analysis.
	Options warmup.Options
	// Timeout bounds each execution; zero means WarmupTimeout of the collection.
	Timeout time.Duration
}

// Jobs checks the plan's names and arguments (through Plan.Jobs, the one check of engines
// and arguments) and returns one job per engine, with the plan's defaults filled in, or a
// *FieldError.
func (p *WarmupPlan) Jobs() ([]Job, error) {
	if p.Kernel == "" {
		p.Kernel = DefaultWarmupKernel
	}
	if len(p.Engines) == 0 {
		p.Engines = slices.Clone(DefaultWarmupEngines)
	}
	if p.Executions == 0 {
		p.Executions = DefaultWarmupExecutions
	}
	c := p.Collection.WithDefaults()
	p.Collection = c
	if p.Timeout == 0 {
		p.Timeout = WarmupTimeout(c)
	}
	for i, name := range p.Engines {
		if slices.Contains(p.Engines[:i], name) {
			return nil, fieldError("engine", fmt.Errorf("engine %s is named twice: name each engine once", name))
		}
	}
	jobs, err := Plan{Engines: p.Engines, Kernels: []string{p.Kernel}, Args: p.Args, Options: measure.Defaults(), Timeout: p.Timeout}.Jobs()
	if err != nil {
		return nil, err
	}
	return jobs, nil
}

// Run runs the study: for each engine in turn, its executions one after another, each in
// a fresh worker (RunWarmup), then their analysis. onRun, if set, is called before each
// execution. The error is the plan's (a *FieldError) or the context's.
func (p WarmupPlan) Run(ctx context.Context, onRun func(engine string, execution int)) (warmup.Report, error) {
	jobs, err := p.Jobs()
	if err != nil {
		return warmup.Report{}, err
	}
	k := jobs[0].Kernel()
	rep := warmup.Report{Kernel: k.Name, Args: jobs[0].Args(), Label: jobs[0].Label(), Method: warmup.NewMethod(p.Executions, p.Collection, p.Options)}
	for _, job := range jobs {
		var series []warmup.Series
		for i := range p.Executions {
			if onRun != nil {
				onRun(job.Engine(), i)
			}
			s, err := RunWarmup(ctx, job, p.Collection)
			if err != nil {
				return warmup.Report{}, err
			}
			series = append(series, s)
		}
		rep.Engines = append(rep.Engines, warmup.NewEngineResult(job.Engine(), series, p.Options))
	}
	return rep, nil
}
