package playground

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/wasmgap/wasmgap/internal/farm"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// POST /api/farm sends a Run's plan to a bench farm's agents, as `wasmgap bench --farm
// URL --each|--split` does, when the server has a farm (Options.Farm): the plan checked
// as a run's (runner.Input.Plan), then a place in the same fair queue as the runs, held
// while the farm measures, so that one address cannot fill the farm. It streams NDJSON:
// "queued", "started", "published" (the run and its tables: one per agent with each, one
// per kind of machine with split), "log" (the farm's notes: an agent left out, a result
// refused), a "result" per cell with its table's progress and the forecast, then "done"
// with each table's stored run (the Results tab sets them side by side). A client that
// leaves withdraws the jobs no agent took and leaves the tables partial, as Ctrl-C on
// bench does.

// FarmOptions is the bench farm a server sends plans to: its NATS server and how to
// authenticate, as bench --farm takes them.
type FarmOptions struct {
	URL  string
	Auth farm.Auth
}

// farmRequest is the body of POST /api/farm.
type farmRequest struct {
	// Mode is "each" (every agent runs the plan) or "split" (the agents of one kind share it).
	Mode string `json:"mode"`
	// Kernels and Engines are the plan's rows and columns; no kernels is every kernel.
	Kernels []string `json:"kernels"`
	Engines []string `json:"engines"`
	// Args are integers named as bench's --arg: "n" for every kernel with an n,
	// "fib_rec.n" for one.
	Args   map[string]json.RawMessage `json:"args"`
	Runs   *int                       `json:"runs"`
	Warmup *int                       `json:"warmup"`
	// MinSampleMS, WarmupMS and TimeoutMS are as a run request's.
	MinSampleMS *int `json:"min_sample_ms"`
	WarmupMS    *int `json:"warmup_ms"`
	TimeoutMS   *int `json:"timeout_ms"`
	// Agents is how many agents to wait for (up to a minute) before publishing; absent for 1.
	Agents *int `json:"agents"`
}

// farmFields are the fields of a farm request.
const farmFields = "mode (\"each\" or \"split\"), kernels (array of strings), engines (array of strings), args (object of integers), runs (integer), warmup (integer), min_sample_ms (integer), warmup_ms (integer), timeout_ms (integer), agents (integer)"

// farmTable is one table of a farm run as the stream describes it.
type farmTable struct {
	// Name is the agent's (each) or the kind's with its agents (split).
	Name    string `json:"name"`
	Machine string `json:"machine"`
	// Done of Cells are in.
	Done  int `json:"done"`
	Cells int `json:"cells"`
	// Run is its id in the store, once its first cell is stored.
	Run int64 `json:"run,omitempty"`
	// Partial says why it stopped short.
	Partial string `json:"partial,omitempty"`
}

// farmEvent is one line of the stream of POST /api/farm.
type farmEvent struct {
	// Type is "queued", "started", "published", "log", "result", "done" or "error".
	Type     string `json:"type"`
	Position int    `json:"position,omitempty"`
	// FarmRun is the farm run's id, for "published".
	FarmRun string `json:"farm_run,omitempty"`
	// Tables are the run's tables, for "published" and "done".
	Tables []farmTable `json:"tables,omitempty"`
	// Table is the table of a "result", with its progress; Agent measured it.
	Table  *farmTable      `json:"table,omitempty"`
	Agent  string          `json:"agent,omitempty"`
	Result *measure.Result `json:"result,omitempty"`
	// Done of Total jobs are answered; LeftNS is the forecast of the time left (0 unknown).
	Done   int   `json:"done,omitempty"`
	Total  int   `json:"total,omitempty"`
	LeftNS int64 `json:"left_ns,omitempty"`
	// Text is a "log" line.
	Text  string `json:"text,omitempty"`
	Error string `json:"error,omitempty"`
}

// errNoFarm answers POST /api/farm on a server without a farm.
var errNoFarm = apiError{Error: "this server has no bench farm: start it with wasmgap serve --farm nats://host:port and the farm's credentials (docs/FARM.md)"}

