package playground

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/internal/warmup"
)

// POST /api/warmup is `wasmgap warmup` for the page: one kernel on several server engines,
// each execution a fresh worker, the calls timed from the first and analysed by package
// internal/warmup, streamed as NDJSON (queued, started, progress per execution, result).
// A request with series instead (the page's own, timed in its Web Workers) is only
// analysed, by the same package: nothing runs.

const (
	// maxWarmupBody bounds a request: series of maxWarmupSamples times together, as JSON
	// numbers of up to 24 bytes with their commas, and room for names.
	maxWarmupBody = 25*maxWarmupSamples + 64<<10
	// maxWarmupBudget bounds one execution's budget on the shared server.
	maxWarmupBudget = 10 * time.Second
	// maxWarmupTotal bounds a study's budgets summed over its engines and executions: a
	// study holds one of the server's run slots for its whole length.
	maxWarmupTotal = 2 * time.Minute
	// maxWarmupSeries bounds the series of an analysis-only request.
	maxWarmupSeries = 64
)

// warmupRequest is the body of POST /api/warmup.
type warmupRequest struct {
	Kernel  string         `json:"kernel"`
	Args    map[string]int `json:"args"`
	Engines []string       `json:"engines"`
	// Executions, Calls, Group and BudgetMS are the study's settings (runner.Bounds);
	// absent for their defaults, budget_ms 0 for none (which this server refuses).
	Executions *int `json:"executions"`
	Calls      *int `json:"calls"`
	Group      *int `json:"group"`
	BudgetMS   *int `json:"budget_ms"`
	// Series, when set, are timed already (the page's browser engines): they are
	// analysed and nothing runs. Kernel and Args then only label the report.
	Series []warmupSeries `json:"series,omitempty"`
}

// warmupSeries is one engine's executions as the page timed them.
type warmupSeries struct {
	Engine string      `json:"engine"`
	Runs   []warmupRun `json:"runs"`
}

// warmupRun is one execution's series: times per call in ns, samples of group calls.
type warmupRun struct {
	Times []float64 `json:"times_ns"`
	Group int       `json:"group"`
	Timer string    `json:"timer,omitempty"`
}

const warmupFields = "kernel (string), args (object of integers), engines (array of strings), executions, calls, group, budget_ms (integers), or series (array of {engine, runs: [{times_ns, group, timer}]}) to analyse series timed already"

// warmupEvent is one line of the NDJSON stream of POST /api/warmup.
type warmupEvent struct {
	// Type is "queued", "started", "progress", "result" or "error".
	Type     string `json:"type"`
	Position int    `json:"position,omitempty"`
	// Engine and Execution (from 1) say which execution starts, for "progress".
	Engine    string `json:"engine,omitempty"`
	Execution int    `json:"execution,omitempty"`
	// Result is the study, for "result"; ID its id in the results store (GET
	// /api/warmup/{id}), when the server keeps one.
	Result *warmup.Report `json:"result,omitempty"`
	ID     int64          `json:"id,omitempty"`
	Error  string         `json:"error,omitempty"`
}

func (s *Server) handleWarmup(w http.ResponseWriter, r *http.Request) {
	var req warmupRequest
	if aerr := (jsonBody{route: "POST /api/warmup", max: maxWarmupBody, fields: warmupFields}).decode(w, r, &req); aerr != nil {
		writeError(w, aerr.status, *aerr)
		return
	}
	if req.Series != nil {
		if aerr := checkSeries(req); aerr != nil {
			writeError(w, http.StatusBadRequest, *aerr)
			return
		}
		// An analysis takes a CPU for up to seconds: it shares the run queue.
		release, ok := s.admit(w, r, measured)
		if !ok {
			return
		}
		defer release()
		writeJSON(w, http.StatusOK, analyseSeries(req))
		return
	}
	plan, aerr := s.warmupPlan(req)
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
		return
	}
	serveQueued(s, w, r, func(typ string, pos int, msg string) warmupEvent {
		return warmupEvent{Type: typ, Position: pos, Error: msg}
	}, func(ctx context.Context, send func(warmupEvent)) error {
		rep, err := plan.Run(ctx, func(engine string, i int) {
			send(warmupEvent{Type: "progress", Engine: engine, Execution: i + 1})
		})
		if err != nil {
			return err
		}
		send(warmupEvent{Type: "result", Result: &rep, ID: s.saveStudy(rep)})
		return nil
	})
}

