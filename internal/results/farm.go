package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

// JobCell names the farm job a stored cell answers and the agent that measured it.
type JobCell struct {
	Job   string `json:"job"`
	Agent string `json:"agent"`
}

// ErrDuplicateJob is the error of a cell whose farm job has a stored result already:
// a job's result is stored once, however often it was delivered.
var ErrDuplicateJob = errors.New("the job's result is stored already")

// jobID is the job's id as stored: NULL for a cell that answers no job.
func (j JobCell) jobID() any {
	if j.Job == "" {
		return nil
	}
	return j.Job
}

// duplicate words a refused insert of the job's cell: ErrDuplicateJob when the unique
// key on job_id refused it (SQLite's "UNIQUE constraint failed", PostgreSQL's 23505).
func (j JobCell) duplicate(err error) error {
	if j.Job != "" && (strings.Contains(err.Error(), "UNIQUE constraint failed: cells.job_id") || strings.Contains(err.Error(), "cells_job_id")) {
		return fmt.Errorf("job %s: %w", j.Job, ErrDuplicateJob)
	}
	return err
}

// checkJob returns ErrDuplicateJob when job has a stored cell. The unique key is the
// guarantee; this check words the common case before a transaction begins.
func (s *Store) checkJob(ctx context.Context, job JobCell) error {
	if job.Job == "" {
		return errors.New("store a job's cell: no job id")
	}
	var run int64
	err := s.db.QueryRowContext(ctx, s.d.q("SELECT run_id FROM cells WHERE job_id = ?"), job.Job).Scan(&run)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("job %s: %w", job.Job, err)
	}
	return fmt.Errorf("job %s (run %d): %w", job.Job, run, ErrDuplicateJob)
}

// SaveJob stores a new run whose one cell answers a farm job, or returns
// ErrDuplicateJob when that job's result is stored already.
func (s *Store) SaveJob(ctx context.Context, run Run, job JobCell) (int64, error) {
	if len(run.Report.Results) != 1 {
		return 0, fmt.Errorf("save job %s: %d cells, a job has one", job.Job, len(run.Report.Results))
	}
	if err := s.checkJob(ctx, job); err != nil {
		return 0, err
	}
	run.jobs = []JobCell{job}
	return s.Save(ctx, run)
}

// AppendJob adds the cell that answers a farm job to the stored run id (as Append), or
// returns ErrDuplicateJob when that job's result is stored already.
func (s *Store) AppendJob(ctx context.Context, id int64, cell measure.Result, env report.Environment, job JobCell) error {
	if err := s.checkJob(ctx, job); err != nil {
		return err
	}
	return s.appendCells(ctx, id, []measure.Result{cell}, env, []JobCell{job})
}

// Jobs returns the farm job and agent of each cell of the stored run, in the cells'
// order (empty ones for cells that answer no job).
func (s *Store) Jobs(ctx context.Context, id int64) ([]JobCell, error) {
	rows, err := s.db.QueryContext(ctx, s.d.q("SELECT COALESCE(job_id, ''), agent FROM cells WHERE run_id = ? ORDER BY pos"), id)
	if err != nil {
		return nil, fmt.Errorf("jobs of run %d: %w", id, err)
	}
	defer rows.Close()
	var out []JobCell
	for rows.Next() {
		var j JobCell
		if err := rows.Scan(&j.Job, &j.Agent); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// SetPartial marks the stored run id as stopped before its last cell
// (report.Method.Partial), as a farm run's is when it is interrupted after its first
// cells were stored.
func (s *Store) SetPartial(ctx context.Context, id int64, partial string) error {
	var method string
	if err := s.db.QueryRowContext(ctx, s.d.q("SELECT method FROM runs WHERE id = ?"), id).Scan(&method); err != nil {
		return fmt.Errorf("mark run %d partial: %w", id, err)
	}
	var m report.Method
	if err := json.Unmarshal([]byte(method), &m); err != nil {
		return fmt.Errorf("mark run %d partial: %w", id, err)
	}
	m.Partial = partial
	js, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, s.d.q("UPDATE runs SET method = ? WHERE id = ?"), string(js), id); err != nil {
		return fmt.Errorf("mark run %d partial: %w", id, err)
	}
	return nil
}

// MachineTitle names the run's machine in a column beside others: its agent's name (a
// farm's run), else the run itself ("run 12").
func (r Run) MachineTitle() string {
	if r.MachineName != "" {
		return r.MachineName
	}
	return fmt.Sprintf("run %d", r.ID)
}
