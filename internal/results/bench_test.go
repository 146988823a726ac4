package results

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
)

// benchRuns is the size of the store BenchmarkDistribution fills.
const benchRuns = 100_000

// fillStore writes n runs of two kernels on three engines each, as `wasmgap bench` and
// the page store them (every sample in each cell's JSON, each counted in cell_counts):
// every run has fib_rec at its
// default size, beside one other kernel of the catalogue; browsers, OSes, cores and
// versions vary.
func fillStore(tb testing.TB, s *Store, n int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	all := kernels.All()
	engines := []string{"native", "wazero-compiler", "wazero-interpreter", "yaegi", "browser-wasm", "browser-js"}
	browsers := []string{"", "Chrome", "Firefox", "Safari"}
	oses := []string{"linux", "darwin", "windows"}
	const batch = 5000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for start := 0; start < n; start += batch {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			tb.Fatal(err)
		}
		runStmt, _ := tx.PrepareContext(ctx, s.d.q(`INSERT INTO runs (created_ns, source, plan, machine, wasmgap, go, cpu, cores, os, arch,
			browser, browser_version, user_agent, hardware_concurrency, cross_origin_isolated, timer_resolution_ns, method, environment)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`))
		cellStmt, _ := tx.PrepareContext(ctx, s.d.q(`INSERT INTO cells (run_id, pos, kernel, args, engine, engine_version, median_ns, failure, result,
			created_ns, source, browser, browser_version, os, cores, wasmgap)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
		countStmt, _ := tx.PrepareContext(ctx, s.d.q(countCell))
		for i := start; i < min(start+batch, n); i++ {
			browser := browsers[rng.IntN(len(browsers))]
			source := SourceCLI
			if browser != "" {
				source = SourceBrowser
			}
			var id int64
			created, version, cores, os := t0.Add(time.Duration(i)*time.Minute).UnixNano(), fmt.Sprintf("v0.%d", i/10_000), 1<<rng.IntN(5), oses[rng.IntN(len(oses))]
			err := runStmt.QueryRowContext(ctx, created, source, "plan", "machine",
				version, "go1.26.4", "Test CPU", cores, os, "amd64",
				browser, "140", "", 0, 1, 5000.0, `{"runs":10}`, `{"cpu":"Test CPU"}`).Scan(&id)
			if err != nil {
				tb.Fatal(err)
			}
			other := all[(2+rng.IntN(len(all)-1))%len(all)] // any kernel but all[1]
			for pos, k := range []*kernels.Kernel{all[1], other} {
				for e := range 3 {
					eng := engines[(i+e)%len(engines)]
					res := measure.Result{Kernel: k.Name, Args: k.Defaults(), Engine: eng, Runs: 10, Calls: 1, Value: 1, Expected: 1}
					for range 10 {
						res.Samples = append(res.Samples, 1e6*(1+rng.Float64()))
					}
					res.Min, res.Median, res.Max, res.CI = measure.Summarize(res.Samples)
					js, _ := json.Marshal(res)
					if _, err := cellStmt.ExecContext(ctx, id, pos*3+e, k.Name, argsKey(res.Args), eng, "v1", res.Median, "", string(js),
						created, source, browser, "140", os, cores, version); err != nil {
						tb.Fatal(err)
					}
					if _, err := countStmt.ExecContext(ctx, k.Name, argsKey(res.Args), eng, source, browser, os, cores, "v1", version, created); err != nil {
						tb.Fatal(err)
					}
				}
			}
		}
		if err := tx.Commit(); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkDistribution is the Results tab's query on a store of 100,000 runs: "every
// run" is fib_rec, which every run has (300,000 cells), "some runs" a kernel a
// thirteenth of the runs have. Run it with
//
//	go test ./internal/results -run '^$' -bench Distribution -benchtime 20x
func BenchmarkDistribution(b *testing.B) {
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "results.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	began := time.Now()
	fillStore(b, s, benchRuns)
	b.Logf("filled %d runs in %v", benchRuns, time.Since(began).Round(time.Second))
	all := kernels.All()
	for _, c := range []struct {
		name string
		k    *kernels.Kernel
	}{{"every-run", all[1]}, {"some-runs", all[2]}} {
		b.Run(c.name, func(b *testing.B) {
			f := Filter{Kernel: c.k.Name, Args: argsKey(c.k.Defaults())}
			var cells int
			cpu := processCPU()
			for b.Loop() {
				d, err := s.Distribution(context.Background(), f, "")
				if err != nil {
					b.Fatal(err)
				}
				cells = 0
				for _, e := range d.Engines {
					cells += e.Runs
				}
			}
			b.ReportMetric(float64(cells), "cells")
			// The machine is shared: CPU time says what the query costs whatever else runs.
			if used := processCPU() - cpu; used > 0 {
				b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// TestFillStore keeps the benchmark's filler honest on a small store.
func TestFillStore(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "r.db"))
	fillStore(t, s, 30)
	all := kernels.All()
	d, err := s.Distribution(context.Background(), Filter{Kernel: all[1].Name, Args: argsKey(all[1].Defaults())}, "")
	if err != nil {
		t.Fatal(err)
	}
	cells := 0
	for _, e := range d.Engines {
		cells += e.Runs
	}
	if cells != 90 {
		t.Errorf("%d cells of %s in 30 runs, want 90", cells, all[1].Name)
	}
	checkCounts(t, s)
}
