package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

// runExplain prints, for one kernel call, each engine's code of the kernel's hot
// function after the harness's warm-up (package explain), each engine explained in a
// worker process of its own (runner.Explain) and printed as it comes.
func runExplain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap explain", flag.ContinueOnError)
	var engineNames listFlag
	named := argFlag{}
	b := runner.Bounds
	kernel := fs.String("kernel", "fib_rec", "the kernel to explain")
	fs.Var(named, "arg", "a kernel parameter as name=value (repeatable; default: the articles' sizes)")
	fs.Var(&engineNames, "engine", "an engine to explain, or several separated by commas (repeatable), or all: "+strings.Join(explain.Engines(), ", ")+
		" (default: native, wazero-compiler, wazero-interpreter and the first JIT installed here)")
	format := fs.String("format", "text", "output format: text or json")
	profile := fs.Bool("profile", false, "sample a timed run of each engine with perf record -e cpu-clock and show where the samples fell")
	warmup := fs.Duration(b.ExplainWarmup.Flag, time.Duration(b.ExplainWarmup.Default), "how long a JIT runs the kernel before its code is read ("+b.ExplainWarmup.Range()+")")
	profileTime := fs.Duration(b.ExplainProfile.Flag, time.Duration(b.ExplainProfile.Default), "how long the profiled run lasts, with --profile ("+b.ExplainProfile.Range()+")")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap explain [--kernel K] [--arg name=value]... [--engine E[,E]... | --engine all] [--format text|json] [--profile] [--warmup-time D] [--profile-time D]")
		fmt.Fprintln(fs.Output(), "\nPrints each engine's code of the kernel's hot function, as that tier runs it after the warm-up:")
		fmt.Fprintln(fs.Output(), "machine code decoded by one disassembler (golang.org/x/arch), with its size, instruction count,")
		fmt.Fprintln(fs.Output(), "calls (the recursive ones marked) and loops' back edges, then a summary of every tier in words.")
		fmt.Fprintln(fs.Output(), "Each engine is explained in a worker process of its own, and said on stderr as it is done. An")
		fmt.Fprintln(fs.Output(), "engine that cannot be explained here is named with the reason. Exit status: 0 when every engine")
		fmt.Fprintln(fs.Output(), "was explained, 1 when one was refused, 2 for bad flags.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "wasmgap explain: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments %q (the kernel is chosen with --kernel)", fs.Args())
	}
	if *format != "text" && *format != "json" {
		return fail("--format %q is not allowed: text or json", *format)
	}
	opts := explain.Options{Profile: *profile, WarmupTime: *warmup, ProfileTime: *profileTime}
	for _, c := range []struct {
		s runner.Setting
		v time.Duration
	}{{b.ExplainWarmup, *warmup}, {b.ExplainProfile, *profileTime}} {
		if err := c.s.Check(int64(c.v)); err != nil {
			return fail("--%s: %v", c.s.Flag, err)
		}
	}
	if opts.WarmupTime == 0 {
		opts.WarmupTime = -1 // none: the first call only
	}
	k, err := kernels.Lookup(*kernel)
	if err != nil {
		return fail("%v", err)
	}
	ints, err := runner.ParseArgs(named)
	if err != nil {
		return fail("--arg: %v", err)
	}
	kargs, err := k.Args(ints)
	if err != nil {
		return fail("%v", err)
	}
	names := []string(engineNames)
	switch {
	case len(names) == 0:
		names = defaultExplained()
	case slices.Equal(names, []string{"all"}):
		names = explain.Engines()
	}
	if err := explain.CheckEngines(names); err != nil {
		return fail("%v", err)
	}
	rep := &explain.Report{Kernel: k.Name, Args: kargs, Label: k.Label(kargs), Arch: runtime.GOARCH}
	fmt.Fprintf(stderr, "explaining %s on %s, one worker each, at most %v each (a JIT runs the kernel for its warm-up, %v, before its code is read)\n",
		rep.Label, strings.Join(names, ", "), runner.ExplainTimeout(0, opts), max(opts.WarmupTime, 0))
	if *format == "text" {
		explain.WriteHeader(stdout, rep)
	}
	// No signal handling: an interrupt ends this process, and its workers die with it.
	refused := false
	for _, name := range names {
		one, err := runner.Explain(context.Background(), k, kargs, name, opts, 0)
		if err != nil {
			return fail("%v", err)
		}
		e := one.Engines[0]
		rep.Engines = append(rep.Engines, e)
		refused = refused || e.Refused != ""
		fmt.Fprintf(stderr, "  %s: %s (%.1fs)\n", name, explainedLine(e), e.Took.Seconds())
		if *format == "text" {
			explain.WriteEngine(stdout, e)
		}
	}
	if *format == "json" {
		rep.Summary = explain.Summarize(rep)
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return exitf(stderr, 1, "wasmgap explain: %v", err)
		}
	} else {
		explain.WriteSummary(stdout, rep)
	}
	if refused {
		return 1
	}
	return 0
}

// explainedLine says in a few words how an engine's explanation went.
func explainedLine(e explain.Explanation) string {
	if e.Refused != "" {
		line, _, _ := strings.Cut(e.Refused, "\n")
		return "not explained: " + line
	}
	var parts []string
	for _, l := range e.Listings {
		parts = append(parts, fmt.Sprintf("%s, %d instructions", l.Tier, l.Instructions))
	}
	return strings.Join(parts, "; ")
}

// defaultExplained is what a bare `wasmgap explain` explains: the baseline, wazero's
// compiler and interpreter, and the first JIT (engine.TierJIT) whose runtime this machine
// has, in explain's order.
func defaultExplained() []string {
	names := []string{engine.Native, engine.WazeroCompiler, engine.WazeroInterpreter}
	for _, n := range explain.Engines() {
		if info, ok := engine.Lookup(n); ok && info.Tier == engine.TierJIT && info.Probe != nil && info.Probe() != "" {
			return append(names, n)
		}
	}
	return names
}
