package playground

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/custom"
	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

// apiError is the body of every 4xx/5xx answer of the API.
type apiError struct {
	// Error says what was wrong and what is allowed.
	Error string `json:"error"`
	// Field names the request field at fault ("kernel", "engine", "args.n", "runs", …).
	Field string `json:"field,omitempty"`
	// status, when set, answers the error instead of the caller's (408 for a slow body).
	status int
}

// writeJSON answers v with status. v is encoded before the status is written, so that a
// value JSON cannot hold (a NaN, an infinity) is a 500 that says so, never a status with
// no body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b.Reset()
		status = http.StatusInternalServerError
		_ = enc.Encode(apiError{Error: "the answer could not be encoded as JSON: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes()) // the client may be gone; nothing else to do
}

func writeError(w http.ResponseWriter, status int, e apiError) {
	writeJSON(w, status, e)
}

// limit is one bounded number of the API, with its default.
type limit struct {
	Default int `json:"default"`
	Min     int `json:"min"`
	Max     int `json:"max"`
}

// countLimit is a count's bounds (runner.Bounds) as the catalogue serves them.
func countLimit(s runner.Setting) limit { return limit{int(s.Default), int(s.Min), int(s.Max)} }

// msLimit is a duration's bounds (runner.Bounds) in milliseconds, as the catalogue
// serves them.
func msLimit(s runner.Setting) limit {
	ms := func(ns int64) int { return int(time.Duration(ns) / time.Millisecond) }
	return limit{ms(s.Default), ms(s.Min), ms(s.Max)}
}

// studyBudgetMS is a study's budget_ms as POST /api/warmup takes it: runner.Bounds.Budget
// narrowed to this server's maxWarmupBudget, which is also the default of an absent one
// (shared out when the study's engines and executions would outlast maxWarmupTotal), and
// never none, so that a study's total stays bounded.
func studyBudgetMS() limit {
	l := msLimit(runner.Bounds.Budget.WithMax(int64(maxWarmupBudget)))
	l.Min = 1
	return l
}

// catalogue is the answer of GET /api/kernels.
type catalogue struct {
	Kernels []*kernels.Kernel `json:"kernels"`
	Engines []string          `json:"engines"`
	// EngineInfo describes the offered engines and the page's own (engine.Infos): the
	// page's titles, groups, order, colours and install hints.
	EngineInfo []engine.Info `json:"engine_info"`
	// ExplainJITs are the engines whose explanation (GET /api/explain) waits for a JIT's
	// warm-up, seconds (explain.JITs): the Code view says so while it waits.
	ExplainJITs []string `json:"explain_jits"`
	// CustomEngines are the server engines that run user kernels (custom.Engines), when
	// the server builds them.
	CustomEngines []string `json:"custom_engines,omitempty"`
	// CustomWarming is true while the server fills its build cache for user kernels in
	// the background (custom.Builder.Warm), at idle priority and paused during runs.
	CustomWarming bool  `json:"custom_warming,omitempty"`
	Runs          limit `json:"runs"`
	Warmup        limit `json:"warmup"`
	// Executions bounds executions, the worker processes of one cell.
	Executions limit `json:"executions"`
	// MinSampleMS bounds min_sample_ms, how long a sample lasts at least (0: one call
	// per sample).
	MinSampleMS limit `json:"min_sample_ms"`
	// WarmupMS bounds warmup_ms, how long a warm-up lasts at least (0: its warmup calls
	// alone).
	WarmupMS limit `json:"warmup_ms"`
	// StudyExecutions, Calls and BudgetMS bound a warm-up study's (POST /api/warmup)
	// executions, samples per execution and time per execution in ms.
	StudyExecutions limit              `json:"study_executions"`
	Calls           limit              `json:"calls"`
	BudgetMS        limit              `json:"budget_ms"`
	TimeoutNS       time.Duration      `json:"timeout_ns"`
	Slots           int                `json:"slots"`
	Environment     report.Environment `json:"environment"`
	Panels          map[string]bool    `json:"panels"`
	Articles        map[string]string  `json:"articles"`
}

func (s *Server) handleKernels(w http.ResponseWriter, r *http.Request) {
	timeout := s.limit()
	var customEngines []string
	warming := false
	if s.opts.Custom != nil {
		customEngines, warming = custom.Engines, s.opts.Custom.Warming()
	}
	writeJSON(w, http.StatusOK, catalogue{
		CustomEngines:   customEngines,
		CustomWarming:   warming,
		Kernels:         kernels.Every(),
		Engines:         s.engines,
		EngineInfo:      engineInfo(s.engines),
		ExplainJITs:     explain.JITs(),
		Runs:            countLimit(runner.Bounds.Runs),
		Warmup:          countLimit(runner.Bounds.Warmup),
		Executions:      countLimit(runner.Bounds.Executions),
		MinSampleMS:     msLimit(runner.Bounds.MinSample),
		WarmupMS:        msLimit(runner.Bounds.WarmupTime),
		StudyExecutions: countLimit(runner.Bounds.WarmupExecutions),
		Calls:           countLimit(runner.Bounds.Calls),
		BudgetMS:        studyBudgetMS(),
		TimeoutNS:       timeout,
		Slots:           s.queue.slots,
		Environment:     s.env,
		Panels:          map[string]bool{"chat": s.opts.Chat != nil, "load": s.opts.Load != nil, "custom": s.opts.Custom != nil, "results": s.opts.Results != nil, "farm": s.opts.Farm != nil},
		Articles: map[string]string{
			kernels.GroupRecursion: kernels.ArticleRecursion,
			kernels.GroupLoops:     kernels.ArticleLoops,
		},
	})
}

// engineInfo describes the offered engines, then the page's (engine.Infos), in rank order.
func engineInfo(offered []string) []engine.Info {
	var out []engine.Info
	for _, info := range engine.Infos() {
		if info.Place == engine.PlacePage || slices.Contains(offered, info.Name) {
			out = append(out, info)
		}
	}
	slices.SortStableFunc(out, func(a, b engine.Info) int { return a.Rank - b.Rank })
	return out
}

// parseArgs reads the named arguments of a request as integers (their ranges are the
// catalogue's to check, in kernels.Kernel.Check); the error names the field ("args.n").
func parseArgs(named map[string]string) (map[string]int, *apiError) {
	ints, err := runner.ParseArgs(named)
	if err != nil {
		return nil, fieldAPIError(err)
	}
	return ints, nil
}

func lookupKernel(name string) (*kernels.Kernel, *apiError) {
	if name == "" {
		return nil, &apiError{Error: "kernel is missing: valid kernels are " + strings.Join(kernels.Names(), ", "), Field: "kernel"}
	}
	k, err := kernels.Lookup(name)
	if err != nil {
		return nil, &apiError{Error: err.Error(), Field: "kernel"}
	}
	return k, nil
}

// expectedAnswer is the answer of GET /api/expected.
type expectedAnswer struct {
	Kernel string `json:"kernel"`
	Args   []int  `json:"args"`
	Label  string `json:"label"`
	// Expected is a decimal string: int64 values past 2^53 survive JavaScript.
	Expected string `json:"expected"`
}

func (s *Server) handleExpected(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	k, aerr := lookupKernel(q.Get("kernel"))
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
		return
	}
	named := map[string]string{}
	for name, values := range q {
		if name != "kernel" {
			named[name] = values[0]
		}
	}
	ints, aerr := parseArgs(named)
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
		return
	}
	args, err := k.Args(ints)
	if err != nil {
		field := "args"
		var ae *kernels.ArgError
		if errors.As(err, &ae) && ae.Param != "" {
			field = "args." + ae.Param
		}
		writeError(w, http.StatusBadRequest, apiError{Error: err.Error(), Field: field})
		return
	}
	writeJSON(w, http.StatusOK, expectedAnswer{
		Kernel: k.Name, Args: args, Label: k.Label(args),
		Expected: strconv.FormatInt(k.Expected(args), 10),
	})
}

