package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmgap/wasmgap/kernels"
	"github.com/wasmgap/wasmgap/measure"
	"github.com/wasmgap/wasmgap/runner"
)

// apiError is the body of every 4xx/5xx answer of the API.
type apiError struct {
	// Error says what was wrong and what is allowed.
	Error string `json:"error"`
	// Field names the request field at fault ("kernel", "engine", "args.n", "runs", …).
	Field string `json:"field,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may be gone; nothing else to do
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

// catalogue is the answer of GET /api/kernels.
type catalogue struct {
	Kernels     []*kernels.Kernel `json:"kernels"`
	Engines     []string          `json:"engines"`
	Runs        limit             `json:"runs"`
	Warmup      limit             `json:"warmup"`
	TimeoutNS   time.Duration     `json:"timeout_ns"`
	Slots       int               `json:"slots"`
	Environment environment       `json:"environment"`
	Panels      map[string]bool   `json:"panels"`
	Articles    map[string]string `json:"articles"`
}

func (s *Server) handleKernels(w http.ResponseWriter, r *http.Request) {
	timeout := s.opts.Timeout
	if timeout == 0 {
		timeout = runner.DefaultTimeout
	}
	writeJSON(w, http.StatusOK, catalogue{
		Kernels:     kernels.All(),
		Engines:     s.engines,
		Runs:        limit{DefaultRuns, 1, MaxRuns},
		Warmup:      limit{DefaultWarmup, 0, MaxWarmup},
		TimeoutNS:   timeout,
		Slots:       s.queue.slots,
		Environment: s.env,
		Panels:      map[string]bool{"chat": s.opts.Chat != nil, "load": s.opts.Load != nil},
		Articles: map[string]string{
			kernels.GroupRecursion: kernels.ArticleRecursion,
			kernels.GroupLoops:     kernels.ArticleLoops,
		},
	})
}

// kernelArgs checks named arguments against a kernel's parameters: unknown names, values
// that are not integers, values out of range. The error names the field ("args.n").
func kernelArgs(k *kernels.Kernel, named map[string]string) ([]int, *apiError) {
	params := make([]string, len(k.Params))
	for i, p := range k.Params {
		params[i] = p.Name
	}
	ints := make(map[string]int, len(named))
	names := make([]string, 0, len(named))
	for name := range named {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(params, name) {
			return nil, &apiError{
				Error: fmt.Sprintf("%s has no parameter %q: its parameters are %s", k.Name, name, strings.Join(params, ", ")),
				Field: "args." + name,
			}
		}
		v, err := strconv.Atoi(named[name])
		if err != nil {
			return nil, &apiError{
				Error: fmt.Sprintf("args.%s must be an integer: %s = %s is not one", name, name, named[name]),
				Field: "args." + name,
			}
		}
		ints[name] = v
	}
	args := k.Defaults()
	for i, p := range k.Params {
		v, ok := ints[p.Name]
		if !ok {
			continue
		}
		if v < p.Min || v > p.Max {
			return nil, &apiError{
				Error: fmt.Sprintf("%s: %s = %d is out of range: allowed %d to %d", k.Name, p.Name, v, p.Min, p.Max),
				Field: "args." + p.Name,
			}
		}
		args[i] = v
	}
	if err := k.Check(args); err != nil { // the catalogue's own word, should it be stricter
		return nil, &apiError{Error: err.Error(), Field: "args"}
	}
	return args, nil
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
	args, aerr := kernelArgs(k, named)
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
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
}

// job checks a run request and turns it into a runner job, or says what is wrong.
func (s *Server) job(req runRequest) (runner.Job, *apiError) {
	k, aerr := lookupKernel(req.Kernel)
	if aerr != nil {
		return runner.Job{}, aerr
	}
	if !slices.Contains(s.engines, req.Engine) {
		what := "engine is missing"
		if req.Engine != "" {
			what = fmt.Sprintf("unknown engine %q", req.Engine)
		}
		return runner.Job{}, &apiError{
			Error: what + ": server engines are " + strings.Join(s.engines, ", ") +
				" (browser-wasm and browser-js run in the page)",
			Field: "engine",
		}
	}
	named := make(map[string]string, len(req.Args))
	for name, raw := range req.Args {
		named[name] = string(bytes.TrimSpace(raw))
	}
	args, aerr := kernelArgs(k, named)
	if aerr != nil {
		return runner.Job{}, aerr
	}
	runs, warmup := DefaultRuns, DefaultWarmup
	if req.Runs != nil {
		runs = *req.Runs
		if runs < 1 || runs > MaxRuns {
			return runner.Job{}, &apiError{Error: fmt.Sprintf("runs = %d is out of range: allowed 1 to %d", runs, MaxRuns), Field: "runs"}
		}
	}
	if req.Warmup != nil {
		warmup = *req.Warmup
		if warmup < 0 || warmup > MaxWarmup {
			return runner.Job{}, &apiError{Error: fmt.Sprintf("warmup = %d is out of range: allowed 0 to %d", warmup, MaxWarmup), Field: "warmup"}
		}
	}
	opts := measure.Options{Runs: runs, Warmup: warmup}
	if warmup == 0 {
		opts.Warmup = -1 // measure's zero means its default; the API's zero means none
	}
	return runner.Job{
		Engine:  req.Engine,
		Kernel:  k.Name,
		Args:    args,
		Options: opts,
		Timeout: s.opts.Timeout,
	}, nil
}

// decodeRunRequest reads a run request, naming the field of any JSON type error.
func decodeRunRequest(w http.ResponseWriter, r *http.Request) (runRequest, *apiError) {
	var req runRequest
	body := http.MaxBytesReader(w, r.Body, maxRequestBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(&req)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err == nil {
		return req, nil
	}
	const fields = "kernel (string), engine (string), args (object of integers), runs (integer), warmup (integer)"
	var typeErr *json.UnmarshalTypeError
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		return req, &apiError{Error: fmt.Sprintf("%s must be %s, not a JSON %s: the fields are %s", field, jsonType(field), typeErr.Value, fields), Field: field}
	case errors.As(err, &maxErr):
		return req, &apiError{Error: fmt.Sprintf("the request body is larger than %d bytes", maxRequestBody)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return req, &apiError{Error: fmt.Sprintf("unknown field %q: the fields are %s", name, fields), Field: name}
	}
	return req, &apiError{Error: "the body must be one JSON object with " + fields + ": " + err.Error()}
}

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
	Environment *environment `json:"environment,omitempty"`
	// Error says why the run could not be made, for "error".
	Error string `json:"error,omitempty"`
}

// stream writes NDJSON events, each flushed at once.
type stream struct {
	mu *sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (st stream) send(e event) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, err := st.w.Write(buf.Bytes()); err != nil {
		return // the client is gone; the request's context ends the run
	}
	_ = st.rc.Flush()
}

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	req, aerr := decodeRunRequest(w, r)
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
		return
	}
	job, aerr := s.job(req)
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
		return
	}
	t, err := s.queue.enter()
	if err != nil {
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, apiError{
			Error: fmt.Sprintf("the run queue is full (%d runs waiting for %d slots): try again later", s.queue.max, s.queue.slots),
		})
		return
	}

	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	st := stream{mu: new(sync.Mutex), w: w, rc: http.NewResponseController(w)}

	ctx := r.Context()
	if err := t.wait(ctx, func(pos int) { st.send(event{Type: "queued", Position: pos}) }); err != nil {
		return // the client left while waiting
	}
	defer t.release()
	st.send(event{Type: "started"})

	res, err := s.run(ctx, job, runner.Options{OnProgress: func(p runner.Progress) {
		st.send(event{Type: "progress", Phase: p.Phase, Done: &p.Done, Total: &p.Total})
	}})
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return
		}
		st.send(event{Type: "error", Error: err.Error()})
		return
	}
	env := s.env
	st.send(event{
		Type: "result", Result: &res,
		Value:       strconv.FormatInt(res.Value, 10),
		Expected:    strconv.FormatInt(res.Expected, 10),
		Environment: &env,
	})
}
