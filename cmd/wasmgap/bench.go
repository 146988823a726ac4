package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// argFlag collects --arg name=value pairs.
type argFlag map[string]int

func (a argFlag) String() string { return fmt.Sprint(map[string]int(a)) }

func (a argFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q is not name=value (for example n=30, or fib_rec.n=30 for one kernel)", v)
	}
	n, err := strconv.Atoi(value)
	if err != nil {
		return fmt.Errorf("%s=%s: the value must be an integer", name, value)
	}
	a[name] = n
	return nil
}

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var engineNames, kernelNames listFlag
	named := argFlag{}
	fs.Var(&engineNames, "engine", "an engine to run (repeatable; default: every server engine)")
	fs.Var(&kernelNames, "kernel", "a kernel to run (repeatable; default: every kernel)")
	fs.Var(named, "arg", "a kernel parameter as name=value, for every selected kernel that has it, or kernel.name=value for one (repeatable; default: the articles' sizes)")
	runs := fs.Int("runs", measure.DefaultRuns, fmt.Sprintf("timed runs per cell (1 to %d)", runner.MaxJobRuns))
	warmup := fs.Int("warmup", measure.DefaultWarmup, fmt.Sprintf("untimed warm-up runs per cell before the timed ones (0, none, to %d)", runner.MaxJobWarmup))
	warmupTime := fs.Duration("warmup-time", measure.DefaultWarmupTime, fmt.Sprintf("how long the warm-up lasts at least: calls go on past --warmup until it has (0, the --warmup calls only, to %v)", measure.MaxWarmupTime))
	minSample := fs.Duration("min-sample", measure.DefaultMinSample, fmt.Sprintf("how long a sample lasts at least: shorter calls are repeated k times per sample and timed together (0, one call per sample, to %v)", measure.MaxMinSample))
	cold := fs.Bool("cold", false, "compile without the on-disk cache (wazero's compiler), so that the setup table shows a cold start")
	timeout := fs.Duration("timeout", runner.DefaultTimeout, "time limit per cell, loading included")
	format := fs.String("format", report.FormatTable, "output format: "+strings.Join(report.Formats(), ", "))
	withHistory := fs.Bool("history", false, "print the source articles' historical figures beside the live rows")
	allowFailures := fs.Bool("allow-failures", false, "exit 0 even when a cell failed (timed out, overflowed its stack, gave a wrong value); without it such a run exits 1 after printing the table")
	stored := addBenchResultFlags(fs) // --no-save, --results-db, --compare-last (results.go)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap bench [--engine E]... [--kernel K]... [--arg name=value]... [--runs N] [--warmup N] [--warmup-time D] [--min-sample D] [--cold] [--timeout D] [--format F] [--history] [--allow-failures] [--no-save] [--results-db DB] [--compare-last]")
		fmt.Fprintln(fs.Output(), "\nMeasures kernels on server engines, one cell at a time, each in a worker process.")
		fmt.Fprintln(fs.Output(), "Exit status: 0 when every cell ran, 1 when a cell failed (see --allow-failures), 2 for bad flags.")
		fs.PrintDefaults()
		writeBenchNames(fs.Output())
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wasmgap bench: unexpected arguments %q (kernels are chosen with --kernel)\n", fs.Args())
		return 2
	}
	if !slices.Contains(report.Formats(), *format) {
		fmt.Fprintf(stderr, "wasmgap bench: unknown format %q: valid formats are %s\n", *format, strings.Join(report.Formats(), ", "))
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "wasmgap bench: --timeout %v: give a positive duration such as 30s or 2m\n", *timeout)
		return 2
	}

	if *minSample < 0 || *minSample > measure.MaxMinSample {
		fmt.Fprintf(stderr, "wasmgap bench: --min-sample %v is out of range: allowed 0 (one call per sample) to %v\n", *minSample, measure.MaxMinSample)
		return 2
	}
	if *warmupTime < 0 || *warmupTime > measure.MaxWarmupTime {
		fmt.Fprintf(stderr, "wasmgap bench: --warmup-time %v is out of range: allowed 0 (the --warmup calls only) to %v\n", *warmupTime, measure.MaxWarmupTime)
		return 2
	}
	opts := measure.Options{Runs: *runs, Warmup: *warmup, WarmupTime: *warmupTime, MinSample: *minSample, Cold: *cold}
	if *minSample == 0 {
		opts.MinSample = -1 // one call per sample
	}
	if *warmupTime == 0 {
		opts.WarmupTime = -1 // the warm-up calls only
	}
	plan := runner.Plan{Engines: engineNames, Kernels: kernelNames, Args: named, Options: opts, Timeout: *timeout}
	jobs, err := plan.Jobs()
	if err != nil {
		var fe *runner.FieldError
		if errors.As(err, &fe) && (fe.Field == "runs" || fe.Field == "warmup") {
			fmt.Fprintf(stderr, "wasmgap bench: --%s: %v\n", fe.Field, err)
			return 2
		}
		fmt.Fprintln(stderr, "wasmgap bench:", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	progress := newProgressLine(stderr)
	rep := report.Report{
		Method: report.Method{
			Runs: *runs, Warmup: *warmup, WarmupTime: *warmupTime, Timeout: *timeout, MinSample: *minSample, Cold: *cold, Timing: report.DefaultTiming,
		},
		Environment: report.CurrentEnvironment(),
		// The engines asked for by name keep their columns, those that run none of the
		// kernels asked for included (host_call alone on native: n/a).
		Engines: []string(engineNames),
	}
	for i, job := range jobs {
		progress.start(fmt.Sprintf("[%d/%d] %s on %s", i+1, len(jobs), job.Label(), job.Engine()))
		res, err := runner.Run(ctx, job, runner.Options{OnProgress: func(p runner.Progress) {
			progress.phase(fmt.Sprintf("%s %d/%d", p.Phase, p.Done, p.Total))
		}})
		if err != nil {
			progress.clear()
			fmt.Fprintln(stderr, "wasmgap bench:", err)
			return 1
		}
		rep.Results = append(rep.Results, res)
	}
	progress.clear()
	rep.Environment = rep.Environment.WithRuntimes(rep.Results)
	if *withHistory {
		var names []string
		for _, j := range jobs {
			if !slices.Contains(names, j.Kernel().Name) {
				names = append(names, j.Kernel().Name)
			}
		}
		rep.History = history.ForKernels(names...)
	}
	if err := report.WriteWidth(stdout, *format, rep, terminalWidth(stdout)); err != nil {
		fmt.Fprintln(stderr, "wasmgap bench: write report:", err)
		return 1
	}
	if code := stored.after(rep, *format, stdout, stderr); code != 0 {
		return code
	}
	if failed := countFailed(rep.Results); failed > 0 && !*allowFailures {
		fmt.Fprintf(stderr, "wasmgap bench: %d of %d cells failed (the table says why); --allow-failures exits 0 anyway\n", failed, len(rep.Results))
		return 1
	}
	return 0
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
	fmt.Fprintln(w, "\nengines (--engine; default: all of them):")
	fmt.Fprintf(w, "  %s\n", strings.Join(engine.Names(), ", "))
}

// progressLine rewrites one status line on a terminal, once a second and at every phase,
// and prints nothing otherwise.
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