// warmupPlan checks a request that asks the server to run: the engines it offers, the
// bounds of a shared server, then runner.WarmupPlan's own checks.
func (s *Server) warmupPlan(req warmupRequest) (runner.WarmupPlan, *apiError) {
	for _, e := range req.Engines {
		if !slices.Contains(s.engines, e) {
			return runner.WarmupPlan{}, &apiError{Error: fmt.Sprintf("engine %q is not offered by this server: it offers %s", e, strings.Join(s.engines, ", ")), Field: "engines"}
		}
	}
	// The study's settings against the one table, then this shared server's own bound
	// on a budget: one it allows, absent for the most it allows.
	budget := maxWarmupBudget
	if req.BudgetMS != nil {
		budget = time.Duration(*req.BudgetMS) * time.Millisecond
		if *req.BudgetMS < 1 || budget > maxWarmupBudget {
			return runner.WarmupPlan{}, &apiError{Error: fmt.Sprintf("budget_ms = %d is out of range on this server: allowed 1 to %d (absent for %d)", *req.BudgetMS, maxWarmupBudget.Milliseconds(), maxWarmupBudget.Milliseconds()), Field: "budget_ms"}
		}
	}
	executions, collection, _, err := runner.WarmupSettings{Executions: req.Executions, Calls: req.Calls, Group: req.Group, Budget: &budget}.Check()
	if err != nil {
		return runner.WarmupPlan{}, fieldAPIError(err)
	}
	plan := runner.WarmupPlan{
		Engines: req.Engines, Kernel: req.Kernel, Args: req.Args, Executions: executions, Collection: collection,
	}
	if plan.Kernel == "" && len(plan.Args) == 0 {
		plan.Args = map[string]int{"n": 20} // fib_rec(20), as `wasmgap warmup`
	}
	if _, err := plan.Jobs(); err != nil {
		field := "engines"
		var fe *runner.FieldError
		if errors.As(err, &fe) {
			field = fe.Field
			if field == "engine" {
				field = "engines"
			}
		}
		return runner.WarmupPlan{}, &apiError{Error: err.Error(), Field: field}
	}
	if n := time.Duration(len(plan.Engines) * plan.Executions); req.BudgetMS == nil && n*plan.Collection.Budget > maxWarmupTotal {
		// No budget asked for: the default one, shared so that the study fits the
		// server's (fib_rec on the default engines, 4 × 5 executions, gets 6 s each).
		plan.Collection.Budget, plan.Timeout = maxWarmupTotal/n, 0
		if _, err := plan.Jobs(); err != nil {
			return runner.WarmupPlan{}, &apiError{Error: err.Error(), Field: "budget_ms"}
		}
	}
	if total := time.Duration(len(plan.Engines)*plan.Executions) * plan.Collection.Budget; total > maxWarmupTotal {
		return runner.WarmupPlan{}, &apiError{Error: fmt.Sprintf("%d engines × %d executions × %v is %v of budget: this server allows %v a study; choose fewer engines or executions, or a smaller budget_ms", len(plan.Engines), plan.Executions, plan.Collection.Budget, total, maxWarmupTotal), Field: "budget_ms"}
	}
	return plan, nil
}

// Bounds of the series of an analysis-only request, beside warmup's own (MinSamples,
// MaxSamples, MaxGroup) and a sample's (maxSampleNS, as the share route's).
const (
	// maxWarmupName bounds the kernel's and each engine's name, and a timer's.
	maxWarmupName = 64
	// maxWarmupSamples bounds the samples of a request, all series together: 10,000
	// samples take about a second to analyse.
	maxWarmupSamples = 4 * warmup.MaxSamples
)

