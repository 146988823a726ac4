package farm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
)

// Mode says how a plan is shared among the agents.
type Mode string

const (
	// Each has every matching agent run the whole plan: a table per machine.
	Each Mode = "each"
	// Split shares the plan's cells among the agents of one kind: a table per kind,
	// finished sooner, never mixing kinds.
	Split Mode = "split"
)

// PlanConfig is a plan to run on a farm.
type PlanConfig struct {
	URL  string
	Auth Auth
	Mode Mode
	// Cells are the plan's cells (CellsOf); Engines the report's columns.
	Cells   []Cell
	Engines []string
	// Method is the report's method, as bench writes it.
	Method report.Method
	// Attempts bounds the deliveries of a job without a result; 0 is DefaultAttempts.
	Attempts int
	// AckWait is the ack deadline of the plan's jobs: a job whose agent went silent this
	// long goes to another agent. 0 is DefaultAckWait.
	AckWait time.Duration
	// Agents is how many agents to wait for (up to AgentWait) before publishing; 0 is 1.
	Agents    int
	AgentWait time.Duration
	// Store, if set, stores each result as it comes, once per job.
	Store *results.Store
	// Progress receives one line per result and per machine's news.
	Progress io.Writer
	// OnPublish, when set, is told the run's id and tables once its jobs are published;
	// OnResult, each result as it is taken. Both are called from RunPlan's goroutine.
	OnPublish func(run string, tables []*Table)
	OnResult  func(Update)
}

// Update is one result as the collector took it.
type Update struct {
	// Table is the table it belongs to; Agent measured it.
	Table *Table
	Agent string
	Cell  measure.Result
	// Done and Total count the run's jobs answered and published; Left is the time the
	// plan has left at the pace so far (0 before it is known).
	Done, Total int
	Left        time.Duration
}

// Table is one stored run of a farm plan: a machine's (Each) or a kind's (Split).
type Table struct {
	// Name names it for people: the agent, or the kind with its agents.
	Name    string
	Machine Machine
	// RunID is its id in the store (0 when nothing was stored).
	RunID  int64
	Report report.Report

	subject string
	kind    string // Split: the kind every result must come from; Each: ""
	agent   string // Each: the agent every result must come from
	cells   map[int]measure.Result
	took    []time.Duration
	began   time.Time
}

