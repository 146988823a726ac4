package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/internal/warmup"
	"github.com/wasmgap/wasmgap/kernels"
)

// The output formats of wasmgap warmup.
const (
	warmupText     = "table"
	warmupJSON     = "json"
	warmupMarkdown = "markdown"
)

func runWarmup(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap warmup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var engineNames, kernelNames listFlag
	named := argFlag{}
	fs.Var(&engineNames, "engine", "an engine to run (repeatable, or a,b; default: "+strings.Join(runner.DefaultWarmupEngines, ",")+")")
	fs.Var(&kernelNames, "kernel", "a kernel to run (repeatable, or a,b; default: "+runner.DefaultWarmupKernel+"); with several, --format json gives an array")
	fs.Var(named, "arg", "a kernel parameter as name=value, or kernel.name=value for one of several kernels (repeatable; default: n=20 for fib_rec, the articles' sizes otherwise)")
	b := runner.Bounds
	executions := fs.Int(b.WarmupExecutions.Flag, int(b.WarmupExecutions.Default), b.WarmupExecutions.What+" ("+b.WarmupExecutions.Range()+")")
	calls := fs.Int(b.Calls.Flag, int(b.Calls.Default), b.Calls.What+", each of --group calls ("+b.Calls.Range()+")")
	group := fs.Int(b.Group.Flag, int(b.Group.Default), b.Group.What+", timed together: for calls of a few nanoseconds, which a clock cannot time one by one ("+b.Group.Range()+")")
	budget := fs.Duration(b.Budget.Flag, time.Duration(b.Budget.Default), b.Budget.What+", even short of --calls ("+b.Budget.Range()+")")
	timeout := fs.Duration(b.Timeout.Flag, 0, "time limit per execution, the engine's start included (default: --budget + "+runner.DefaultTimeout.String()+"; "+b.Timeout.Range()+")")
	noSave := fs.Bool("no-save", false, "do not store the study in the results store")
	resultsDB := fs.String("results-db", "", resultsDBUsage)
	maxBytes := fs.Int64("results-max-bytes", 0, resultsMaxBytesUsage)
	format := fs.String("format", warmupText, "output format: "+warmupText+", "+warmupJSON+" or "+warmupMarkdown+" (one table of every kernel and engine)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap warmup [--engine E]... [--kernel K]... [--arg name=value]... [--executions N] [--calls N] [--group N] [--budget D] [--timeout D] [--format F] [--no-save] [--results-db DB]")
		fmt.Fprintln(fs.Output(), "\nTimes every call of a kernel from the first, in fresh processes, and finds where each engine")
		fmt.Fprintln(fs.Output(), "reaches its steady state (changepoints by PELT; flat, warm-up, slowdown or no steady state,")
		fmt.Fprintln(fs.Output(), "as in Barrett et al., OOPSLA 2017). Every engine can run, the browsers' too: they time")
		fmt.Fprintln(fs.Output(), "each sample with performance.now() in the page's Web Worker, a fresh browser per execution.")
		fmt.Fprintln(fs.Output(), "Exit status: 0, or 1 when an execution failed, 2 for bad flags.")
		fs.PrintDefaults()
		writeBenchNames(fs.Output())
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return exitf(stderr, 2, "wasmgap warmup: unexpected arguments %q (the kernel is chosen with --kernel)", fs.Args())
	}
	if *format != warmupText && *format != warmupJSON && *format != warmupMarkdown {
		return exitf(stderr, 2, "wasmgap warmup: unknown format %q: valid formats are %s, %s, %s", *format, warmupText, warmupJSON, warmupMarkdown)
	}
	// Only the flags given are the settings': the rest keep the one table's defaults.
	var set runner.WarmupSettings
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case b.WarmupExecutions.Flag:
			set.Executions = executions
		case b.Calls.Flag:
			set.Calls = calls
		case b.Group.Flag:
			set.Group = group
		case b.Budget.Flag:
			set.Budget = budget
		case b.Timeout.Flag:
			set.Timeout = timeout
		}
	})
	nExec, collection, limit, err := set.Check()
	if err != nil {
		return exitf(stderr, 2, "wasmgap warmup: %v", warmupError(err))
	}
	if len(kernelNames) == 0 {
		kernelNames = listFlag{runner.DefaultWarmupKernel}
	}
	for name := range named {
		if strings.Contains(name, ".") {
			continue
		}
		if !slices.ContainsFunc(kernelNames, func(k string) bool {
			kern, err := kernels.Lookup(k)
			return err == nil && slices.ContainsFunc(kern.Params, func(p kernels.Param) bool { return p.Name == name })
		}) {
			return exitf(stderr, 2, "wasmgap warmup: --arg %s: no selected kernel has a parameter %q (wasmgap warmup -h lists them)", name, name)
		}
	}
	ints, err := runner.ParseArgs(named)
	if err != nil {
		return exitf(stderr, 2, "wasmgap warmup: --arg: %v", err)
	}
	var plans []runner.WarmupPlan
	for _, k := range kernelNames {
		plan := runner.WarmupPlan{
			Engines: engineNames, Kernel: k, Args: argsFor(k, ints), Executions: nExec,
			Collection: collection, Timeout: limit,
		}
		if _, err := plan.Jobs(); err != nil {
			return exitf(stderr, 2, "wasmgap warmup: %v", warmupError(err))
		}
		plans = append(plans, plan)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	progress := newProgressLine(stderr)
	var reps []warmup.Report
	for _, plan := range plans {
		rep, err := plan.Run(ctx, func(engine string, i int) {
			progress.start(fmt.Sprintf("%s on %s: execution %d/%d", plan.Kernel, engine, i+1, plan.Executions))
		})
		if err != nil {
			progress.clear()
			return exitf(stderr, 1, "wasmgap warmup: %v", err)
		}
		reps = append(reps, rep)
	}
	progress.clear()
	switch *format {
	case warmupJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		if len(reps) == 1 {
			err = enc.Encode(reps[0])
		} else {
			err = enc.Encode(reps)
		}
	case warmupMarkdown:
		err = warmup.WriteMarkdown(stdout, reps)
	default:
		for i, rep := range reps {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			if err = warmup.WriteText(stdout, rep); err != nil {
				break
			}
		}
	}
	if err != nil {
		return exitf(stderr, 1, "wasmgap warmup: write report: %v", err)
	}
	if !*noSave {
		if code := saveStudies(reps, *resultsDB, *maxBytes, stderr); code != 0 {
			return code
		}
	}
	failed := 0
	for _, rep := range reps {
		for _, e := range rep.Engines {
			for _, r := range e.Runs {
				if r.Failure != "" {
					failed++
				}
			}
		}
	}
	if failed > 0 {
		return exitf(stderr, 1, "wasmgap warmup: %d executions failed (the report says why)", failed)
	}
	return 0
}

