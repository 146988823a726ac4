package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/history"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

// listFlag collects a repeatable flag; "a,b" counts as two values, and a value given
// twice counts once (a run holds each cell once: results.CheckCells).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(*l, s) {
			*l = append(*l, s)
		}
	}
	return nil
}

// argFlag collects --arg name=value pairs; runner.Input reads the values.
type argFlag map[string]string

func (a argFlag) String() string { return fmt.Sprint(map[string]string(a)) }

func (a argFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q is not name=value (for example n=30, or fib_rec.n=30 for one kernel)", v)
	}
	a[name] = value
	return nil
}

// defaultEngines are the engines a bench without --engine or --all runs: Go compiled to
// machine code and Go compiled to wasm under wazero's compiler, the first article's gap,
// at the articles' sizes in about three minutes on two idle cores (each cell in three worker
// processes; an estimate from the method, its forecast printed first). The interpreted tiers
// (wazero-interpreter, yaegi) take minutes or time out at those sizes; --all adds them and
// every other engine.
var defaultEngines = []string{engine.Native, engine.WazeroCompiler}

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var engineNames, kernelNames listFlag
	named := argFlag{}
	b := runner.Bounds
	fs.Var(&engineNames, "engine", "an engine to run (repeatable; default: "+strings.Join(defaultEngines, " and ")+", see --all)")
	all := fs.Bool("all", false, "run every server engine (the Go tiers, the other WebAssembly engines, the browsers, the other languages): a long run, its forecast printed first")
	fs.Var(&kernelNames, "kernel", "a kernel to run (repeatable; default: every kernel)")
	fs.Var(named, "arg", "a kernel parameter as name=value, for every selected kernel that has it, or kernel.name=value for one (repeatable; default: the articles' sizes)")
	runs := fs.Int("runs", int(b.Runs.Default), "timed runs per cell ("+b.Runs.Range()+"; 6 or more give the median an interval)")
	warmup := fs.Int("warmup", int(b.Warmup.Default), "untimed warm-up runs per cell before the timed ones ("+b.Warmup.Range()+")")
	warmupTime := fs.Duration("warmup-time", time.Duration(b.WarmupTime.Default), "how long the warm-up lasts at least: calls go on past --warmup until it has ("+b.WarmupTime.Range()+")")
	minSample := fs.Duration("min-sample", time.Duration(b.MinSample.Default), "how long a sample lasts at least: shorter calls are repeated k times per sample and timed together ("+b.MinSample.Range()+")")
	cold := fs.Bool("cold", false, "compile without the on-disk cache (wazero's compiler), so that the setup table shows a cold start")
	timeout := fs.Duration("timeout", time.Duration(b.Timeout.Default), "time limit per execution of a cell, loading included ("+b.Timeout.Range()+")")
	executions := fs.Int("executions", int(b.Executions.Default), "worker processes per cell, a kernel's engines taking turns; the cell's --runs spread over them, its interval built over them ("+b.Executions.Range()+"; 2 or more give × an interval)")
	format := fs.String("format", report.FormatTable, "output format: "+strings.Join(report.Formats(), ", "))
	withHistory := fs.Bool("history", false, "print the source articles' historical figures beside the live rows")
	allowFailures := fs.Bool("allow-failures", false, "exit 0 even when a cell failed (timed out, overflowed its stack, gave a wrong value); without it such a run exits 1 after printing the table")
	stored := addBenchResultFlags(fs) // --no-save, --results-db, --compare-last (results.go)
	farmed := addFarmFlags(fs)        // --farm, --each, --split (bench_farm.go)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: wasmgap bench [--all | --engine E...] [--kernel K]... [--arg name=value]... [--runs N] [--executions N] [--warmup N] [--warmup-time D] [--min-sample D] [--cold] [--timeout D] [--format F] [--history] [--allow-failures] [--no-save] [--results-db DB] [--compare-last] [--farm URL --each|--split]")
		fmt.Fprintln(w, "\nMeasures kernels on server engines, each cell in several worker processes (--executions), a kernel's")
		fmt.Fprintln(w, "engines taking turns (A B, B A, …) so that the machine's drift falls on each alike.")
		fmt.Fprintf(w, "Without --engine or --all: every kernel at the articles' sizes on %s (Go compiled to\n", strings.Join(defaultEngines, " and "))
		fmt.Fprintln(w, "machine code and to wasm), about three minutes on two idle cores. --all runs every server engine: hours.")
		fmt.Fprintln(w, "Before it starts, bench says how many cells and about how long (from this machine's stored runs);")
		fmt.Fprintln(w, "off a terminal it prints one line per finished cell on stderr. Ctrl-C or SIGTERM stops the cell")
		fmt.Fprintln(w, "in flight, prints the table of the cells done and stores them as a partial run.")
		fmt.Fprintln(w, "Exit status: 0 when every cell ran, 1 when a cell failed (see --allow-failures), 2 for bad flags,")
		fmt.Fprintln(w, "130 after Ctrl-C (SIGINT), 143 after SIGTERM.")
		fmt.Fprintln(w)
		fs.PrintDefaults()
		writeBenchNames(w)
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return exitf(stderr, 2, "wasmgap bench: unexpected arguments %q (kernels are chosen with --kernel)", fs.Args())
	}
	if err := farmed.check(); err != nil {
		return exitf(stderr, 2, "wasmgap bench: %v", err)
	}
	if !slices.Contains(report.Formats(), *format) {
		return exitf(stderr, 2, "wasmgap bench: unknown format %q: valid formats are %s", *format, strings.Join(report.Formats(), ", "))
	}
	switch {
	case *all && len(engineNames) > 0:
		return exitf(stderr, 2, "wasmgap bench: give --all or --engine, not both: --all runs every server engine")
	case *all:
		engineNames = engine.Names()
	case len(engineNames) == 0:
		engineNames = slices.Clone(defaultEngines)
	}
	in := runner.Input{Engines: engineNames, Kernels: kernelNames, Args: named, Cold: *cold}
	// Only the flags given are the Input's: the rest keep the one table's defaults.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "runs":
			in.Runs = runs
		case "warmup":
			in.Warmup = warmup
		case "warmup-time":
			in.WarmupTime = warmupTime
		case "min-sample":
			in.MinSample = minSample
		case "timeout":
			in.Timeout = timeout
		case "executions":
			in.Executions = executions
		}
	})
	plan, err := in.Plan()
	var jobs []runner.Job
	if err == nil {
		jobs, err = plan.Jobs()
	}
	if err != nil {
		return exitf(stderr, 2, "wasmgap bench: %s", flagError(err))
	}
	opts := plan.Options

	// SIGINT or SIGTERM ends the cell in flight; the cells done are reported and stored.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	var caught atomic.Value // os.Signal
	go func() {
		select {
		case sig := <-signals:
			caught.Store(sig)
			cancel()
		case <-ctx.Done():
		}
	}()

	timeLimit := cmp.Or(plan.Timeout, runner.DefaultTimeout)
	fmt.Fprintln(stderr, "wasmgap bench:", forecastJobs(jobs, storedCells(stored.dsn(), stderr), timeLimit))
	progress := newProgressLine(stderr)
	rep := report.Report{
		Method: report.Method{
			Runs: opts.Runs, Warmup: opts.Warmup, Executions: cmp.Or(plan.Executions, runner.DefaultExecutions), WarmupTime: opts.WarmupTarget(), Timeout: timeLimit,
			MinSample: opts.SampleTarget(), Cold: opts.Cold, Timing: report.DefaultTiming,
		},
		Environment: report.CurrentEnvironment(),
		// The engines asked for keep their columns, those that run none of the kernels
		// asked for included (host_call alone on native: n/a).
		Engines: []string(engineNames),
	}
	if *farmed.nats.url != "" {
		return farmed.run(ctx, jobs, rep, stored, *format, *allowFailures, func() os.Signal { sig, _ := caught.Load().(os.Signal); return sig }, stdout, stderr)
	}
	began := time.Now()
	cellName := func(i int) string {
		return fmt.Sprintf("[%d/%d] %s on %s", i+1, len(jobs), jobs[i].Label(), jobs[i].Engine())
	}
	var err2 error
	rep.Results, err2 = runner.RunCells(ctx, jobs, runner.CellsOptions{
		OnExecution: func(i, execution int) {
			progress.start(fmt.Sprintf("%s, execution %d/%d", cellName(i), execution+1, jobs[i].Executions()))
		},
		OnProgress: func(_ int, p runner.Progress) {
			progress.phase(fmt.Sprintf("%s %d/%d", p.Phase, p.Done, p.Total))
		},
		OnCell: func(i int, r measure.Result) { progress.done(cellName(i), r, opts.Runs) },
	})
	if err2 != nil && ctx.Err() == nil {
		progress.clear()
		return exitf(stderr, 1, "wasmgap bench: %v", err2)
	}
	progress.clear()
	sig, _ := caught.Load().(os.Signal)
	if sig != nil {
		rep.Method.Partial = fmt.Sprintf("stopped by %s after %d of %d cells", signalName(sig), len(rep.Results), len(jobs))
		fmt.Fprintf(stderr, "wasmgap bench: %s, %v: the table has the cells done\n", rep.Method.Partial, time.Since(began).Round(time.Second))
	}
	rep.Environment = rep.Environment.WithRuntimes(rep.Results)
	if *withHistory {
		var names []string
		for _, r := range rep.Results {
			if !slices.Contains(names, r.Kernel) {
				names = append(names, r.Kernel)
			}
		}
		rep.History = history.ForKernels(names...)
	}
	if err := report.WriteWidth(stdout, *format, rep, terminalWidth(stdout)); err != nil {
		return exitf(stderr, 1, "wasmgap bench: write report: %v", err)
	}
	if sig != nil {
		// Stored, never compared: a part of a plan has no earlier run to meet.
		if len(rep.Results) > 0 {
			stored.save(rep, stderr)
		}
		return signalExit(sig)
	}
	if code := stored.after(rep, *format, stdout, stderr); code != 0 {
		return code
	}
	if failed := countFailed(rep.Results); failed > 0 && !*allowFailures {
		return exitf(stderr, 1, "wasmgap bench: %d of %d cells failed (the table says why); --allow-failures exits 0 anyway", failed, len(rep.Results))
	}
	return 0
}

