package results

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

// Where a run was measured.
const (
	// SourceCLI is a run of `wasmgap bench`.
	SourceCLI = "cli"
	// SourceServer is a cell the playground's server measured for the page.
	SourceServer = "server"
	// SourceBrowser is a set of cells a browser measured and shared: the browser's own
	// word, checked against the catalogue but not measured by the server.
	SourceBrowser = "browser"
)

// Run is one stored run: the report it produced and where it ran.
type Run struct {
	ID      int64     `json:"id"`
	Created time.Time `json:"created"`
	Source  string    `json:"source"`
	// Plan names the cells asked for (PlanKey); runs of the same plan compare cell by cell.
	Plan string `json:"plan"`
	// Machine names the machine (MachineKey): a hash, never the host name itself.
	Machine string `json:"machine"`
	// Wasmgap is the version of wasmgap that measured (Version).
	Wasmgap string `json:"wasmgap"`
	// Browser is what a browser told of itself; empty for server and CLI runs.
	Browser Browser       `json:"browser,omitzero"`
	Report  report.Report `json:"report"`
	// MachineName names the machine for people where a farm's agent measured the run
	// (its agent's name); MachineDesc is the agent's description of it, as JSON.
	MachineName string          `json:"machine_name,omitempty"`
	MachineDesc json.RawMessage `json:"machine_desc,omitempty"`

	// jobs name the farm job of each cell, in order (SaveJob, AppendJob).
	jobs []JobCell
}

// Browser is what a page may tell of the browser that measured its cells.
type Browser struct {
	Name                string  `json:"name,omitempty"`
	Version             string  `json:"version,omitempty"`
	UserAgent           string  `json:"user_agent,omitempty"`
	HardwareConcurrency int     `json:"hardware_concurrency,omitempty"`
	CrossOriginIsolated bool    `json:"cross_origin_isolated,omitempty"`
	TimerResolutionNS   float64 `json:"timer_resolution_ns,omitempty"`
}

// Version is this binary's version of wasmgap: its module version, else its commit
// ("+dirty" with local changes), else "devel".
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return rev[:min(12, len(rev))] + dirty
}

func hashKey(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:8])
}

// PlanKey names the cells a report asked for (each kernel with its arguments on each
// engine, in any order), so that two runs of the same plan find each other.
func PlanKey(rep report.Report) string {
	var cells []string
	for _, r := range rep.Results {
		cells = append(cells, r.Label()+" on "+r.Engine)
	}
	slices.Sort(cells)
	return hashKey(slices.Compact(cells)...)
}

// MachineKey names this machine: a hash of its host name, CPU, cores, OS and
// architecture.
func MachineKey(env report.Environment) string {
	host, _ := os.Hostname()
	return hashKey(host, env.CPU, strconv.Itoa(env.Cores), env.OS, env.Arch)
}

// NewRun describes a report measured here (by the CLI or the server), now.
func NewRun(source string, rep report.Report) Run {
	return Run{
		Created: time.Now().UTC(),
		Source:  source,
		Plan:    PlanKey(rep),
		Machine: MachineKey(rep.Environment),
		Wasmgap: Version(),
		Report:  rep,
	}
}

// argsKey renders a cell's arguments as stored: "40", "50000,1000".
func argsKey(args []int) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = strconv.Itoa(a)
	}
	return strings.Join(s, ",")
}

// engineVersion is the version of what ran a cell: its runtime when outside this
// binary, else the engine module's, else Go's; the browser's for browser cells.
func engineVersion(run Run, r measure.Result) string {
	switch {
	case r.Runtime != "":
		return r.Runtime
	case run.Source == SourceBrowser:
		return strings.TrimSpace(run.Browser.Name + " " + run.Browser.Version)
	case r.Engine == engine.Native:
		return run.Report.Environment.Go
	case strings.HasPrefix(r.Engine, "wazero"):
		return "wazero " + run.Report.Environment.Module("wazero")
	case r.Engine == "yaegi":
		return "yaegi " + run.Report.Environment.Module("yaegi")
	}
	return run.Report.Environment.Go
}

