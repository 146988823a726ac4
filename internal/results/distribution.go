package results

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxPoints bounds the points per engine a Distribution carries (the newest runs'); its
// quantiles are over every matching run.
const MaxPoints = 1000

// Point is one run's median for one engine.
type Point struct {
	Run      int64     `json:"run"`
	MedianNS float64   `json:"median_ns"`
	Created  time.Time `json:"created"`
	Source   string    `json:"source"`
	Browser  string    `json:"browser,omitempty"`
	Wasmgap  string    `json:"wasmgap"`
}

// TrendPoint is one engine's median of medians over the runs of one wasmgap version.
type TrendPoint struct {
	Wasmgap string `json:"wasmgap"`
	// First is when this version's first run was stored: the trend's order.
	First    time.Time `json:"first"`
	Runs     int       `json:"runs"`
	MedianNS float64   `json:"median_ns"`
}

// EngineDistribution is one engine's medians across the stored runs.
type EngineDistribution struct {
	Engine string `json:"engine"`
	Runs   int    `json:"runs"`
	// Quantiles are the min, lower quartile, median, upper quartile and max of the runs'
	// medians, in nanoseconds per call.
	Quantiles [5]float64   `json:"quantiles_ns"`
	Points    []Point      `json:"points"`
	Trend     []TrendPoint `json:"trend"`
}

// Facets are the values each filter can take for the kernel, whatever the filters.
type Facets struct {
	Browsers       []string `json:"browsers"`
	OS             []string `json:"os"`
	Cores          []int    `json:"cores"`
	EngineVersions []string `json:"engine_versions"`
	Wasmgap        []string `json:"wasmgap"`
}

// Distribution answers the Results tab: for one kernel and its arguments, each engine's
// distribution of medians across the runs the filter keeps.
type Distribution struct {
	Kernel  string               `json:"kernel"`
	Args    string               `json:"args"`
	Engines []EngineDistribution `json:"engines"`
	Facets  Facets               `json:"facets"`
}

// cellWhere renders the Results tab's conditions on cells: the kernel and its arguments,
// no failure, and the filter's run fields (carried by each cell since schema 3).
func (f Filter) cellWhere() (string, []any) {
	return f.fieldWhere([]string{"kernel = ?", "args = ?", "failure = ''"}, true)
}

// countWhere renders the same conditions on cell_counts, which counts only the cells that
// did not fail; ok is false when f bounds the runs' times, which cell_counts does not keep.
func (f Filter) countWhere() (where string, args []any, ok bool) {
	if !f.Since.IsZero() || !f.Until.IsZero() {
		return "", nil, false
	}
	where, args = f.fieldWhere([]string{"kernel = ?", "args = ?"}, false)
	return where, args, true
}

// onlyCell reports whether f selects by the cell alone (kernel, arguments, engine), no
// run field: then its medians' ranks are read from the narrow cells_ranks.
func (f Filter) onlyCell() bool {
	return f.Source == "" && f.Browser == "" && f.OS == "" && f.EngineVersion == "" && f.Wasmgap == "" &&
		f.Cores == 0 && f.Since.IsZero() && f.Until.IsZero()
}

func (f Filter) fieldWhere(conds []string, times bool) (string, []any) {
	args := []any{f.Kernel, f.Args}
	for _, c := range []struct{ col, v string }{
		{"engine", f.Engine}, {"source", f.Source}, {"browser", f.Browser}, {"os", f.OS},
		{"engine_version", f.EngineVersion}, {"wasmgap", f.Wasmgap},
	} {
		if c.v != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if f.Cores > 0 {
		conds, args = append(conds, "cores = ?"), append(args, f.Cores)
	}
	if times && !f.Since.IsZero() {
		conds, args = append(conds, "created_ns >= ?"), append(args, f.Since.UnixNano())
	}
	if times && !f.Until.IsZero() {
		conds, args = append(conds, "created_ns < ?"), append(args, f.Until.UnixNano())
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// countColumns are what cell_counts counts by (migration 0005): a cell's kernel,
// arguments and engine, and its run's fields the Results tab filters by.
const countColumns = "kernel, args, engine, source, browser, os, cores, engine_version, wasmgap"

// countCell counts one more cell that did not fail in cell_counts; its arguments are
// countColumns' values and the cell's created_ns.
const countCell = "INSERT INTO cell_counts (" + countColumns + ", n, first_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)" +
	" ON CONFLICT (" + countColumns + ") DO UPDATE SET n = cell_counts.n + 1," +
	" first_ns = CASE WHEN excluded.first_ns < cell_counts.first_ns THEN excluded.first_ns ELSE cell_counts.first_ns END"

// recount selects cell_counts' rows from the cells themselves, as migration 0005 fills
// it; where narrows it to some groups.
func recount(where string) string {
	return "SELECT " + countColumns + ", COUNT(*), MIN(created_ns) FROM cells WHERE failure = ''" + where + " GROUP BY " + countColumns
}

// countQuery is a query of f's cells counted in the groups tail names: over cell_counts,
// selecting fromCounts, where f can be counted there, else over the cells themselves through
// index, selecting fromCells (a filter on time: cell_counts keeps no times).
func (s *Store) countQuery(f Filter, fromCounts, fromCells, index, tail string) (string, []any) {
	if where, args, ok := f.countWhere(); ok {
		return s.d.q("SELECT " + fromCounts + " FROM cell_counts" + where + " " + tail), args
	}
	where, args := f.cellWhere()
	return s.d.q("SELECT " + fromCells + " FROM cells" + s.d.indexed(index) + where + " " + tail), args
}

// Distribution returns, for f.Kernel with f.Args, each engine's medians across the runs
// f keeps (cells that failed left out): the count and quantiles over every such run, the
// newest MaxPoints points, and for trendEngine (the first engine when empty) the median
// of medians per wasmgap version. f's Engine, Source, Browser (its name), OS, Cores,
// EngineVersion, Wasmgap, Since and Until filter; Facets lists the values stored runs
// have. The counts come from cell_counts (the cells themselves when f bounds the times),
// the ranks and points from the store's covering indexes: no cell is read whole, and only
// the answer's rows reach Go.
func (s *Store) Distribution(ctx context.Context, f Filter, trendEngine string) (Distribution, error) {
	if f.Kernel == "" {
		return Distribution{}, fmt.Errorf("distribution: name a kernel")
	}
	d := Distribution{Kernel: f.Kernel, Args: f.Args}
	query, args := s.countQuery(f, "engine, SUM(n)", "engine, COUNT(*)", "cells_quantiles", "GROUP BY engine ORDER BY engine")
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return d, fmt.Errorf("distribution: %w", err)
	}
	for rows.Next() {
		var e EngineDistribution
		if err := rows.Scan(&e.Engine, &e.Runs); err != nil {
			rows.Close()
			return d, err
		}
		d.Engines = append(d.Engines, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return d, err
	}
	if trendEngine == "" && len(d.Engines) > 0 {
		trendEngine = d.Engines[0].Engine
	}
	for i := range d.Engines {
		e := &d.Engines[i]
		ef := f
		ef.Engine = e.Engine
		ranks := "cells_quantiles"
		if ef.onlyCell() {
			ranks = "cells_ranks"
		}
		for j, q := range []float64{0, 0.25, 0.5, 0.75, 1} {
			if e.Quantiles[j], err = s.quantile(ctx, ranks, ef, e.Runs, q); err != nil {
				return d, err
			}
		}
		if e.Points, err = s.newest(ctx, ef); err != nil {
			return d, err
		}
		if e.Engine == trendEngine {
			if e.Trend, err = s.trend(ctx, ef); err != nil {
				return d, err
			}
		}
	}
	d.Facets, err = s.facets(ctx)
	return d, err
}

// quantile is the q-quantile of the medians f selects (n of them), linearly interpolated,
// read at its rank through the index, which holds them in order: from the low end for
// q ≤ ½, from the high end above, so that no read walks past the middle.
func (s *Store) quantile(ctx context.Context, index string, f Filter, n int, q float64) (float64, error) {
	if n == 0 {
		return 0, nil
	}
	pos := q * float64(n-1)
	lo := int(pos)
	hi := min(lo+1, n-1)
	order, offset := "ASC", lo
	if q > 0.5 {
		order, offset = "DESC", n-1-hi
	}
	where, args := f.cellWhere()
	rows, err := s.db.QueryContext(ctx, s.d.q("SELECT median_ns FROM cells"+s.d.indexed(index)+where+
		" ORDER BY median_ns "+order+" LIMIT "+strconv.Itoa(hi-lo+1)+" OFFSET "+strconv.Itoa(offset)), args...)
	if err != nil {
		return 0, fmt.Errorf("distribution: quantile: %w", err)
	}
	defer rows.Close()
	var v []float64
	for rows.Next() {
		var x float64
		if err := rows.Scan(&x); err != nil {
			return 0, err
		}
		v = append(v, x)
	}
	if err := rows.Err(); err != nil || len(v) == 0 {
		return 0, err
	}
	slices.Sort(v)
	if len(v) == 1 {
		return v[0], nil
	}
	return v[0] + (pos-float64(lo))*(v[1]-v[0]), nil
}

// newest returns the newest MaxPoints runs' medians f selects.
func (s *Store) newest(ctx context.Context, f Filter) ([]Point, error) {
	where, args := f.cellWhere()
	rows, err := s.db.QueryContext(ctx, s.d.q("SELECT run_id, median_ns, created_ns, source, browser, browser_version, wasmgap FROM cells"+s.d.indexed("cells_newest")+where+
		" ORDER BY run_id DESC LIMIT "+strconv.Itoa(MaxPoints)), args...)
	if err != nil {
		return nil, fmt.Errorf("distribution: points: %w", err)
	}
	defer rows.Close()
	var out []Point
	for rows.Next() {
		var p Point
		var created int64
		var bv string
		if err := rows.Scan(&p.Run, &p.MedianNS, &created, &p.Source, &p.Browser, &bv, &p.Wasmgap); err != nil {
			return nil, err
		}
		p.Created = time.Unix(0, created).UTC()
		if p.Browser != "" && bv != "" {
			p.Browser += " " + bv
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// trend returns the median of the medians f selects per wasmgap version, in the order
// the versions first appeared.
func (s *Store) trend(ctx context.Context, f Filter) ([]TrendPoint, error) {
	query, args := s.countQuery(f, "wasmgap, SUM(n), MIN(first_ns)", "wasmgap, COUNT(*), MIN(created_ns)", "cells_versions", "GROUP BY wasmgap")
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("distribution: trend: %w", err)
	}
	var out []TrendPoint
	for rows.Next() {
		var t TrendPoint
		var first int64
		if err := rows.Scan(&t.Wasmgap, &t.Runs, &first); err != nil {
			rows.Close()
			return nil, err
		}
		t.First = time.Unix(0, first).UTC()
		out = append(out, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		vf := f
		vf.Wasmgap = out[i].Wasmgap
		if out[i].MedianNS, err = s.quantile(ctx, "cells_versions", vf, out[i].Runs, 0.5); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b TrendPoint) int { return a.First.Compare(b.First) })
	return out, nil
}

// facets lists the values the filters can take: those of every stored run.
func (s *Store) facets(ctx context.Context) (Facets, error) {
	var fc Facets
	rows, err := s.db.QueryContext(ctx, "SELECT kind, value FROM facets ORDER BY kind, value")
	if err != nil {
		return fc, fmt.Errorf("distribution: facets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, v string
		if err := rows.Scan(&kind, &v); err != nil {
			return fc, err
		}
		switch kind {
		case "browser":
			fc.Browsers = append(fc.Browsers, v)
		case "os":
			fc.OS = append(fc.OS, v)
		case "cores":
			if n, err := strconv.Atoi(v); err == nil {
				fc.Cores = append(fc.Cores, n)
			}
		case "engine_version":
			fc.EngineVersions = append(fc.EngineVersions, v)
		case "wasmgap":
			fc.Wasmgap = append(fc.Wasmgap, v)
		}
	}
	slices.Sort(fc.Cores)
	return fc, rows.Err()
}
