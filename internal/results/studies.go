package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/warmup"
)

// StudySummary is one line of ListStudies: a stored warm-up study without its series.
type StudySummary struct {
	// Kind is "study", beside a run's Summary in `wasmgap results list --format json`.
	Kind    string    `json:"kind"`
	ID      int64     `json:"id"`
	Created time.Time `json:"created"`
	Source  string    `json:"source"`
	Wasmgap string    `json:"wasmgap"`
	// Label is the kernel with its arguments: "fib_rec(20)".
	Label   string   `json:"label"`
	Kernel  string   `json:"kernel"`
	Args    string   `json:"args"`
	Engines []string `json:"engines"`
	// Executions is the executions per engine the study asked for.
	Executions int `json:"executions"`
	// Status is "complete", or how many of the executions failed ("2 of 10 executions
	// failed").
	Status string `json:"status"`
}

// studyFilterless names the run filters a study has no column for: a filter that sets
// one selects no study.
func (f Filter) studyFilterless() bool {
	return f.Browser != "" || f.OS != "" || f.Cores > 0 || f.EngineVersion != "" || f.Plan != "" || f.Machine != ""
}

// studyWhere is Filter.where for warm-up studies: ids, source, wasmgap, kernel, args, an
// engine among the study's, and the time stored.
func (f Filter) studyWhere() (string, []any) {
	var conds []string
	var args []any
	if len(f.IDs) > 0 {
		conds = append(conds, "id IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(f.IDs)), ", ")+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	for _, c := range []struct{ col, v string }{{"source", f.Source}, {"wasmgap", f.Wasmgap}, {"kernel", f.Kernel}, {"args", f.Args}} {
		if c.v != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if f.Engine != "" {
		// engines is a comma-separated list: match a whole name, its % and _ taken
		// literally.
		conds = append(conds, `(',' || engines || ',') LIKE ? ESCAPE '\'`)
		args = append(args, "%,"+likeEscaper.Replace(f.Engine)+",%")
	}
	if !f.Since.IsZero() {
		conds = append(conds, "created_ns >= ?")
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, "created_ns < ?")
		args = append(args, f.Until.UnixNano())
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// ListStudies returns the warm-up studies the filter selects, newest first. A filter on
// what a study does not record (browser, OS, cores, engine version) selects none.
func (s *Store) ListStudies(ctx context.Context, f Filter) ([]StudySummary, error) {
	if f.studyFilterless() {
		return nil, nil
	}
	where, args := f.studyWhere()
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.QueryContext(ctx, s.d.q("SELECT id, created_ns, source, wasmgap, kernel, args, engines, study FROM warmup_studies"+
		where+" ORDER BY id DESC LIMIT "+strconv.Itoa(limit)), args...)
	if err != nil {
		return nil, fmt.Errorf("list warm-up studies: %w", err)
	}
	defer rows.Close()
	var out []StudySummary
	for rows.Next() {
		sm := StudySummary{Kind: "study"}
		var created int64
		var engines, js string
		if err := rows.Scan(&sm.ID, &created, &sm.Source, &sm.Wasmgap, &sm.Kernel, &sm.Args, &engines, &js); err != nil {
			return nil, fmt.Errorf("list warm-up studies: %w", err)
		}
		sm.Created = time.Unix(0, created).UTC()
		sm.Engines = strings.Split(engines, ",")
		var rep warmup.Report
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			sm.Label, sm.Status = sm.Kernel+"("+sm.Args+")", "unreadable: "+err.Error()
		} else {
			sm.Label, sm.Executions, sm.Status = rep.Label, rep.Method.Executions, studyStatus(rep)
		}
		out = append(out, sm)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list warm-up studies: %w", err)
	}
	return out, nil
}

// studyStatus says whether every execution of a study gave a series: "complete", or how
// many failed.
func studyStatus(rep warmup.Report) string {
	runs, failed := 0, 0
	for _, e := range rep.Engines {
		for _, r := range e.Runs {
			runs++
			if r.Failure != "" {
				failed++
			}
		}
	}
	if failed == 0 {
		return "complete"
	}
	return fmt.Sprintf("%d of %d executions failed", failed, runs)
}

// DeleteStudies removes the warm-up studies with the given ids and returns how many. An
// id the store does not hold is an error that is ErrStudyNotFound and names the studies
// it holds; then nothing is removed.
func (s *Store) DeleteStudies(ctx context.Context, ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, errors.New("delete warm-up studies: no study selected: give study ids")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("delete warm-up studies: %w", err)
	}
	defer tx.Rollback()
	n := 0
	for _, id := range ids {
		res, err := tx.ExecContext(ctx, s.d.q("DELETE FROM warmup_studies WHERE id = ?"), id)
		if err != nil {
			return 0, fmt.Errorf("delete warm-up study %d: %w", id, err)
		}
		if k, _ := res.RowsAffected(); k == 0 {
			// The hint reads the store: after the transaction, which may hold its one
			// connection.
			tx.Rollback()
			return 0, fmt.Errorf("delete warm-up study %d: %w (%s); nothing was deleted", id, ErrStudyNotFound, s.StudyHint(ctx))
		}
		n++
	}
	return n, tx.Commit()
}

// StudyHint says which warm-up studies the store holds, for an error about an id it does
// not: "the store holds studies 7, 5, 4 and 9 more" or "the store holds no warm-up study".
func (s *Store) StudyHint(ctx context.Context) string {
	const shown = 5
	var total int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM warmup_studies").Scan(&total); err != nil {
		return "the studies held could not be read: " + err.Error()
	}
	if total == 0 {
		return "the store holds no warm-up study"
	}
	list, err := s.ListStudies(ctx, Filter{Limit: shown})
	if err != nil {
		return "the studies held could not be read: " + err.Error()
	}
	ids := make([]string, len(list))
	for i, st := range list {
		ids[i] = strconv.FormatInt(st.ID, 10)
	}
	held := "the store holds studies " + strings.Join(ids, ", ")
	if total > shown {
		held += fmt.Sprintf(" and %d older (wasmgap results list --kind studies)", total-shown)
	}
	return held
}

// likeEscaper escapes LIKE's wildcards (and its escape character) in a literal.
var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)
