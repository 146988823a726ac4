package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

// insertCells stores run's cells under the stored run id, the first at position from,
// with their counts (cell_counts) and facets, inside tx.
func (s *Store) insertCells(ctx context.Context, tx *sql.Tx, id int64, run Run, from int) error {
	stmt, err := tx.PrepareContext(ctx, s.d.q(`INSERT INTO cells (run_id, pos, kernel, args, engine, engine_version, median_ns, failure, result,
		created_ns, source, browser, browser_version, os, cores, wasmgap, job_id, agent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return err
	}
	defer stmt.Close()
	count, err := tx.PrepareContext(ctx, s.d.q(countCell))
	if err != nil {
		return err
	}
	defer count.Close()
	e, b := run.Report.Environment, run.Browser
	facets := [][2]string{{"browser", b.Name}, {"os", e.OS}, {"cores", strconv.Itoa(e.Cores)}, {"wasmgap", run.Wasmgap}}
	for i, r := range run.Report.Results {
		js, err := json.Marshal(r)
		if err != nil {
			return err
		}
		ev := engineVersion(run, r)
		var job JobCell
		if i < len(run.jobs) {
			job = run.jobs[i]
		}
		if _, err := stmt.ExecContext(ctx, id, from+i, r.Kernel, argsKey(r.Args), r.Engine, ev, r.Median, r.Failure, string(js),
			run.Created.UnixNano(), run.Source, b.Name, b.Version, e.OS, e.Cores, run.Wasmgap, job.jobID(), job.Agent); err != nil {
			return fmt.Errorf("cell %d: %w", from+i+1, job.duplicate(err))
		}
		if r.Failure == "" {
			if _, err := count.ExecContext(ctx, r.Kernel, argsKey(r.Args), r.Engine, run.Source, b.Name, e.OS, e.Cores, ev, run.Wasmgap, run.Created.UnixNano()); err != nil {
				return fmt.Errorf("cell %d: count: %w", from+i+1, err)
			}
		}
		facets = append(facets, [2]string{"engine_version", ev})
	}
	for _, f := range facets {
		if f[1] == "" || f[1] == "0" {
			continue
		}
		if _, err := tx.ExecContext(ctx, s.d.q("INSERT INTO facets (kind, value) VALUES (?, ?) ON CONFLICT DO NOTHING"), f[0], f[1]); err != nil {
			return fmt.Errorf("facets: %w", err)
		}
	}
	return nil
}

// Append adds cells to the stored run id: one run made of several measurements, as the
// playground's page makes one cell at a time, so that the run compares with another
// cell by cell. The run keeps its time, source and machine; its plan becomes that of all
// its cells, and env, when it is not the zero value, replaces its environment (the
// runtimes of the new cells' engines added to it, as the caller's environment holds
// them).
func (s *Store) Append(ctx context.Context, id int64, cells []measure.Result, env report.Environment) error {
	return s.appendCells(ctx, id, cells, env, nil)
}

func (s *Store) appendCells(ctx context.Context, id int64, cells []measure.Result, env report.Environment, jobs []JobCell) error {
	if len(cells) == 0 {
		return fmt.Errorf("append to run %d: no cells", id)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("append to run %d: %w", id, err)
	}
	defer tx.Rollback()
	run, err := scanRun(tx.QueryRowContext(ctx, s.d.q("SELECT "+runColumns+" FROM runs r WHERE r.id = ?"), id))
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("append to run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("append to run %d: %w", id, err)
	}
	rows, err := tx.QueryContext(ctx, s.d.q("SELECT result FROM cells WHERE run_id = ? ORDER BY pos"), id)
	if err != nil {
		return fmt.Errorf("append to run %d: %w", id, err)
	}
	var all []measure.Result
	for rows.Next() {
		var js string
		var r measure.Result
		if err := rows.Scan(&js); err != nil {
			rows.Close()
			return fmt.Errorf("append to run %d: %w", id, err)
		}
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			rows.Close()
			return fmt.Errorf("append to run %d: cell: %w", id, err)
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("append to run %d: %w", id, err)
	}
	from := len(all)
	all = append(all, cells...)
	if env.CPU != "" || env.Go != "" {
		run.Report.Environment = env
	}
	envJSON, err := json.Marshal(run.Report.Environment)
	if err != nil {
		return err
	}
	plan := PlanKey(report.Report{Results: all})
	if _, err := tx.ExecContext(ctx, s.d.q("UPDATE runs SET plan = ?, environment = ? WHERE id = ?"), plan, string(envJSON), id); err != nil {
		return fmt.Errorf("append to run %d: %w", id, err)
	}
	run.Report.Results, run.jobs = cells, jobs
	if err := s.insertCells(ctx, tx, id, run, from); err != nil {
		return fmt.Errorf("append to run %d: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("append to run %d: %w", id, err)
	}
	return nil
}
