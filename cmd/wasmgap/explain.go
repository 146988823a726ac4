package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/internal/runner"
	"github.com/wasmgap/wasmgap/kernels"
)

// runExplain prints, for one kernel call, each engine's code of the kernel's hot
// function after the harness's warm-up (package explain).
func runExplain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wasmgap explain", flag.ContinueOnError)
	var engineNames listFlag
	named := argFlag{}
	kernel := fs.String("kernel", "fib_rec", "the kernel to explain")
	fs.Var(named, "arg", "a kernel parameter as name=value (repeatable; default: the articles' sizes)")
	fs.Var(&engineNames, "engine", "an engine to explain, or several separated by commas (repeatable; default: all of "+strings.Join(explain.Engines(), ", ")+")")
	format := fs.String("format", "text", "output format: text or json")
	profile := fs.Bool("profile", false, "sample a timed run of each engine with perf record -e cpu-clock and show where the samples fell")
	warmup := fs.Duration("warmup-time", 0, "how long a JIT runs the kernel before its code is read (0: the harness's warm-up, 500ms; at most 10s)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmgap explain [--kernel K] [--arg name=value]... [--engine E[,E]...] [--format text|json] [--profile] [--warmup-time D]")
		fmt.Fprintln(fs.Output(), "\nPrints each engine's code of the kernel's hot function, as that tier runs it after the warm-up:")
		fmt.Fprintln(fs.Output(), "machine code decoded by one disassembler (golang.org/x/arch), with its size, instruction count,")
		fmt.Fprintln(fs.Output(), "calls (the recursive ones marked) and loops' back edges. An engine that cannot be explained here")
		fmt.Fprintln(fs.Output(), "is named with the reason. Exit status: 0 when every engine was explained, 1 when one was refused,")
		fmt.Fprintln(fs.Output(), "2 for bad flags.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wasmgap explain: unexpected arguments %q (the kernel is chosen with --kernel)\n", fs.Args())
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "wasmgap explain: --format %q is not allowed: text or json\n", *format)
		return 2
	}
	if *warmup < 0 || *warmup > 10*time.Second {
		fmt.Fprintf(stderr, "wasmgap explain: --warmup-time %s is out of range: 0 to 10s\n", *warmup)
		return 2
	}
	k, err := kernels.Lookup(*kernel)
	if err != nil {
		fmt.Fprintf(stderr, "wasmgap explain: %v\n", err)
		return 2
	}
	ints, err := runner.ParseArgs(named)
	if err != nil {
		fmt.Fprintf(stderr, "wasmgap explain: --arg: %v\n", err)
		return 2
	}
	kargs, err := k.Args(ints)
	if err != nil {
		fmt.Fprintf(stderr, "wasmgap explain: %v\n", err)
		return 2
	}
	names := []string(engineNames)
	if len(names) == 0 {
		names = explain.Engines()
	}
	if err := explain.CheckEngines(names); err != nil {
		fmt.Fprintf(stderr, "wasmgap explain: %v\n", err)
		return 2
	}
	// No signal handling: an interrupt ends the process, and with it a kernel running in
	// it (native, wazero), which nothing else could stop; drivers die with it.
	rep, err := explain.Explain(context.Background(), k, kargs, names, explain.Options{WarmupTime: *warmup, Profile: *profile})
	if err != nil {
		fmt.Fprintf(stderr, "wasmgap explain: %v\n", err)
		return 2
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "wasmgap explain: %v\n", err)
			return 1
		}
	} else {
		explain.WriteText(stdout, rep)
	}
	for _, e := range rep.Engines {
		if e.Refused != "" {
			return 1
		}
	}
	return 0
}