// listAgents lists the agents registered now.
func listAgents(ctx context.Context, c *conn) ([]AgentInfo, error) {
	keys, err := c.agents.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	var out []AgentInfo
	for _, k := range keys {
		e, err := c.agents.Get(ctx, k)
		if err != nil {
			continue // gone since the listing
		}
		var a AgentInfo
		if json.Unmarshal(e.Value(), &a) == nil && a.Name == k {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b AgentInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// MaxAgents bounds how many agents a plan waits for.
const MaxAgents = 1000

// CheckAgents refuses a count of agents to wait for outside 1 to MaxAgents.
func CheckAgents(n int) error {
	if n < 1 || n > MaxAgents {
		return fmt.Errorf("agents %d: allowed 1 to %d", n, MaxAgents)
	}
	return nil
}

// RunPlan publishes the plan's cells as jobs, collects their results, storing each once,
// and returns a table per machine (Each) or per kind (Split). When ctx ends first, the
// jobs not yet taken are withdrawn and the tables hold the cells done, marked partial.
func RunPlan(ctx context.Context, cfg PlanConfig) ([]*Table, error) {
	if len(cfg.Cells) == 0 {
		return nil, errors.New("farm: the plan has no cells")
	}
	if cfg.Mode != Each && cfg.Mode != Split {
		return nil, fmt.Errorf("farm: mode %q: use each or split", cfg.Mode)
	}
	attempts := cmp.Or(cfg.Attempts, DefaultAttempts)
	if attempts < 1 || attempts > 100 {
		return nil, fmt.Errorf("farm: attempts = %d: allowed 1 to 100", attempts)
	}
	if cfg.Agents != 0 {
		if err := CheckAgents(cfg.Agents); err != nil {
			return nil, fmt.Errorf("farm: %w", err)
		}
	}
	ackWait := cmp.Or(cfg.AckWait, DefaultAckWait)
	if err := CheckAckWait(ackWait); err != nil {
		return nil, fmt.Errorf("farm: %w", err)
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	c, err := connect(ctx, cfg.URL, cfg.Auth, "wasmgap bench --farm")
	if err != nil {
		return nil, err
	}
	defer c.close()
	if cfg.Auth == (Auth{}) {
		fmt.Fprintln(progress, "farm: no credentials given: a NATS server that admits anyone takes results from anyone (docs/FARM.md, Security)")
	}
	agents, err := waitAgents(ctx, c, max(cfg.Agents, 1), cmp.Or(cfg.AgentWait, time.Minute))
	if err != nil {
		return nil, fmt.Errorf("%w at %s: start `wasmgap agent --nats URL` on each machine", err, redact(cfg.URL))
	}
	run := newRunID()
	tables := targets(cfg.Mode, run, agents, cfg.Cells, progress)
	if len(tables) == 0 {
		return nil, errors.New("farm: no agent offers every engine of the plan")
	}
	// The collector's consumer first, so that no result waits for it.
	cons, err := c.js.CreateOrUpdateConsumer(ctx, ResultsStream, jetstream.ConsumerConfig{
		Durable: "run-" + run, FilterSubject: resultSubjectOf(run), AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second, MaxDeliver: -1,
	})
	if err != nil {
		return nil, fmt.Errorf("farm: results consumer: %w", err)
	}
	defer func() { _ = c.js.DeleteConsumer(context.Background(), ResultsStream, "run-"+run) }()

	jobs := map[string]jobRef{}
	for ti, t := range tables {
		if err := c.jobsConsumer(ctx, t, ackWait); err != nil {
			return nil, fmt.Errorf("farm: %w", err)
		}
		for ci, cell := range cfg.Cells {
			j := Job{ID: fmt.Sprintf("%s-%d-%d", run, ti, ci), Run: run, Cell: cell, Attempts: attempts}
			data, err := json.Marshal(j)
			if err != nil {
				return nil, err
			}
			if len(data) > MaxJobBytes {
				return nil, fmt.Errorf("farm: job %s is %d bytes, over the limit of %d", j.ID, len(data), MaxJobBytes)
			}
			if _, err := c.js.Publish(ctx, t.subject, data, jetstream.WithMsgID(j.ID)); err != nil {
				return nil, fmt.Errorf("farm: publish job %s: %w", j.ID, err)
			}
			jobs[j.ID] = jobRef{table: t, cell: ci}
		}
		t.began = time.Now()
	}
	where := fmt.Sprintf("run by each of %d agents", len(tables))
	if cfg.Mode == Split {
		where = fmt.Sprintf("shared among the agents of each of %d kinds of machine", len(tables))
		if len(tables) == 1 {
			where = "shared among the agents of one kind of machine"
		}
	}
	fmt.Fprintf(progress, "farm run %s: %d cells %s, %d jobs published\n", run, len(cfg.Cells), where, len(jobs))

	if cfg.OnPublish != nil {
		cfg.OnPublish(run, tables)
	}
	col := &collector{cfg: cfg, run: run, tables: tables, jobs: jobs, progress: progress, total: len(jobs)}
	for col.done < col.total && ctx.Err() == nil {
		batch, err := cons.Fetch(16, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return tables, fmt.Errorf("farm: fetch results: %w", err)
		}
		for msg := range batch.Messages() {
			col.take(ctx, msg)
		}
	}
	if ctx.Err() != nil {
		col.withdraw(c, tables)
	}
	for _, t := range tables {
		t.Report.Results = t.Report.Results[:0]
		for ci := range cfg.Cells {
			if r, ok := t.cells[ci]; ok {
				t.Report.Results = append(t.Report.Results, r)
			}
		}
	}
	return tables, nil
}

// waitAgents waits until n agents are registered, or for up to wait.
func waitAgents(ctx context.Context, c *conn, n int, wait time.Duration) ([]AgentInfo, error) {
	deadline := time.Now().Add(wait)
	for {
		agents, err := listAgents(ctx, c)
		if err != nil {
			return nil, err
		}
		if len(agents) >= n {
			return agents, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("farm: %d agents registered after %v, %d asked for", len(agents), wait, n)
		}
		sleep(ctx, 200*time.Millisecond)
	}
}

// targets are the plan's tables: one per agent that offers every engine of the plan
// (Each), or one per kind of such agents (Split).
func targets(mode Mode, run string, agents []AgentInfo, cells []Cell, progress io.Writer) []*Table {
	var engines []string
	for _, c := range cells {
		if !slices.Contains(engines, c.Engine) {
			engines = append(engines, c.Engine)
		}
	}
	var tables []*Table
	byKind := map[string]*Table{}
	for _, a := range agents {
		if lacks := slices.DeleteFunc(slices.Clone(engines), a.Machine.Offers); len(lacks) > 0 {
			fmt.Fprintf(progress, "agent %s left out: it does not offer %s\n", a.Name, strings.Join(lacks, ", "))
			continue
		}
		if mode == Each {
			tables = append(tables, &Table{Name: a.Name, Machine: a.Machine, agent: a.Name, subject: agentJobs(a.Name, run), cells: map[int]measure.Result{}})
			continue
		}
		t := byKind[a.Machine.Kind]
		if t == nil {
			t = &Table{Machine: a.Machine, kind: a.Machine.Kind, subject: kindJobs(a.Machine.Kind, run), cells: map[int]measure.Result{}}
			byKind[a.Machine.Kind] = t
			tables = append(tables, t)
		}
		t.Name += a.Name + ", "
	}
	for _, t := range tables {
		if t.kind != "" {
			t.Name = "kind " + t.kind[:8] + " (" + strings.TrimSuffix(t.Name, ", ") + ")"
		}
	}
	return tables
}

type jobRef struct {
	table *Table
	cell  int
}

// collector takes the results of one farm run.
type collector struct {
	cfg         PlanConfig
	run         string
	tables      []*Table
	jobs        map[string]jobRef
	progress    io.Writer
	done, total int
}

// take stores one result, once, and acknowledges it once stored (or refused).
func (col *collector) take(ctx context.Context, msg jetstream.Msg) {
	r, ref, err := col.check(msg.Data())
	if err != nil {
		fmt.Fprintf(col.progress, "farm: result refused: %v\n", err)
		_ = msg.Term()
		return
	}
	t := ref.table
	if _, dup := t.cells[ref.cell]; dup {
		_ = msg.Ack() // a second answer of a job already taken
		return
	}
	cell := col.cellOf(r, ref)
	if err := col.store(ctx, t, r, cell); err != nil && !errors.Is(err, results.ErrDuplicateJob) {
		fmt.Fprintf(col.progress, "farm: store the result of job %s: %v (it is kept in the stream and tried again)\n", r.Job, err)
		_ = msg.NakWithDelay(time.Second)
		return
	}
	if err := msg.Ack(); err != nil {
		fmt.Fprintf(col.progress, "farm: acknowledge the result of job %s: %v\n", r.Job, err)
	}
	t.cells[ref.cell] = cell
	t.took = append(t.took, time.Since(t.began))
	col.done++
	left := col.left()
	what := cell.Failure
	if !cell.Failed() {
		what = report.FormatNs(cell.Median) + " per call " + report.Spread(cell)
	}
	forecast := ""
	if left > 0 {
		forecast = fmt.Sprintf(", about %v left", left.Round(time.Second))
	}
	fmt.Fprintf(col.progress, "[%d/%d] %s: %s on %s: %s (agent %s)%s\n", col.done, col.total, t.Name, cell.Label(), cell.Engine, what, r.Agent, forecast)
	if col.cfg.OnResult != nil {
		col.cfg.OnResult(Update{Table: t, Agent: r.Agent, Cell: cell, Done: col.done, Total: col.total, Left: left})
	}
}

// Done is how many of the plan's cells the table holds.
func (t *Table) Done() int { return len(t.cells) }

// check decodes a result and checks that it answers a job of this run, from an agent
// the job was for, with the job's cell.
func (col *collector) check(data []byte) (Result, jobRef, error) {
	r, err := DecodeResult(data)
	if err != nil {
		return r, jobRef{}, err
	}
	ref, known := col.jobs[r.Job]
	if r.Run != col.run {
		return r, ref, fmt.Errorf("result of job %s names run %q, not this run %s", r.Job, r.Run, col.run)
	}
	if !known {
		return r, ref, fmt.Errorf("result of job %s, which this run did not publish", r.Job)
	}
	switch want := col.cfg.Cells[ref.cell]; {
	case ref.table.agent != "" && r.Agent != ref.table.agent:
		err = fmt.Errorf("result of job %s from agent %s, published for agent %s", r.Job, r.Agent, ref.table.agent)
	case ref.table.kind != "" && r.Machine.Kind != ref.table.kind:
		err = fmt.Errorf("result of job %s from agent %s of another kind of machine", r.Job, r.Agent)
	case r.Cell != nil && (r.Cell.Kernel != want.Kernel || r.Cell.Engine != want.Engine || !slices.Equal(r.Cell.Args, want.Args)):
		err = fmt.Errorf("result of job %s from agent %s holds %s on %s, not the job's %s", r.Job, r.Agent, r.Cell.Label(), r.Cell.Engine, want.Label())
	}
	return r, ref, err
}

// cellOf is the cell a result stores: the measurement, or the job's cell failed with the
// reason it was refused.
func (col *collector) cellOf(r Result, ref jobRef) measure.Result {
	if r.Cell != nil {
		return *r.Cell
	}
	c := col.cfg.Cells[ref.cell]
	return measure.Result{Kernel: c.Kernel, Args: c.Args, Engine: c.Engine, Failure: "refused by agent " + r.Agent + ": " + r.Refused}
}

// store stores the cell in the table's run, creating the run with its first cell.
func (col *collector) store(ctx context.Context, t *Table, r Result, cell measure.Result) error {
	env := r.Environment
	if t.Report.Environment.CPU != "" {
		env.Runtimes = t.Report.Environment.Runtimes
	}
	t.Report.Environment = env.WithRuntimes([]measure.Result{cell})
	if t.Report.Method.Runs == 0 {
		t.Report.Method, t.Report.Engines = col.cfg.Method, col.cfg.Engines
	}
	st := col.cfg.Store
	if st == nil {
		return nil
	}
	job := results.JobCell{Job: r.Job, Agent: r.Agent}
	if t.RunID != 0 {
		return st.AppendJob(ctx, t.RunID, cell, t.Report.Environment, job)
	}
	desc, err := json.Marshal(t.Machine)
	if err != nil {
		return err
	}
	rep := t.Report
	rep.Results = []measure.Result{cell}
	run := results.NewRun(results.SourceCLI, rep)
	run.Machine, run.MachineName, run.MachineDesc = t.Machine.Key, t.Name, desc
	if t.kind != "" {
		run.Machine = t.kind
	}
	id, err := st.SaveJob(ctx, run, job)
	if err == nil {
		t.RunID = id
	}
	return err
}

// left is how long the plan has left, from the pace of each table so far; 0 before any
// table has a result.
func (col *collector) left() time.Duration {
	var left time.Duration
	for _, t := range col.tables {
		n := len(t.took)
		if n == 0 {
			continue
		}
		pace := t.took[n-1] / time.Duration(n)
		left = max(left, pace*time.Duration(len(col.cfg.Cells)-len(t.cells)))
	}
	return left
}

// withdraw takes back the jobs not yet taken and marks the stored runs partial.
func (col *collector) withdraw(c *conn, tables []*Table) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if st, err := c.js.Stream(ctx, JobsStream); err == nil {
		for _, t := range tables {
			_ = st.Purge(ctx, jetstream.WithPurgeSubject(t.subject))
		}
	}
	for _, t := range tables {
		t.Report.Method.Partial = fmt.Sprintf("stopped after %d of %d cells", len(t.cells), len(col.cfg.Cells))
		if col.cfg.Store != nil && t.RunID != 0 {
			if err := col.cfg.Store.SetPartial(ctx, t.RunID, t.Report.Method.Partial); err != nil {
				fmt.Fprintf(col.progress, "farm: %v\n", err)
			}
		}
	}
}