// Save stores a run with its cells in one transaction and returns its id.
func (s *Store) Save(ctx context.Context, run Run) (int64, error) {
	if len(run.Report.Results) == 0 {
		return 0, errors.New("save run: it has no cells")
	}
	if err := CheckCells(run.Report.Results); err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	if run.Created.IsZero() {
		run.Created = time.Now().UTC()
	}
	method, err := json.Marshal(run.Report.Method)
	if err != nil {
		return 0, err
	}
	env, err := json.Marshal(run.Report.Environment)
	if err != nil {
		return 0, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	defer tx.Rollback()
	if err := s.checkRoom(ctx, tx, run); err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	e, b := run.Report.Environment, run.Browser
	var id int64
	err = tx.QueryRowContext(ctx, s.d.q(`INSERT INTO runs (created_ns, source, plan, machine, wasmgap, go, cpu, cores, os, arch,
		browser, browser_version, user_agent, hardware_concurrency, cross_origin_isolated, timer_resolution_ns, method, environment,
		machine_name, machine_desc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		run.Created.UnixNano(), run.Source, run.Plan, run.Machine, run.Wasmgap, e.Go, e.CPU, e.Cores, e.OS, e.Arch,
		b.Name, b.Version, b.UserAgent, b.HardwareConcurrency, boolInt(b.CrossOriginIsolated), b.TimerResolutionNS,
		string(method), string(env), run.MachineName, string(run.MachineDesc)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	if err := s.insertCells(ctx, tx, id, run, 0); err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	return id, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ErrNotFound is the error of a run id the store does not hold.
var ErrNotFound = errors.New("no such run")

const runColumns = `r.id, r.created_ns, r.source, r.plan, r.machine, r.wasmgap, r.browser, r.browser_version, r.user_agent,
	r.hardware_concurrency, r.cross_origin_isolated, r.timer_resolution_ns, r.method, r.environment, r.machine_name, r.machine_desc`

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var run Run
	var created int64
	var isolated int
	var method, env, desc string
	err := sc.Scan(&run.ID, &created, &run.Source, &run.Plan, &run.Machine, &run.Wasmgap, &run.Browser.Name, &run.Browser.Version,
		&run.Browser.UserAgent, &run.Browser.HardwareConcurrency, &isolated, &run.Browser.TimerResolutionNS, &method, &env,
		&run.MachineName, &desc)
	if err != nil {
		return run, err
	}
	run.Created = time.Unix(0, created).UTC()
	run.Browser.CrossOriginIsolated = isolated != 0
	if desc != "" {
		run.MachineDesc = json.RawMessage(desc)
	}
	if err := json.Unmarshal([]byte(method), &run.Report.Method); err != nil {
		return run, fmt.Errorf("run %d: method: %w", run.ID, err)
	}
	if err := json.Unmarshal([]byte(env), &run.Report.Environment); err != nil {
		return run, fmt.Errorf("run %d: environment: %w", run.ID, err)
	}
	return run, nil
}

// Get returns a run with its cells and their samples.
func (s *Store) Get(ctx context.Context, id int64) (Run, error) {
	run, err := scanRun(s.db.QueryRowContext(ctx, s.d.q("SELECT "+runColumns+" FROM runs r WHERE r.id = ?"), id))
	if errors.Is(err, sql.ErrNoRows) {
		return run, fmt.Errorf("run %d: %w (`wasmgap results list` lists the stored runs)", id, ErrNotFound)
	}
	if err != nil {
		return run, err
	}
	rows, err := s.db.QueryContext(ctx, s.d.q("SELECT result FROM cells WHERE run_id = ? ORDER BY pos"), id)
	if err != nil {
		return run, err
	}
	defer rows.Close()
	for rows.Next() {
		var js string
		if err := rows.Scan(&js); err != nil {
			return run, err
		}
		var r measure.Result
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			return run, fmt.Errorf("run %d: cell: %w", id, err)
		}
		run.Report.Results = append(run.Report.Results, r)
	}
	return run, rows.Err()
}

// Last returns the last run of the plan on the machine from the source, or ErrNotFound.
func (s *Store) Last(ctx context.Context, source, plan, machine string) (Run, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, s.d.q("SELECT id FROM runs WHERE plan = ? AND machine = ? AND source = ? ORDER BY id DESC LIMIT 1"),
		plan, machine, source).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, ErrNotFound
	}
	if err != nil {
		return Run{}, err
	}
	return s.Get(ctx, id)
}

// Filter selects runs; its zero value selects every run.
type Filter struct {
	IDs     []int64
	Source  string
	Plan    string
	Machine string
	// Kernel, Args ("40", "50000,1000") and Engine select the runs with such a cell.
	Kernel, Args, Engine string
	// EngineVersion selects the runs with a cell whose engine had this version.
	EngineVersion string
	Browser       string
	OS            string
	Cores         int
	Wasmgap       string
	// Since and Until bound the runs' times (Until excluded).
	Since, Until time.Time
	// Limit bounds how many runs List returns, the newest first; 0 means 100.
	Limit int
}

// where renders the filter as SQL conditions on runs r, with their arguments.
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v ...any) { conds = append(conds, cond); args = append(args, v...) }
	if len(f.IDs) > 0 {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(f.IDs)), ", ")
		conds = append(conds, "r.id IN ("+marks+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	for _, c := range []struct{ col, v string }{
		{"r.source", f.Source}, {"r.plan", f.Plan}, {"r.machine", f.Machine}, {"r.browser", f.Browser},
		{"r.os", f.OS}, {"r.wasmgap", f.Wasmgap},
	} {
		if c.v != "" {
			add(c.col+" = ?", c.v)
		}
	}
	if f.Cores > 0 {
		add("r.cores = ?", f.Cores)
	}
	if !f.Since.IsZero() {
		add("r.created_ns >= ?", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add("r.created_ns < ?", f.Until.UnixNano())
	}
	var cell []string
	for _, c := range []struct{ col, v string }{{"c.kernel", f.Kernel}, {"c.args", f.Args}, {"c.engine", f.Engine}, {"c.engine_version", f.EngineVersion}} {
		if c.v != "" {
			cell = append(cell, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if len(cell) > 0 {
		conds = append(conds, "EXISTS (SELECT 1 FROM cells c WHERE c.run_id = r.id AND "+strings.Join(cell, " AND ")+")")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// Summary is one line of List: a run without its cells' samples.
type Summary struct {
	// Kind is "run", beside a warm-up study's StudySummary in `wasmgap results list
	// --format json`.
	Kind    string    `json:"kind"`
	ID      int64     `json:"id"`
	Created time.Time `json:"created"`
	Source  string    `json:"source"`
	Wasmgap string    `json:"wasmgap"`
	CPU     string    `json:"cpu"`
	Cores   int       `json:"cores"`
	OS      string    `json:"os"`
	Browser string    `json:"browser,omitempty"`
	// Partial says how a run stopped before its last cell (report.Method.Partial).
	Partial string `json:"partial,omitempty"`
	// MachineName names a farm's run's machine (Run.MachineName).
	MachineName string `json:"machine_name,omitempty"`
	// Cells lists the run's cells: "fib_rec(30) on native".
	Cells []string `json:"cells"`
}

// List returns the runs the filter selects, newest first.
func (s *Store) List(ctx context.Context, f Filter) ([]Summary, error) {
	where, args := f.where()
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT r.id, r.created_ns, r.source, r.wasmgap, r.cpu, r.cores, r.os, r.browser, r.browser_version, r.method, r.machine_name
		FROM runs r`+where+" ORDER BY r.id DESC LIMIT "+strconv.Itoa(limit)), args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var out []Summary
	for rows.Next() {
		sm := Summary{Kind: "run"}
		var created int64
		var bv, method string
		if err := rows.Scan(&sm.ID, &created, &sm.Source, &sm.Wasmgap, &sm.CPU, &sm.Cores, &sm.OS, &sm.Browser, &bv, &method, &sm.MachineName); err != nil {
			rows.Close()
			return nil, err
		}
		var m report.Method
		if json.Unmarshal([]byte(method), &m) == nil {
			sm.Partial = m.Partial
		}
		sm.Created = time.Unix(0, created).UTC()
		sm.Browser = strings.TrimSpace(sm.Browser + " " + bv)
		out = append(out, sm)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		cells, err := s.db.QueryContext(ctx, s.d.q("SELECT kernel, args, engine FROM cells WHERE run_id = ? ORDER BY pos"), out[i].ID)
		if err != nil {
			return nil, err
		}
		for cells.Next() {
			var k, a, e string
			if err := cells.Scan(&k, &a, &e); err != nil {
				cells.Close()
				return nil, err
			}
			out[i].Cells = append(out[i].Cells, k+"("+strings.ReplaceAll(a, ",", ", ")+") on "+e)
		}
		cells.Close()
	}
	return out, nil
}

// Delete removes the runs the filter selects, with their cells, and returns how many;
// the groups of cell_counts their cells were in are counted again.
// A filter that selects nothing (its zero value) is refused: say which runs.
func (s *Store) Delete(ctx context.Context, f Filter) (int, error) {
	where, args := f.where()
	if where == "" {
		return 0, errors.New("delete: no run selected: give run ids or a filter (to delete every run, remove the store's file)")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	sel := "SELECT r.id FROM runs r" + where
	groups, err := countGroups(ctx, tx, s.d.q("SELECT DISTINCT "+countColumns+" FROM cells WHERE failure = '' AND run_id IN ("+sel+")"), args)
	if err != nil {
		return 0, fmt.Errorf("delete: cell counts: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.d.q("DELETE FROM cells WHERE run_id IN ("+sel+")"), args...); err != nil {
		return 0, fmt.Errorf("delete cells: %w", err)
	}
	res, err := tx.ExecContext(ctx, s.d.q("DELETE FROM runs WHERE id IN ("+sel+")"), args...)
	if err != nil {
		return 0, fmt.Errorf("delete runs: %w", err)
	}
	n, _ := res.RowsAffected()
	key := " AND kernel = ? AND args = ? AND engine = ? AND source = ? AND browser = ? AND os = ? AND cores = ? AND engine_version = ? AND wasmgap = ?"
	for _, g := range groups {
		if _, err := tx.ExecContext(ctx, s.d.q("DELETE FROM cell_counts WHERE "+strings.TrimPrefix(key, " AND ")), g...); err != nil {
			return 0, fmt.Errorf("delete: cell counts: %w", err)
		}
		if _, err := tx.ExecContext(ctx, s.d.q("INSERT INTO cell_counts ("+countColumns+", n, first_ns) "+recount(key)), g...); err != nil {
			return 0, fmt.Errorf("delete: cell counts: %w", err)
		}
	}
	return int(n), tx.Commit()
}

// countGroups returns the groups of cell_counts (countColumns' values) query selects.
func countGroups(ctx context.Context, tx *sql.Tx, query string, args []any) ([][]any, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		var kernel, args, engine, source, browser, os, engineVersion, wasmgap string
		var cores int
		if err := rows.Scan(&kernel, &args, &engine, &source, &browser, &os, &cores, &engineVersion, &wasmgap); err != nil {
			return nil, err
		}
		out = append(out, []any{kernel, args, engine, source, browser, os, cores, engineVersion, wasmgap})
	}
	return out, rows.Err()
}

// NewBrowserRun describes cells a browser measured and shared, now: its machine is named
// by what it told of itself, and its environment holds only what a page may know.
func NewBrowserRun(b Browser, os string, rep report.Report) Run {
	rep.Environment = report.Environment{CPU: "unknown (a browser does not tell)", Cores: b.HardwareConcurrency, OS: os, Time: time.Now().UTC().Truncate(time.Second)}
	return Run{
		Created: time.Now().UTC(),
		Source:  SourceBrowser,
		Plan:    PlanKey(rep),
		Machine: hashKey(b.UserAgent, strconv.Itoa(b.HardwareConcurrency)),
		Wasmgap: Version(),
		Browser: b,
		Report:  rep,
	}
}
