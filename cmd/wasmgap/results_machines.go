package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
)

// resultsMachines sets stored runs of one plan, each from a machine, side by side: the
// runs named, or the newest run of each machine for the plan of the newest run.
func resultsMachines(args []string, stdout, stderr io.Writer) int {
	const cmd = "wasmgap results machines"
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("results-db", "", resultsDBUsage)
	format := fs.String("format", report.FormatTable, "output format: table or markdown")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap results machines [--format F] [--results-db DB] [ID ID...]\n\nSets stored runs side by side, a column per machine: native's median and each engine's ×native\non that machine, and the spread of each across the machines. Without ids: the newest run of each\nmachine among the runs of the newest run's cells (as `wasmgap bench --farm --each` stores them).")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *format != report.FormatTable && *format != report.FormatMarkdown {
		return exitf(stderr, 2, "%s: unknown format %q: valid formats are table, markdown", cmd, *format)
	}
	var runs []results.Run
	switch n := fs.NArg(); {
	case n == 1:
		return exitf(stderr, 2, "%s: give two run ids or more, or none for the newest run of each machine", cmd)
	case n > 1:
		var ok bool
		if runs, ok = getRuns(cmd, *db, fs.Args(), n, stderr); !ok {
			return 2
		}
	default:
		var code int
		if runs, code = newestPerMachine(cmd, *db, stderr); code != 0 {
			return code
		}
	}
	names := make([]string, len(runs))
	reps := make([]report.Report, len(runs))
	for i, r := range runs {
		names[i], reps[i] = r.MachineTitle(), r.Report
		fmt.Fprintf(stdout, "%s: run %d, %s, %d cores, %s\n", names[i], r.ID, r.Report.Environment.CPU, r.Report.Environment.Cores, r.Created.Format("2006-01-02 15:04"))
	}
	fmt.Fprintln(stdout)
	if err := report.WriteMachines(stdout, names, reps, *format == report.FormatMarkdown); err != nil {
		return exitf(stderr, 1, "%s: %v", cmd, err)
	}
	return 0
}

// newestPerMachine is the newest run of each machine among the runs of the newest run's
// plan, newest first.
func newestPerMachine(cmd, db string, stderr io.Writer) ([]results.Run, int) {
	store, ok := openResults(cmd, db, stderr)
	if !ok {
		return nil, 2
	}
	defer store.Close()
	ctx := context.Background()
	newest, err := store.List(ctx, results.Filter{Limit: 1})
	if err != nil || len(newest) == 0 {
		fmt.Fprintf(stderr, "%s: no stored run (%v)\n", cmd, err)
		return nil, 1
	}
	first, err := store.Get(ctx, newest[0].ID)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return nil, 1
	}
	same, err := store.List(ctx, results.Filter{Plan: first.Plan, Limit: 100})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return nil, 1
	}
	var runs []results.Run
	seen := map[string]bool{}
	for _, s := range same {
		r, err := store.Get(ctx, s.ID)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return nil, 1
		}
		if !seen[r.Machine] {
			seen[r.Machine] = true
			runs = append(runs, r)
		}
	}
	if len(runs) < 2 {
		fmt.Fprintf(stderr, "%s: the newest run's cells were measured on one machine only (run %d): give run ids, or run `wasmgap bench --farm URL --each`\n", cmd, first.ID)
		return nil, 1
	}
	return runs, 0
}