// runRequest is the body of POST /api/run.
type runRequest struct {
	Kernel string                     `json:"kernel"`
	Engine string                     `json:"engine"`
	Args   map[string]json.RawMessage `json:"args"`
	Runs   *int                       `json:"runs"`
	Warmup *int                       `json:"warmup"`
	// Executions is how many worker processes measure the cell, its runs spread over
	// them (runner.Bounds.Executions); absent for runner.DefaultExecutions.
	Executions *int `json:"executions"`
	// MinSampleMS is how long a sample lasts at least, in milliseconds: 0 for one call
	// per sample, up to runner.MaxMinSample; absent for measure.DefaultMinSample.
	MinSampleMS *int `json:"min_sample_ms"`
	// WarmupMS is how long a warm-up (warmup of 1 or more) lasts at least, in
	// milliseconds: 0 for its warmup calls alone, up to runner.MaxWarmupTime; absent for
	// measure.DefaultWarmupTime.
	WarmupMS *int `json:"warmup_ms"`
	// Batch names the page's Run this cell belongs to (pagerun.go): the cells of one
	// batch are stored as one run.
	Batch string `json:"batch"`
	// TimeoutMS bounds this cell, in milliseconds, below the server's own limit
	// (timeout.go); absent for the server's.
	TimeoutMS *int `json:"timeout_ms"`
}