// argsFor picks the arguments of kernel k among the named ones: "name" for every kernel
// that has the parameter, "k.name" for k alone; fib_rec alone gets n=20 unless told.
func argsFor(k string, named map[string]int) map[string]int {
	kern, err := kernels.Lookup(k)
	if err != nil {
		return named // Plan.Jobs says what is wrong with the kernel
	}
	out := map[string]int{}
	for name, v := range named {
		if kname, param, ok := strings.Cut(name, "."); ok {
			if kname == k {
				out[param] = v
			} else if _, err := kernels.Lookup(kname); err != nil {
				out[name] = v // Plan.Jobs names the unknown kernel
			}
			continue
		}
		if slices.ContainsFunc(kern.Params, func(p kernels.Param) bool { return p.Name == name }) {
			out[name] = v
		}
	}
	if k == runner.DefaultWarmupKernel && len(out) == 0 && len(named) == 0 {
		out["n"] = 20
	}
	return out
}

// warmupError words an error of the settings or the plan for the command line: a
// *runner.FieldError after its flag ("--calls: …", "--arg …"), the rest as they are.
func warmupError(err error) string {
	var fe *runner.FieldError
	switch {
	case !errors.As(err, &fe):
		return err.Error()
	case strings.HasPrefix(fe.Field, "args"):
		return "--arg: " + err.Error()
	}
	return "--" + fe.Field + ": " + err.Error()
}

// saveStudies stores each finished study in the results store, as bench stores its runs,
// and says under which id (on stderr: stdout keeps the report whole).
func saveStudies(reps []warmup.Report, flagDB string, maxBytes int64, stderr io.Writer) int {
	dsn, ok := resultsDSN(flagDB)
	if !ok {
		return 0
	}
	ctx := context.Background()
	store, err := openLimited(ctx, dsn, maxBytes)
	if err != nil {
		return exitf(stderr, 1, "wasmgap warmup: %v", err)
	}
	defer store.Close()
	for _, rep := range reps {
		id, err := store.SaveStudy(ctx, results.NewStudy(results.SourceCLI, rep))
		if err != nil {
			return exitf(stderr, 1, "wasmgap warmup: %s: %v (--no-save runs without storing)", rep.Label, err)
		}
		fmt.Fprintf(stderr, "wasmgap warmup: %s stored as study %d in %s (GET /api/warmup/%d; the page: ?view=warmup&study=%d)\n", rep.Label, id, dsn, id, id)
	}
	return 0
}
