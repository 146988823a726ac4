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
	"strings"

	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/internal/warmup"
)

// The output formats of wasmgap warmup.
const (
	warmupText = "table"
	warmupJSON = "json"
)

func runWarmup(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap warmup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var engineNames listFlag
	named := argFlag{}
	fs.Var(&engineNames, "engine", "an engine to run (repeatable, or a,b; default: "+strings.Join(runner.DefaultWarmupEngines, ",")+")")
	kernel := fs.String("kernel", runner.DefaultWarmupKernel, "the kernel to run")
	fs.Var(named, "arg", "a kernel parameter as name=value (repeatable; default: n=20 for fib_rec, the articles' sizes otherwise)")
	executions := fs.Int("executions", runner.DefaultWarmupExecutions, fmt.Sprintf("fresh processes per engine (1 to %d)", runner.MaxWarmupExecutions))
	calls := fs.Int("calls", warmup.DefaultSamples, fmt.Sprintf("samples per execution, each of --group calls (%d to %d)", warmup.MinSamples, warmup.MaxSamples))
	group := fs.Int("group", 1, fmt.Sprintf("calls per sample, timed together: for calls of a few nanoseconds, which a clock cannot time one by one (1 to %d)", warmup.MaxGroup))
	budget := fs.Duration("budget", warmup.DefaultBudget, fmt.Sprintf("time per execution after which the samples stop, even short of --calls (up to %v)", warmup.MaxBudget))
	timeout := fs.Duration("timeout", 0, "time limit per execution, the engine's start included (default: --budget + "+runner.DefaultTimeout.String()+")")
	format := fs.String("format", warmupText, "output format: "+warmupText+" or "+warmupJSON)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap warmup [--engine E]... [--kernel K] [--arg name=value]... [--executions N] [--calls N] [--group N] [--budget D] [--timeout D] [--format F]")
		fmt.Fprintln(fs.Output(), "\nTimes every call of a kernel from the first, in fresh processes, and finds where each engine")
		fmt.Fprintln(fs.Output(), "reaches its steady state (changepoints by PELT; flat, warm-up, slowdown or no steady state,")
		fmt.Fprintln(fs.Output(), "as in Barrett et al., OOPSLA 2017). Exit status: 0, or 1 when an execution failed, 2 for bad flags.")
		fs.PrintDefaults()
		writeBenchNames(fs.Output())
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wasmgap warmup: unexpected arguments %q (the kernel is chosen with --kernel)\n", fs.Args())
		return 2
	}
	if *format != warmupText && *format != warmupJSON {
		fmt.Fprintf(stderr, "wasmgap warmup: unknown format %q: valid formats are %s, %s\n", *format, warmupText, warmupJSON)
		return 2
	}
	if *timeout < 0 {
		fmt.Fprintf(stderr, "wasmgap warmup: --timeout %v: give a positive duration such as 60s, or 0 for the default\n", *timeout)
		return 2
	}
	if *kernel == runner.DefaultWarmupKernel && len(named) == 0 {
		named["n"] = 20
	}
	plan := runner.WarmupPlan{
		Engines: engineNames, Kernel: *kernel, Args: named, Executions: *executions,
		Collection: warmup.Collection{Samples: *calls, Group: *group, Budget: *budget}, Timeout: *timeout,
	}
	if *budget == 0 {
		fmt.Fprintln(stderr, "wasmgap warmup: --budget 0: give a positive duration such as 20s")
		return 2
	}
	if _, err := plan.Jobs(); err != nil {
		var fe *runner.FieldError
		if errors.As(err, &fe) {
			fmt.Fprintf(stderr, "wasmgap warmup: --%s: %v\n", warmupFlag(fe.Field), err)
			return 2
		}
		fmt.Fprintln(stderr, "wasmgap warmup:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	progress := newProgressLine(stderr)
	rep, err := plan.Run(ctx, func(engine string, i int) {
		progress.start(fmt.Sprintf("%s: execution %d/%d", engine, i+1, plan.Executions))
	})
	progress.clear()
	if err != nil {
		fmt.Fprintln(stderr, "wasmgap warmup:", err)
		return 1
	}
	if *format == warmupJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		err = enc.Encode(rep)
	} else {
		err = warmup.WriteText(stdout, rep)
	}
	if err != nil {
		fmt.Fprintln(stderr, "wasmgap warmup: write report:", err)
		return 1
	}
	failed := 0
	for _, e := range rep.Engines {
		for _, r := range e.Runs {
			if r.Failure != "" {
				failed++
			}
		}
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "wasmgap warmup: %d executions failed (the report says why)\n", failed)
		return 1
	}
	return 0
}

// warmupFlag names the flag of a plan's field.
func warmupFlag(field string) string {
	switch {
	case field == "collection":
		return "calls, --group or --budget"
	case strings.HasPrefix(field, "args"):
		return "arg"
	}
	return field
}
