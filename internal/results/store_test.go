package results

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

// stores runs a test on a fresh SQLite file and on a fresh PostgreSQL database.
func stores(t *testing.T, test func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { test(t, filepath.Join(t.TempDir(), "sub", "results.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, postgresDSN(t)) })
}

func open(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func cell(kernel string, args []int, eng string, samples ...float64) measure.Result {
	r := measure.Result{Kernel: kernel, Args: args, Engine: eng, Runs: len(samples), Calls: 3, Samples: samples, Value: 1, Expected: 1,
		Noise: &measure.Noise{Load1: 0.5, OtherCPU: 0.1, Cores: 2}}
	r.Min, r.Median, r.Max, r.CI = measure.Summarize(samples)
	return r
}

func testReport(os string, cores int, cells ...measure.Result) report.Report {
	return report.Report{
		Method:      report.Method{Runs: 3, Warmup: 1, Timing: "test"},
		Environment: report.Environment{CPU: "Test CPU", Cores: cores, OS: os, Arch: "amd64", Go: "go1.26.4", Modules: map[string]string{"wazero": "v1.12.0"}},
		Results:     cells,
	}
}

func TestSaveGetRoundTrip(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		s, ctx := open(t, dsn), context.Background()
		run := NewRun(SourceBrowser, testReport("linux", 8, cell("fib_rec", []int{30}, "browser-wasm", 10, 11, 12), cell("ack", []int{3, 5}, "browser-js", 5, 6, 7)))
		run.Browser = Browser{Name: "Chrome", Version: "140.0", UserAgent: "Mozilla/5.0 test", HardwareConcurrency: 8, CrossOriginIsolated: true, TimerResolutionNS: 5000}
		run.Created = time.Date(2026, 12, 1, 10, 0, 0, 123, time.UTC)
		id, err := s.Save(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		run.ID = id
		if !reflect.DeepEqual(got, run) {
			t.Errorf("stored and read back differ:\n got %+v\nwant %+v", got, run)
		}
		if _, err := s.Get(ctx, id+100); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get of a missing run: %v, want ErrNotFound", err)
		}
		if _, err := s.Save(ctx, Run{}); err == nil {
			t.Error("a run without cells was saved")
		}
	})
}

func TestListFiltersLastDelete(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		s, ctx := open(t, dsn), context.Background()
		save := func(r Run) int64 {
			t.Helper()
			id, err := s.Save(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		a := NewRun(SourceCLI, testReport("linux", 2, cell("fib_rec", []int{30}, "native", 1, 2, 3)))
		a.Created, a.Wasmgap = t0, "v1"
		b := a
		b.Created, b.Wasmgap = t0.Add(time.Hour), "v2"
		c := NewRun(SourceBrowser, testReport("darwin", 8, cell("ack", []int{3, 5}, "browser-wasm", 4, 5, 6)))
		c.Browser = Browser{Name: "Firefox", Version: "128"}
		c.Created = t0.Add(2 * time.Hour)
		ia, ib, ic := save(a), save(b), save(c)

		for _, tc := range []struct {
			name string
			f    Filter
			want []int64
		}{
			{"all", Filter{}, []int64{ic, ib, ia}},
			{"ids", Filter{IDs: []int64{ia, ic}}, []int64{ic, ia}},
			{"source", Filter{Source: SourceCLI}, []int64{ib, ia}},
			{"plan", Filter{Plan: a.Plan}, []int64{ib, ia}},
			{"machine", Filter{Machine: c.Machine}, []int64{ic}},
			{"kernel", Filter{Kernel: "ack"}, []int64{ic}},
			{"args", Filter{Kernel: "fib_rec", Args: "30"}, []int64{ib, ia}},
			{"args none", Filter{Kernel: "fib_rec", Args: "31"}, nil},
			{"engine", Filter{Engine: "browser-wasm"}, []int64{ic}},
			{"engine version", Filter{EngineVersion: "go1.26.4"}, []int64{ib, ia}},
			{"browser", Filter{Browser: "Firefox"}, []int64{ic}},
			{"os", Filter{OS: "darwin"}, []int64{ic}},
			{"cores", Filter{Cores: 2}, []int64{ib, ia}},
			{"wasmgap", Filter{Wasmgap: "v1"}, []int64{ia}},
			{"since", Filter{Since: t0.Add(time.Hour)}, []int64{ic, ib}},
			{"until", Filter{Until: t0.Add(time.Hour)}, []int64{ia}},
			{"limit", Filter{Limit: 1}, []int64{ic}},
		} {
			list, err := s.List(ctx, tc.f)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var ids []int64
			for _, sm := range list {
				ids = append(ids, sm.ID)
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("%s: listed %v, want %v", tc.name, ids, tc.want)
			}
		}
		list, _ := s.List(ctx, Filter{IDs: []int64{ic}})
		if len(list) != 1 || !slices.Equal(list[0].Cells, []string{"ack(3, 5) on browser-wasm"}) || list[0].Browser != "Firefox 128" {
			t.Errorf("summary %+v", list)
		}

		last, err := s.Last(ctx, SourceCLI, a.Plan, a.Machine)
		if err != nil || last.ID != ib {
			t.Errorf("Last: run %d, %v; want %d", last.ID, err, ib)
		}
		if _, err := s.Last(ctx, SourceCLI, "other plan", a.Machine); !errors.Is(err, ErrNotFound) {
			t.Errorf("Last of an unknown plan: %v", err)
		}

		if _, err := s.Delete(ctx, Filter{}); err == nil || !strings.Contains(err.Error(), "no run selected") {
			t.Errorf("Delete with no filter: %v", err)
		}
		n, err := s.Delete(ctx, Filter{Source: SourceCLI})
		if err != nil || n != 2 {
			t.Fatalf("Delete: %d, %v; want 2", n, err)
		}
		list, _ = s.List(ctx, Filter{})
		if len(list) != 1 || list[0].ID != ic {
			t.Errorf("after delete: %+v", list)
		}
		var cells int
		if err := s.db.QueryRow("SELECT COUNT(*) FROM cells").Scan(&cells); err != nil || cells != 1 {
			t.Errorf("cells left after delete: %d, %v; want 1", cells, err)
		}
	})
}

func TestMigrations(t *testing.T) {
	latest := len(migrationFiles())
	// From every earlier schema, with a run stored as that schema's binary stored it.
	for from := 1; from < latest; from++ {
		t.Run(fmt.Sprintf("from version %d", from), func(t *testing.T) {
			stores(t, func(t *testing.T, dsn string) {
				ctx := context.Background()
				prev, err := openAt(ctx, dsn, from)
				if err != nil {
					t.Fatal(err)
				}
				if v, _ := prev.Version(ctx); v != from {
					t.Fatalf("opened at version %d, want %d", v, from)
				}
				run := NewRun(SourceCLI, testReport("linux", 2, cell("fib_rec", []int{30}, "native", 1, 2, 3)))
				id := saveAt(t, prev, from, run)
				// More runs, for the counts: two in one group, a failed cell, a browser.
				again := NewRun(SourceCLI, testReport("linux", 2, cell("fib_rec", []int{30}, "native", 4, 5, 6), measure.Result{Kernel: "fib_rec", Args: []int{30}, Engine: "yaegi", Failure: "timed out"}))
				again.Created = run.Created.Add(-time.Hour)
				saveAt(t, prev, from, again)
				b := NewRun(SourceBrowser, testReport("darwin", 8, cell("fib_rec", []int{30}, "browser-wasm", 7, 7, 7), cell("ack", []int{3, 5}, "browser-js", 1, 2, 3)))
				b.Browser = Browser{Name: "Firefox", Version: "140"}
				saveAt(t, prev, from, b)
				prev.Close()
				s := open(t, dsn)
				if v, _ := s.Version(ctx); v != latest {
					t.Errorf("migrated to version %d, want %d", v, latest)
				}
				if run, err := s.Get(ctx, id); err != nil || len(run.Report.Results) != 1 {
					t.Errorf("the run stored before the migration: %+v, %v", run, err)
				}
				checkCounts(t, s)
				if d, err := s.Distribution(ctx, Filter{Kernel: "fib_rec", Args: "30", OS: "linux", Cores: 2}, ""); err != nil || len(d.Engines) != 1 || d.Engines[0].Runs != 2 || d.Engines[0].Quantiles[2] != 3.5 ||
					len(d.Engines[0].Trend) != 1 || !d.Engines[0].Trend[0].First.Equal(again.Created) ||
					!slices.Equal(d.Facets.OS, []string{"darwin", "linux"}) || !slices.Contains(d.Facets.EngineVersions, "go1.26.4") {
					t.Errorf("distribution after the migration (the cells' run fields and the facets filled from the runs): %+v, %v", d, err)
				}
				// Opening again changes nothing; a schema newer than the binary is refused.
				s.Close()
				s = open(t, dsn)
				if _, err := s.db.Exec(s.d.q("INSERT INTO schema_version (version, applied_ns) VALUES (?, 0)"), latest+1); err != nil {
					t.Fatal(err)
				}
				if _, err := Open(ctx, dsn); err == nil || !strings.Contains(err.Error(), "newer than this binary's") {
					t.Errorf("a newer schema: %v", err)
				}
			})
		})
	}
	t.Run("empty", func(t *testing.T) {
		s := open(t, filepath.Join(t.TempDir(), "r.db"))
		var n int
		if err := s.db.QueryRow("SELECT COUNT(*) FROM sqlite_master WHERE name IN ('cells_quantiles', 'cells_versions', 'cells_newest', 'cells_ranks', 'facets', 'cell_counts', 'cells_distribution')").Scan(&n); err != nil || n != 6 {
			t.Errorf("the Results tab's indexes and its facets and cell_counts tables: %d of 6 (and cells_distribution dropped), %v", n, err)
		}
	})
}

// saveAt stores a run as a binary of schema version v stored it: before version 3 the
// cells without their run's fields (and no facets), before version 5 nothing counted.
func saveAt(t *testing.T, s *Store, v int, run Run) int64 {
	t.Helper()
	if v >= 8 {
		id, err := s.Save(context.Background(), run)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	e, b := run.Report.Environment, run.Browser
	var id int64
	err := s.db.QueryRow(s.d.q(`INSERT INTO runs (created_ns, source, plan, machine, wasmgap, go, cpu, cores, os, arch,
		browser, browser_version, user_agent, hardware_concurrency, cross_origin_isolated, timer_resolution_ns, method, environment)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0, 0, 0, '{}', '{}') RETURNING id`),
		run.Created.UnixNano(), run.Source, run.Plan, run.Machine, run.Wasmgap, e.Go, e.CPU, e.Cores, e.OS, e.Arch, b.Name, b.Version).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range run.Report.Results {
		ev := engineVersion(run, r)
		if v < 3 {
			_, err = s.db.Exec(s.d.q(`INSERT INTO cells (run_id, pos, kernel, args, engine, engine_version, median_ns, failure, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '{}')`),
				id, i, r.Kernel, argsKey(r.Args), r.Engine, ev, r.Median, r.Failure)
		} else {
			_, err = s.db.Exec(s.d.q(`INSERT INTO cells (run_id, pos, kernel, args, engine, engine_version, median_ns, failure, result,
				created_ns, source, browser, browser_version, os, cores, wasmgap) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?, ?, ?, ?)`),
				id, i, r.Kernel, argsKey(r.Args), r.Engine, ev, r.Median, r.Failure,
				run.Created.UnixNano(), run.Source, b.Name, b.Version, e.OS, e.Cores, run.Wasmgap)
			if err == nil {
				_, err = s.db.Exec(s.d.q("INSERT INTO facets (kind, value) VALUES ('engine_version', ?), ('os', ?), ('cores', ?), ('wasmgap', ?) ON CONFLICT DO NOTHING"),
					ev, e.OS, fmt.Sprint(e.Cores), run.Wasmgap)
			}
			if err == nil && v >= 5 && r.Failure == "" {
				_, err = s.db.Exec(s.d.q(countCell), r.Kernel, argsKey(r.Args), r.Engine, run.Source, b.Name, e.OS, e.Cores, ev, run.Wasmgap, run.Created.UnixNano())
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// checkCounts fails t unless cell_counts holds what a recount of the cells gives.
func checkCounts(t *testing.T, s *Store) {
	t.Helper()
	read := func(query string) []string {
		t.Helper()
		rows, err := s.db.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			v := make([]any, 11)
			for i := range v {
				v[i] = new(any)
			}
			if err := rows.Scan(v...); err != nil {
				t.Fatal(err)
			}
			var line []string
			for _, x := range v {
				line = append(line, fmt.Sprint(*x.(*any)))
			}
			out = append(out, strings.Join(line, " "))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	counts := read("SELECT " + countColumns + ", n, first_ns FROM cell_counts")
	cells := read(recount(""))
	if !slices.Equal(counts, cells) {
		t.Errorf("cell_counts differs from a recount of the cells:\n    counts %q\n recounted %q", counts, cells)
	}
	if len(cells) == 0 {
		t.Error("no cell counted: the test stores none")
	}
}

func TestDistribution(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		s, ctx := open(t, dsn), context.Background()
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i, m := range []float64{10, 20, 30, 40, 50} {
			r := NewRun(SourceCLI, testReport("linux", 2, cell("fib_rec", []int{30}, "native", m, m, m), cell("fib_rec", []int{30}, "yaegi", 100*m, 100*m, 100*m), cell("fib_rec", []int{31}, "native", 1, 1, 1)))
			r.Created, r.Wasmgap = t0.Add(time.Duration(i)*time.Hour), []string{"v1", "v1", "v2", "v2", "v3"}[i]
			if _, err := s.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		b := NewRun(SourceBrowser, testReport("darwin", 8, cell("fib_rec", []int{30}, "browser-wasm", 7, 7, 7)))
		b.Browser = Browser{Name: "Chrome", Version: "140"}
		if _, err := s.Save(ctx, b); err != nil {
			t.Fatal(err)
		}
		failed := NewRun(SourceCLI, testReport("linux", 2, measure.Result{Kernel: "fib_rec", Args: []int{30}, Engine: "native", Failure: "timed out"}))
		if _, err := s.Save(ctx, failed); err != nil {
			t.Fatal(err)
		}

		d, err := s.Distribution(ctx, Filter{Kernel: "fib_rec", Args: "30"}, "native")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range d.Engines {
			names = append(names, e.Engine)
		}
		if !slices.Equal(names, []string{"browser-wasm", "native", "yaegi"}) {
			t.Fatalf("engines %v", names)
		}
		native := d.Engines[1]
		if native.Runs != 5 || native.Quantiles != [5]float64{10, 20, 30, 40, 50} {
			t.Errorf("native: %d runs, quantiles %v; want 5 and 10 20 30 40 50 (the failed cell left out)", native.Runs, native.Quantiles)
		}
		if len(native.Points) != 5 || native.Points[0].MedianNS != 50 {
			t.Errorf("points newest first: %+v", native.Points)
		}
		var trend []string
		for _, p := range native.Trend {
			trend = append(trend, p.Wasmgap)
		}
		if !slices.Equal(trend, []string{"v1", "v2", "v3"}) || native.Trend[0].MedianNS != 15 || native.Trend[1].Runs != 2 {
			t.Errorf("trend %+v", native.Trend)
		}
		if !slices.Equal(d.Facets.Browsers, []string{"Chrome"}) || !slices.Equal(d.Facets.OS, []string{"darwin", "linux"}) ||
			!slices.Equal(d.Facets.Cores, []int{2, 8}) || len(d.Facets.Wasmgap) != 4 || !slices.Contains(d.Facets.Wasmgap, "v3") {
			t.Errorf("facets %+v", d.Facets)
		}
		for _, tc := range []struct {
			name string
			f    Filter
			want map[string]int // engine: runs
		}{
			{"browser", Filter{Browser: "Chrome"}, map[string]int{"browser-wasm": 1}},
			{"os", Filter{OS: "linux"}, map[string]int{"native": 5, "yaegi": 5}},
			{"cores", Filter{Cores: 8}, map[string]int{"browser-wasm": 1}},
			{"engine version", Filter{EngineVersion: "go1.26.4"}, map[string]int{"native": 5}},
			{"wasmgap", Filter{Wasmgap: "v2"}, map[string]int{"native": 2, "yaegi": 2}},
			{"engine", Filter{Engine: "yaegi"}, map[string]int{"yaegi": 5}},
			{"source", Filter{Source: SourceBrowser}, map[string]int{"browser-wasm": 1}},
		} {
			tc.f.Kernel, tc.f.Args = "fib_rec", "30"
			d, err := s.Distribution(ctx, tc.f, "")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, e := range d.Engines {
				got[e.Engine] = e.Runs
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
			if len(d.Facets.OS) != 2 {
				t.Errorf("%s: facets should not depend on the filters: %+v", tc.name, d.Facets)
			}
		}
		if d, _ := s.Distribution(ctx, Filter{Kernel: "fib_rec", Args: "30"}, ""); d.Engines[0].Trend == nil || d.Engines[1].Trend != nil {
			t.Errorf("the trend is the first engine's when none is named: %+v", d.Engines)
		}
		if _, err := s.Distribution(ctx, Filter{}, ""); err == nil {
			t.Error("a distribution without a kernel")
		}
	})
}

// TestCellCounts: cell_counts stays a recount of the cells after runs are saved (failed
// cells left out, first_ns the earliest) and after runs are deleted, and the counts it
// gives equal those counted from the cells (a filter on time).
func TestCellCounts(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		s, ctx := open(t, dsn), context.Background()
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var ids []int64
		for i := range 6 {
			r := NewRun(SourceCLI, testReport([]string{"linux", "darwin"}[i%2], 2, cell("fib_rec", []int{30}, "native", float64(i+1)), cell("fib_rec", []int{30}, "yaegi", 100)))
			if i == 3 {
				r.Report.Results[1] = measure.Result{Kernel: "fib_rec", Args: []int{30}, Engine: "yaegi", Failure: "timed out"}
			}
			r.Created, r.Wasmgap = t0.Add(time.Duration(5-i)*time.Hour), []string{"v1", "v2"}[i/3] // the later saved, the earlier created
			ids = append(ids, saveAt(t, s, 5, r))
			checkCounts(t, s)
		}
		engines := func(f Filter) map[string]int {
			t.Helper()
			f.Kernel, f.Args = "fib_rec", "30"
			d, err := s.Distribution(ctx, f, "")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, e := range d.Engines {
				got[e.Engine] = e.Runs
			}
			return got
		}
		if got, want := engines(Filter{}), map[string]int{"native": 6, "yaegi": 5}; !reflect.DeepEqual(got, want) {
			t.Errorf("counted %v, want %v", got, want)
		}
		if counted, scanned := engines(Filter{OS: "linux"}), engines(Filter{OS: "linux", Since: t0.Add(-time.Hour)}); !reflect.DeepEqual(counted, scanned) {
			t.Errorf("from cell_counts %v, from the cells %v", counted, scanned)
		}
		// Deleting the earliest run moves its group's first_ns; deleting the only run of a
		// group removes the group.
		for _, f := range []Filter{{IDs: []int64{ids[5]}}, {IDs: []int64{ids[0], ids[3]}}, {Wasmgap: "v2"}} {
			if _, err := s.Delete(ctx, f); err != nil {
				t.Fatal(err)
			}
			checkCounts(t, s)
		}
		if got, want := engines(Filter{}), map[string]int{"native": 2, "yaegi": 2}; !reflect.DeepEqual(got, want) {
			t.Errorf("after the deletes: counted %v, want %v", got, want)
		}
	})
}

func TestPlaceholders(t *testing.T) {
	if got := postgresDialect.q("a = ? AND b IN (?, ?)"); got != "a = $1 AND b IN ($2, $3)" {
		t.Errorf("postgres: %q", got)
	}
	if got := sqliteDialect.q("a = ?"); got != "a = ?" {
		t.Errorf("sqlite: %q", got)
	}
	if got := redact("postgres://u:secret@h/db"); got != "postgres://u:***@h/db" {
		t.Errorf("redact: %q", got)
	}
}

func TestPlanKey(t *testing.T) {
	a := testReport("linux", 2, cell("fib_rec", []int{30}, "native", 1), cell("ack", []int{3, 5}, "yaegi", 1))
	b := testReport("linux", 2, cell("ack", []int{3, 5}, "yaegi", 2), cell("fib_rec", []int{30}, "native", 2))
	c := testReport("linux", 2, cell("fib_rec", []int{31}, "native", 1), cell("ack", []int{3, 5}, "yaegi", 1))
	if PlanKey(a) != PlanKey(b) || PlanKey(a) == PlanKey(c) {
		t.Errorf("plan keys: %s %s %s: the same cells in another order are one plan, other arguments another", PlanKey(a), PlanKey(b), PlanKey(c))
	}
}

// TestQuantilesInterpolate: the quartiles of 10, 20, 30, 40 lie between ranks, read
// from both ends of the index.
func TestQuantilesInterpolate(t *testing.T) {
	s, ctx := open(t, filepath.Join(t.TempDir(), "r.db")), context.Background()
	for _, m := range []float64{40, 10, 30, 20} {
		if _, err := s.Save(ctx, NewRun(SourceCLI, testReport("linux", 2, cell("fib_rec", []int{30}, "native", m, m, m)))); err != nil {
			t.Fatal(err)
		}
	}
	d, err := s.Distribution(ctx, Filter{Kernel: "fib_rec", Args: "30"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Engines[0].Quantiles; got != [5]float64{10, 17.5, 25, 32.5, 40} {
		t.Errorf("quantiles %v, want 10 17.5 25 32.5 40", got)
	}
}