// flagError words an error of runner.Input or Plan.Jobs for the command line: a setting's
// field as its flag ("--min-sample: …"), the rest as they are.
func flagError(err error) string {
	var fe *runner.FieldError
	if errors.As(err, &fe) {
		b := runner.Bounds
		for _, s := range []runner.Setting{b.Runs, b.Warmup, b.WarmupTime, b.MinSample, b.Timeout, b.Executions} {
			if fe.Field == s.Field {
				return "--" + s.Flag + ": " + err.Error()
			}
		}
		if strings.HasPrefix(fe.Field, "args.") {
			return "--arg " + err.Error()
		}
	}
	return err.Error()
}

// signalName names a signal as a person knows it: "SIGINT (Ctrl-C)", "SIGTERM".
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// signalExit is the shell's exit status for a command a signal ended: 128 + its number
// (130 for SIGINT, 143 for SIGTERM).
func signalExit(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// terminalWidth is w's width in columns when w is a terminal, else 0 (no limit: a file or
// a pipe gets the tables whole).
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

// countFailed counts the cells that hold a failure rather than times.
func countFailed(results []measure.Result) int {
	n := 0
	for _, r := range results {
		if r.Failed() {
			n++
		}
	}
	return n
}

// writeBenchNames lists what --kernel, --arg and --engine accept: every kernel with its
// parameters' defaults (the articles' sizes) and ranges, and every engine.
func writeBenchNames(w io.Writer) {
	fmt.Fprintln(w, "\nkernels (--kernel), with their parameters (--arg name=value): default, range")
	for _, k := range kernels.Every() {
		params := make([]string, len(k.Params))
		for i, p := range k.Params {
			params[i] = fmt.Sprintf("%s=%d (%d to %d)", p.Name, p.Default, p.Min, p.Max)
		}
		if k.HostCall {
			params = append(params, "no parameters; on the engines that run kernels.wasm only, one call from the host per iteration")
		}
		fmt.Fprintf(w, "  %-10s %s\n", k.Name, strings.Join(params, ", "))
	}
	fmt.Fprintf(w, "\nengines (--engine; default: %s; --all: all of them):\n", strings.Join(defaultEngines, ", "))
	fmt.Fprintf(w, "  %s\n", strings.Join(engine.Names(), ", "))
}

// progressLine rewrites one status line on a terminal, once a second and at every phase;
// off a terminal (a pipe, a log file) it prints one line per finished cell instead.
type progressLine struct {
	w  io.Writer
	on bool

	mu           sync.Mutex
	cell, status string
	began        time.Time
	stop         chan struct{}
}

func newProgressLine(w io.Writer) *progressLine {
	f, ok := w.(*os.File)
	p := &progressLine{w: w, on: ok && term.IsTerminal(int(f.Fd()))}
	if p.on {
		p.stop = make(chan struct{})
		go p.tick()
	}
	return p
}

func (p *progressLine) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.draw()
		}
	}
}

