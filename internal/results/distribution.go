package results

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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

// distRow is one matching cell with its run's filterable fields.
type distRow struct {
	engine, engineVersion, source, browser, os, wasmgap string
	median                                              float64
	run                                                 int64
	created                                             int64
	cores                                               int
}

// Distribution returns, for f.Kernel with f.Args, each engine's medians across the runs
// f keeps (cells that failed left out). f's Browser, OS, Cores, EngineVersion, Wasmgap,
// Source and Engine filter; Facets lists what they may be set to.
func (s *Store) Distribution(ctx context.Context, f Filter) (Distribution, error) {
	if f.Kernel == "" {
		return Distribution{}, fmt.Errorf("distribution: name a kernel")
	}
	// One range of cells_distribution, each row joined to its run by key; the filters are
	// applied here, in Go, so that the facets come from the same rows.
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT c.engine, c.median_ns, c.run_id, c.engine_version,
		r.created_ns, r.source, r.browser, r.browser_version, r.os, r.cores, r.wasmgap
		FROM cells c JOIN runs r ON r.id = c.run_id
		WHERE c.kernel = ? AND c.args = ? AND c.failure = ''`), f.Kernel, f.Args)
	if err != nil {
		return Distribution{}, fmt.Errorf("distribution: %w", err)
	}
	defer rows.Close()
	d := Distribution{Kernel: f.Kernel, Args: f.Args}
	seen := map[string]map[string]bool{}
	facet := func(name, v string, list *[]string) {
		if v == "" {
			return
		}
		if seen[name] == nil {
			seen[name] = map[string]bool{}
		}
		if !seen[name][v] {
			seen[name][v] = true
			*list = append(*list, v)
		}
	}
	var kept []distRow
	for rows.Next() {
		var r distRow
		var bv string
		if err := rows.Scan(&r.engine, &r.median, &r.run, &r.engineVersion, &r.created, &r.source, &r.browser, &bv, &r.os, &r.cores, &r.wasmgap); err != nil {
			return Distribution{}, err
		}
		facet("browser", r.browser, &d.Facets.Browsers)
		facet("os", r.os, &d.Facets.OS)
		facet("version", r.engineVersion, &d.Facets.EngineVersions)
		facet("wasmgap", r.wasmgap, &d.Facets.Wasmgap)
		if !slices.Contains(d.Facets.Cores, r.cores) {
			d.Facets.Cores = append(d.Facets.Cores, r.cores)
		}
		if r.browser != "" && bv != "" {
			r.browser += " " + bv
		}
		if keep(f, r) {
			kept = append(kept, r)
		}
	}
	if err := rows.Err(); err != nil {
		return Distribution{}, err
	}
	slices.Sort(d.Facets.Browsers)
	slices.Sort(d.Facets.OS)
	slices.Sort(d.Facets.Cores)
	slices.Sort(d.Facets.EngineVersions)
	slices.Sort(d.Facets.Wasmgap)

	byEngine := map[string][]distRow{}
	var engines []string
	for _, r := range kept {
		if _, ok := byEngine[r.engine]; !ok {
			engines = append(engines, r.engine)
		}
		byEngine[r.engine] = append(byEngine[r.engine], r)
	}
	slices.Sort(engines)
	for _, e := range engines {
		d.Engines = append(d.Engines, engineDistribution(e, byEngine[e]))
	}
	return d, nil
}

func keep(f Filter, r distRow) bool {
	switch {
	case f.Engine != "" && r.engine != f.Engine,
		f.Source != "" && r.source != f.Source,
		f.Browser != "" && !strings.HasPrefix(r.browser, f.Browser),
		f.OS != "" && r.os != f.OS,
		f.Cores > 0 && r.cores != f.Cores,
		f.EngineVersion != "" && r.engineVersion != f.EngineVersion,
		f.Wasmgap != "" && r.wasmgap != f.Wasmgap,
		!f.Since.IsZero() && r.created < f.Since.UnixNano(),
		!f.Until.IsZero() && r.created >= f.Until.UnixNano():
		return false
	}
	return true
}

func engineDistribution(name string, rows []distRow) EngineDistribution {
	ed := EngineDistribution{Engine: name, Runs: len(rows)}
	medians := make([]float64, len(rows))
	for i, r := range rows {
		medians[i] = r.median
	}
	slices.Sort(medians)
	for i, q := range []float64{0, 0.25, 0.5, 0.75, 1} {
		ed.Quantiles[i] = quantile(medians, q)
	}
	// The newest runs' points.
	slices.SortFunc(rows, func(a, b distRow) int { return cmp.Compare(b.run, a.run) })
	for _, r := range rows[:min(len(rows), MaxPoints)] {
		ed.Points = append(ed.Points, Point{Run: r.run, MedianNS: r.median, Created: time.Unix(0, r.created).UTC(), Source: r.source, Browser: r.browser, Wasmgap: r.wasmgap})
	}
	// The trend: per wasmgap version, in the order the versions first appeared.
	type acc struct {
		first   int64
		medians []float64
	}
	byVersion := map[string]*acc{}
	for _, r := range rows {
		a := byVersion[r.wasmgap]
		if a == nil {
			a = &acc{first: r.created}
			byVersion[r.wasmgap] = a
		}
		a.first = min(a.first, r.created)
		a.medians = append(a.medians, r.median)
	}
	for v, a := range byVersion {
		slices.Sort(a.medians)
		ed.Trend = append(ed.Trend, TrendPoint{Wasmgap: v, First: time.Unix(0, a.first).UTC(), Runs: len(a.medians), MedianNS: quantile(a.medians, 0.5)})
	}
	slices.SortFunc(ed.Trend, func(a, b TrendPoint) int { return a.First.Compare(b.First) })
	return ed
}

// quantile is the q-quantile of sorted values, linearly interpolated.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}