func (s *Server) handleFarm(w http.ResponseWriter, r *http.Request) {
	if s.opts.Farm == nil {
		writeError(w, http.StatusNotFound, errNoFarm)
		return
	}
	var req farmRequest
	if aerr := (jsonBody{route: "POST /api/farm", max: maxRequestBody, fields: farmFields, typeOf: farmType}).decode(w, r, &req); aerr != nil {
		writeError(w, cmp.Or(aerr.status, http.StatusBadRequest), *aerr)
		return
	}
	cfg, aerr := s.farmPlan(req)
	if aerr != nil {
		writeError(w, http.StatusBadRequest, *aerr)
		return
	}
	serveQueued(s, w, r, func(typ string, pos int, msg string) farmEvent {
		return farmEvent{Type: typ, Position: pos, Error: msg}
	}, func(ctx context.Context, send func(farmEvent)) error {
		cfg.Progress = &lineWriter{line: func(text string) { send(farmEvent{Type: "log", Text: text}) }}
		cfg.OnPublish = func(run string, tables []*farm.Table) {
			send(farmEvent{Type: "published", FarmRun: run, Tables: farmTables(tables, len(cfg.Cells)), Total: len(tables) * len(cfg.Cells)})
		}
		cfg.OnResult = func(u farm.Update) {
			t := farmTables([]*farm.Table{u.Table}, len(cfg.Cells))[0]
			send(farmEvent{Type: "result", Table: &t, Agent: u.Agent, Result: &u.Cell, Done: u.Done, Total: u.Total, LeftNS: int64(u.Left)})
		}
		tables, err := farm.RunPlan(ctx, cfg)
		if len(tables) > 0 {
			send(farmEvent{Type: "done", Tables: farmTables(tables, len(cfg.Cells))})
		}
		if err == nil && ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return err
	})
}

// farmPlan checks a farm request as a run's (runner.Input.Plan, Plan.Jobs) and makes the
// farm's plan of it, or says what is wrong.
func (s *Server) farmPlan(req farmRequest) (farm.PlanConfig, *apiError) {
	mode := farm.Mode(req.Mode)
	if mode != farm.Each && mode != farm.Split {
		return farm.PlanConfig{}, &apiError{Error: fmt.Sprintf("mode %q: use \"each\" (every agent runs the plan, a table per machine) or \"split\" (the agents of one kind share it)", req.Mode), Field: "mode"}
	}
	if len(req.Engines) == 0 {
		return farm.PlanConfig{}, &apiError{Error: "engines is missing: name the plan's engines, each offered by the farm's agents (e.g. [\"native\", \"wazero-compiler\"])", Field: "engines"}
	}
	agents := 1
	if req.Agents != nil {
		agents = *req.Agents
	}
	if err := farm.CheckAgents(agents); err != nil {
		return farm.PlanConfig{}, &apiError{Error: err.Error(), Field: "agents"}
	}
	in := s.input(req.Args, req.Runs, req.Warmup, req.MinSampleMS, req.WarmupMS, req.TimeoutMS)
	in.Engines, in.Kernels = req.Engines, req.Kernels
	plan, err := in.Plan()
	var jobs []runner.Job
	if err == nil {
		jobs, err = plan.Jobs()
	}
	if err != nil {
		return farm.PlanConfig{}, fieldAPIError(err)
	}
	cells, err := farm.CellsOf(jobs)
	if err != nil {
		return farm.PlanConfig{}, &apiError{Error: err.Error(), Field: "kernels"}
	}
	o := plan.Options
	return farm.PlanConfig{
		URL: s.opts.Farm.URL, Auth: s.opts.Farm.Auth, Mode: mode, Cells: cells, Engines: req.Engines, Agents: agents, Store: s.opts.Results,
		Method: report.Method{
			Runs: o.Runs, Warmup: o.Warmup, Executions: cmp.Or(plan.Executions, runner.DefaultExecutions), WarmupTime: o.WarmupTarget(), MinSample: o.SampleTarget(), Cold: o.Cold,
			Timeout: cmp.Or(plan.Timeout, runner.DefaultTimeout), Timing: report.DefaultTiming,
		},
	}, nil
}

// farmType is what a farm request's field must be.
func farmType(field string) string {
	switch field {
	case "mode":
		return "a string"
	case "kernels", "engines":
		return "an array of strings"
	case "args":
		return "an object of integers"
	default:
		return "an integer"
	}
}

// farmTables describes the tables of a farm run of cells cells each.
func farmTables(tables []*farm.Table, cells int) []farmTable {
	out := make([]farmTable, len(tables))
	for i, t := range tables {
		out[i] = farmTable{Name: t.Name, Machine: t.Machine.Summary(), Done: t.Done(), Cells: cells, Run: t.RunID, Partial: t.Report.Method.Partial}
	}
	return out
}

// lineWriter hands each whole line written to it to line, without its newline.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	line func(string)
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.line(strings.TrimSpace(string(l.buf[:i])))
		l.buf = l.buf[i+1:]
	}
}