// checkSeries checks an analysis-only request as the share route checks a browser's
// cells: bounded names, counts and sizes, each time a finite number of ns above zero and
// at most an hour, whose group of calls lasted at least a nanosecond. The error names the
// field (series[0].runs[1].times_ns).
func checkSeries(req warmupRequest) *apiError {
	name := func(field, v string) *apiError {
		if len(v) > maxWarmupName || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			return &apiError{Error: fmt.Sprintf("%s is %d bytes: allowed at most %d printable characters", field, len(v), maxWarmupName), Field: field}
		}
		return nil
	}
	if aerr := name("kernel", req.Kernel); aerr != nil {
		return aerr
	}
	if len(req.Args) > 0 {
		return &apiError{Error: "args with series: series label their kernel by name alone; leave args out", Field: "args"}
	}
	if len(req.Series) == 0 || len(req.Series) > maxWarmupSeries {
		return &apiError{Error: fmt.Sprintf("series holds %d engines: allowed 1 to %d", len(req.Series), maxWarmupSeries), Field: "series"}
	}
	total := 0
	for i, e := range req.Series {
		at := fmt.Sprintf("series[%d]", i)
		if e.Engine == "" {
			return &apiError{Error: at + ".engine is missing: name the engine that timed the series", Field: at + ".engine"}
		}
		if aerr := name(at+".engine", e.Engine); aerr != nil {
			return aerr
		}
		if len(e.Runs) == 0 || len(e.Runs) > runner.MaxWarmupExecutions {
			return &apiError{Error: fmt.Sprintf("%s needs an engine and 1 to %d runs, not %d", at, runner.MaxWarmupExecutions, len(e.Runs)), Field: at + ".runs"}
		}
		for j, r := range e.Runs {
			at := fmt.Sprintf("%s.runs[%d]", at, j)
			if aerr := name(at+".timer", r.Timer); aerr != nil {
				return aerr
			}
			if r.Group < 1 || r.Group > warmup.MaxGroup {
				return &apiError{Error: fmt.Sprintf("%s.group = %d is out of range: allowed 1 to %d calls per sample", at, r.Group, warmup.MaxGroup), Field: at + ".group"}
			}
			if n := len(r.Times); n < warmup.MinSamples || n > warmup.MaxSamples {
				return &apiError{Error: fmt.Sprintf("%s.times_ns holds %d samples: allowed %d to %d", at, n, warmup.MinSamples, warmup.MaxSamples), Field: at + ".times_ns"}
			}
			if total += len(r.Times); total > maxWarmupSamples {
				return &apiError{Error: fmt.Sprintf("the series hold more than %d samples together: analyse fewer at a time", maxWarmupSamples), Field: "series"}
			}
			for k, v := range r.Times {
				if aerr := checkSample(fmt.Sprintf("%s.times_ns[%d]", at, k), v, r.Group, clockResolution(0)); aerr != nil {
					aerr.Field = at + ".times_ns"
					return aerr
				}
			}
		}
	}
	return nil
}

// analyseSeries analyses series timed elsewhere (the page's workers), once checkSeries
// passed them.
func analyseSeries(req warmupRequest) warmup.Report {
	rep := warmup.Report{Kernel: req.Kernel, Label: req.Kernel, Method: warmup.NewMethod(0, warmup.Collection{}, warmup.Options{})}
	for _, e := range req.Series {
		var ss []warmup.Series
		for _, r := range e.Runs {
			ss = append(ss, warmup.Series{Times: r.Times, Group: r.Group, Timer: r.Timer, Stopped: "samples"})
		}
		rep.Method.Executions = max(rep.Method.Executions, len(e.Runs))
		rep.Engines = append(rep.Engines, warmup.NewEngineResult(e.Engine, ss, warmup.Options{}))
	}
	return rep
}
