package playground

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// The stored runs' routes:
//
//	GET  /api/results?kernel=K&args=30[&browser=…&os=…&cores=…&engine_version=…&wasmgap=…&source=…][&trend=ENGINE]
//	                            each engine's distribution of medians across stored runs, ENGINE's trend
//	GET  /api/results/{id}      one stored run (its report, as `wasmgap results export` writes it, inside)
//	GET  /api/results/compare?old=ID&new=ID   two stored runs compared, as `wasmgap results compare --format json`
//	GET  /api/results/machines?ids=ID,ID…     runs of one plan on several machines side by side, as `wasmgap results machines`
//	POST /api/results/share     a browser's cells, opt-in (share.go)

func (s *Server) mountResults(mux *http.ServeMux) {
	if s.opts.Results == nil {
		return
	}
	mux.HandleFunc("GET /api/results", s.handleDistribution)
	mux.HandleFunc("GET /api/results/compare", s.handleResultsCompare)
	mux.HandleFunc("GET /api/results/machines", s.handleResultsMachines)
	mux.HandleFunc("GET /api/results/{id}", s.handleResult)
	mux.Handle("POST /api/results/share", s.shareHandler())
}

// saveServerCell stores one cell the server measured for the page, and returns its run's
// id (0 when it is not stored: no store, a user's kernel, or a failed save, logged).
func (s *Server) saveServerCell(job runner.Job, res measure.Result, env report.Environment) int64 {
	if s.opts.Results == nil || job.Custom() != nil {
		return 0
	}
	o := job.Options()
	env.Time = time.Now().UTC().Truncate(time.Second)
	rep := report.Report{
		Method:      report.Method{Runs: o.Runs, Warmup: o.Warmup, Executions: job.Executions(), WarmupTime: o.WarmupTime, MinSample: o.MinSample, Cold: o.Cold, Timeout: job.Timeout(), Timing: report.DefaultTiming},
		Environment: env,
		Results:     []measure.Result{res},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := s.opts.Results.Save(ctx, results.NewRun(results.SourceServer, rep))
	if err != nil {
		log.Printf("playground: store a run: %v", err)
		return 0
	}
	return id
}

func (s *Server) handleDistribution(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	k, aerr := lookupKernel(q.Get("kernel"))
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
		return
	}
	f := results.Filter{
		Kernel: k.Name, Args: q.Get("args"), Browser: q.Get("browser"), OS: q.Get("os"),
		EngineVersion: q.Get("engine_version"), Wasmgap: q.Get("wasmgap"), Source: q.Get("source"), Engine: q.Get("engine"),
	}
	if f.Args == "" {
		f.Args = argsText(k.Defaults())
	}
	if c := q.Get("cores"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, apiError{Error: "cores must be a positive integer: " + c + " is not one", Field: "cores"})
			return
		}
		f.Cores = n
	}
	d, err := s.opts.Results.Distribution(r.Context(), f, q.Get("trend"))
	if err != nil {
		writeError(w, http.StatusInternalServerError, apiError{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func argsText(args []int) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = strconv.Itoa(a)
	}
	return strings.Join(s, ",")
}

// getRun reads the run a query parameter or path value names, or answers the error.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request, field, value string) (results.Run, bool) {
	id, err := strconv.ParseInt(value, 10, 64)
	if err != nil || id < 1 {
		writeError(w, http.StatusBadRequest, apiError{Error: field + " must be a run id (a positive integer): " + strconv.Quote(value) + " is not one", Field: field})
		return results.Run{}, false
	}
	run, err := s.opts.Results.Get(r.Context(), id)
	if errors.Is(err, results.ErrNotFound) {
		writeError(w, http.StatusNotFound, apiError{Error: "no stored run " + value, Field: field})
		return run, false
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, apiError{Error: err.Error()})
		return run, false
	}
	return run, true
}

func (s *Server) handleResult(w http.ResponseWriter, r *http.Request) {
	if run, ok := s.getRun(w, r, "id", r.PathValue("id")); ok {
		writeJSON(w, http.StatusOK, run)
	}
}

// comparedRuns is the answer of GET /api/results/compare.
type comparedRuns struct {
	Old        results.Run       `json:"old"`
	New        results.Run       `json:"new"`
	Comparison report.Comparison `json:"comparison"`
}

func (s *Server) handleResultsCompare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	old, ok := s.getRun(w, r, "old", q.Get("old"))
	if !ok {
		return
	}
	new, ok := s.getRun(w, r, "new", q.Get("new"))
	if !ok {
		return
	}
	c, err := report.Compare(old.Report, new.Report)
	if err != nil {
		writeError(w, http.StatusBadRequest, apiError{Error: err.Error()})
		return
	}
	// The samples are in each run's own route; the comparison needs none of them.
	for _, run := range []*results.Run{&old, &new} {
		for i := range run.Report.Results {
			run.Report.Results[i].Samples = nil
		}
	}
	writeJSON(w, http.StatusOK, comparedRuns{Old: old, New: new, Comparison: c})
}

// maxMachines bounds the runs GET /api/results/machines sets side by side.
const maxMachines = 20

// machinesView is the answer of GET /api/results/machines: the table `wasmgap results
// machines` prints, with the runs it sets side by side.
type machinesView struct {
	Runs   []machineRun `json:"runs"`
	Header []string     `json:"header"`
	Rows   [][]string   `json:"rows"`
}

type machineRun struct {
	ID      int64     `json:"id"`
	Machine string    `json:"machine"`
	CPU     string    `json:"cpu"`
	Cores   int       `json:"cores"`
	Created time.Time `json:"created"`
}

func (s *Server) handleResultsMachines(w http.ResponseWriter, r *http.Request) {
	ids := strings.Split(r.URL.Query().Get("ids"), ",")
	if len(ids) < 2 || len(ids) > maxMachines {
		writeError(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("ids must name 2 to %d runs, separated by commas (%d given)", maxMachines, len(ids)), Field: "ids"})
		return
	}
	var v machinesView
	var names []string
	var reps []report.Report
	for _, id := range ids {
		run, ok := s.getRun(w, r, "ids", id)
		if !ok {
			return
		}
		e := run.Report.Environment
		v.Runs = append(v.Runs, machineRun{ID: run.ID, Machine: run.MachineTitle(), CPU: e.CPU, Cores: e.Cores, Created: run.Created})
		names, reps = append(names, run.MachineTitle()), append(reps, run.Report)
	}
	v.Header, v.Rows = report.MachineTable(names, reps)
	writeJSON(w, http.StatusOK, v)
}
