package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/wasmgap/wasmgap/internal/farm"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// farmFlags are bench's flags for a farm: --farm URL with --each or --split.
type farmFlags struct {
	nats        *natsFlags
	each, split *bool
	agents      *int
	attempts    *int
	ackWait     *time.Duration
}

func addFarmFlags(fs *flag.FlagSet) *farmFlags {
	return &farmFlags{
		nats:     addNATSFlags(fs, "farm", "run the plan on a farm's agents through this NATS server, nats://host:port, with --each or --split (docs/FARM.md)"),
		each:     fs.Bool("each", false, "with --farm: every agent that offers the plan's engines runs the whole plan (a table per machine)"),
		split:    fs.Bool("split", false, "with --farm: the plan's cells shared among the agents of one kind, to finish sooner (a table per kind)"),
		agents:   fs.Int("agents", 1, "with --farm: wait (up to a minute) until this many agents are registered"),
		attempts: fs.Int("attempts", farm.DefaultAttempts, "with --farm: deliveries of a cell without a result (its agent killed) before it is reported as failed (1 to 100)"),
		ackWait:  fs.Duration("ack-wait", farm.DefaultAckWait, "with --farm: the ack deadline: a cell whose agent went silent this long goes to another agent (300ms to 1h)"),
	}
}

// check refuses --each or --split without --farm, and --farm without one of them.
func (f *farmFlags) check() error {
	switch {
	case *f.nats.url == "" && (*f.each || *f.split):
		return errors.New("--each and --split share the plan among a farm's agents: give --farm URL")
	case *f.nats.url != "" && *f.each == *f.split:
		return errors.New("--farm: give --each (every agent runs the plan) or --split (the agents of one kind share it)")
	case *f.attempts < 1 || *f.attempts > 100:
		return fmt.Errorf("--attempts %d: allowed 1 to 100", *f.attempts)
	case *f.nats.url != "":
		if err := farm.CheckAgents(*f.agents); err != nil {
			return fmt.Errorf("--%w", err)
		}
		if err := farm.CheckAckWait(*f.ackWait); err != nil {
			return fmt.Errorf("--ack-wait: %w", err)
		}
		return farm.CheckURL(*f.nats.url)
	}
	return nil
}

// run runs bench's checked plan on the farm, stores each result as it comes (unless
// --no-save) and prints a table per machine or kind, then the machines side by side.
// rep holds the method and the engines' columns; caught returns the signal that ended
// ctx, if one did.
func (f *farmFlags) run(ctx context.Context, jobs []runner.Job, rep report.Report, stored *benchResults, format string, allowFailures bool,
	caught func() os.Signal, stdout, stderr io.Writer) int {
	if *stored.compareLast {
		return exitf(stderr, 2, "wasmgap bench: --compare-last compares with this machine's last run: with --farm, compare the stored runs with wasmgap results compare or machines")
	}
	cells, err := farm.CellsOf(jobs)
	if err != nil {
		return exitf(stderr, 2, "wasmgap bench: %v", err)
	}
	var store *results.Store
	if dsn, ok := resultsDSN(*stored.db); ok && !*stored.noSave {
		if store, err = openLimited(ctx, dsn, *stored.maxBytes); err != nil {
			return exitf(stderr, 1, "wasmgap bench: %v", err)
		}
		defer store.Close()
	}
	mode := farm.Split
	if *f.each {
		mode = farm.Each
	}
	tables, err := farm.RunPlan(ctx, farm.PlanConfig{
		URL: *f.nats.url, Auth: f.nats.auth(), Mode: mode, Cells: cells, Engines: rep.Engines, Method: rep.Method,
		Attempts: *f.attempts, AckWait: *f.ackWait, Agents: *f.agents, Store: store, Progress: stderr,
	})
	if err != nil {
		fmt.Fprintln(stderr, "wasmgap bench:", err)
		if len(tables) == 0 {
			return 1
		}
	}
	failed := 0
	var names []string
	var reps []report.Report
	for _, t := range tables {
		if len(t.Report.Results) == 0 {
			fmt.Fprintf(stderr, "wasmgap bench: %s: no cell done\n", t.Name)
			continue
		}
		if format == report.FormatTable || format == report.FormatMarkdown {
			stored := ""
			if t.RunID != 0 {
				stored = fmt.Sprintf(", stored as run %d", t.RunID)
			}
			fmt.Fprintf(stdout, "== %s: %s%s\n\n", t.Name, t.Machine.Summary(), stored)
		}
		if err := report.WriteWidth(stdout, format, t.Report, terminalWidth(stdout)); err != nil {
			return exitf(stderr, 1, "wasmgap bench: write report: %v", err)
		}
		failed += countFailed(t.Report.Results)
		names, reps = append(names, t.Name), append(reps, t.Report)
	}
	if len(reps) > 1 && (format == report.FormatTable || format == report.FormatMarkdown) {
		if err := report.WriteMachines(stdout, names, reps, format == report.FormatMarkdown); err != nil {
			return exitf(stderr, 1, "wasmgap bench: write report: %v", err)
		}
	}
	if sig := caught(); sig != nil {
		return signalExit(sig)
	}
	if err != nil {
		return 1
	}
	if failed > 0 && !allowFailures {
		return exitf(stderr, 1, "wasmgap bench: %d cells failed (the tables say why); --allow-failures exits 0 anyway", failed)
	}
	return 0
}