// start begins a new cell.
func (p *progressLine) start(cell string) {
	p.mu.Lock()
	p.cell, p.status, p.began = cell, "starting", time.Now()
	p.mu.Unlock()
	p.draw()
}

// phase records the cell's progress.
func (p *progressLine) phase(status string) {
	p.mu.Lock()
	p.status = status
	p.mu.Unlock()
	p.draw()
}

func (p *progressLine) draw() {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cell == "" {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s: %s, %v", p.cell, p.status, time.Since(p.began).Round(time.Second))
}

// done says that a cell finished: off a terminal, one line with its result and how long
// it took.
func (p *progressLine) done(cell string, r measure.Result, asked int) {
	if p.on {
		return
	}
	p.mu.Lock()
	took := time.Since(p.began)
	p.mu.Unlock()
	what := r.Failure
	if !r.Failed() {
		what = report.FormatNs(r.Median) + " per call " + report.Spread(r)
	}
	if !r.Failed() && r.Runs < asked {
		what += fmt.Sprintf(" (%d of %d runs fitted the time limit)", r.Runs, asked)
	}
	if r.Lost != "" {
		what += "; " + r.Lost + ": the figure is over the executions before it"
	}
	fmt.Fprintf(p.w, "%s: %s (%v)\n", cell, what, took.Round(100*time.Millisecond))
}

// clear erases the line and stops the updates.
func (p *progressLine) clear() {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
	p.cell = ""
	fmt.Fprint(p.w, "\r\033[K")
}