// job turns a run request into a job through a one-cell runner.Plan, the path the CLI's
// cells take too, or says what is wrong. Only what is the page's own is checked here:
// that the request names a kernel and one of this server's engines, and the page's lower
// bound on runs.
func (s *Server) job(req runRequest) (runner.Job, *apiError) {
	if req.Kernel == "" {
		_, aerr := lookupKernel(req.Kernel) // "kernel is missing: valid kernels are …"
		return runner.Job{}, aerr
	}
	if !slices.Contains(s.engines, req.Engine) {
		what := "engine is missing"
		if req.Engine != "" {
			what = fmt.Sprintf("unknown engine %q", req.Engine)
		}
		return runner.Job{}, &apiError{
			Error: what + ": server engines are " + strings.Join(s.engines, ", ") +
				" (" + strings.Join(engine.PageNames(), " and ") + " run in the page)",
			Field: "engine",
		}
	}
	ck, isCustom, aerr := s.lookupCustom(req.Kernel)
	if aerr != nil {
		return runner.Job{}, aerr
	}
	in := s.input(req.Args, req.Runs, req.Warmup, req.MinSampleMS, req.WarmupMS, req.TimeoutMS)
	in.Engines, in.OneKernel, in.Executions = []string{req.Engine}, true, req.Executions
	if isCustom {
		in.Custom = ck
	} else {
		in.Kernels = []string{req.Kernel}
	}
	plan, err := in.Plan()
	if err != nil {
		return runner.Job{}, fieldAPIError(err)
	}
	jobs, err := plan.Jobs()
	if err != nil {
		return runner.Job{}, fieldAPIError(err)
	}
	return jobs[0], nil
}

// fieldAPIError is the API's error for an error of runner.Input or runner.Plan: its
// message, and its field as the request names it (min_sample_ms, warmup_ms).
func fieldAPIError(err error) *apiError {
	aerr := &apiError{Error: err.Error()}
	var fe *runner.FieldError
	if errors.As(err, &fe) {
		aerr.Field = fe.Field
		switch fe.Field {
		case runner.Bounds.MinSample.Field:
			aerr.Field = "min_sample_ms"
		case runner.Bounds.WarmupTime.Field:
			aerr.Field = "warmup_ms"
		case runner.Bounds.Timeout.Field:
			aerr.Field = "timeout_ms"
		case runner.Bounds.Budget.Field:
			aerr.Field = "budget_ms"
		}
	}
	return aerr
}

// input is the runner.Input of a request's settings that a run and a farm plan share: its
// args, runs and warm-up, its durations in milliseconds (0 ms is none, as the Input's zero
// durations), and its own time limit (timeout_ms) within the server's, else the server's.
func (s *Server) input(args map[string]json.RawMessage, runs, warmup, minSampleMS, warmupMS, timeoutMS *int) runner.Input {
	in := runner.Input{
		Args: make(map[string]string, len(args)), Runs: runs, Warmup: warmup, MinSample: millis(minSampleMS),
		WarmupTime: millis(warmupMS), Timeout: millis(timeoutMS), MaxTimeout: s.limit(),
	}
	for name, raw := range args {
		in.Args[name] = string(bytes.TrimSpace(raw))
	}
	return in
}

// millis is a request's setting given in milliseconds (min_sample_ms, warmup_ms) as a
// duration; nil when absent.
func millis(v *int) *time.Duration {
	if v == nil {
		return nil
	}
	d := time.Duration(*v) * time.Millisecond
	return &d
}

// runFields are the fields of a run request (POST /api/run, POST /api/forecast).
const runFields = "kernel (string), engine (string), args (object of integers), runs (integer), warmup (integer), executions (integer), min_sample_ms (integer), warmup_ms (integer), batch (string), timeout_ms (integer)"

// decodeRunRequest reads a run request sent to route, naming the field of any JSON type
// error.
func decodeRunRequest(w http.ResponseWriter, r *http.Request, route string) (runRequest, *apiError) {
	var req runRequest
	return req, jsonBody{route: route, max: maxRequestBody, fields: runFields, typeOf: jsonType}.decode(w, r, &req)
}

// jsonType is what a run request's field must be.
func jsonType(field string) string {
	switch {
	case field == "kernel" || field == "engine":
		return "a string"
	case field == "args":
		return "an object of integers"
	default:
		return "an integer"
	}
}

// event is one line of the NDJSON stream of POST /api/run.
type event struct {
	// Type is "queued", "started", "progress", "result" or "error".
	Type string `json:"type"`
	// Position is the run's place in the queue (1 = next), for "queued".
	Position int `json:"position,omitempty"`
	// Phase, Done and Total report progress ("load", "warmup", "run"): Done of Total
	// runs of the phase are done.
	Phase string `json:"phase,omitempty"`
	Done  *int   `json:"done,omitempty"`
	Total *int   `json:"total,omitempty"`
	// Result is the measurement, for "result".
	Result *measure.Result `json:"result,omitempty"`
	// Value and Expected repeat the result's int64 values as decimal strings, exact in
	// JavaScript past 2^53.
	Value    string `json:"value,omitempty"`
	Expected string `json:"expected,omitempty"`
	// Environment is the machine and versions behind the result.
	Environment *report.Environment `json:"environment,omitempty"`
	// Run is the stored run's id, for "result" when the server keeps a results store.
	Run int64 `json:"run,omitempty"`
	// Error says why the run could not be made, for "error".
	Error string `json:"error,omitempty"`
}

// errShuttingDown ends the runs of a server that is shutting down.
var errShuttingDown = errors.New("the server is shutting down: run it again once it is back")

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	req, aerr := decodeRunRequest(w, r, "POST /api/run")
	if aerr != nil {
		writeError(w, cmp.Or(aerr.status, http.StatusBadRequest), *aerr)
		return
	}
	job, aerr := s.job(req)
	if aerr == nil {
		aerr = checkBatch(req.Batch)
	}
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
		return
	}
	serveQueued(s, w, r, func(typ string, pos int, msg string) event {
		return event{Type: typ, Position: pos, Error: msg}
	}, func(ctx context.Context, send func(event)) error {
		res, err := s.run(ctx, job, runner.Options{OnProgress: func(p runner.Progress) {
			send(event{Type: "progress", Phase: p.Phase, Done: &p.Done, Total: &p.Total})
		}})
		if err != nil {
			return err
		}
		env := s.env.WithRuntimes([]measure.Result{res})
		send(event{
			Type: "result", Result: &res,
			Value:       strconv.FormatInt(res.Value, 10),
			Expected:    strconv.FormatInt(res.Expected, 10),
			Environment: &env,
			Run:         s.savePageCell(req.Batch, job, res, env),
		})
		return nil
	})
}
