// Command wasmgap runs the project's kernels on every engine, serves the
// playground page and the chat, and generates load.
//
// Usage:
//
//	wasmgap serve   [flags]   the playground page, its API and the chat under /chat/
//	wasmgap chat    [flags]   the chat alone, with the source article's routes at the root
//	wasmgap bench   [flags]   measure kernels on server engines and print a table (--all: every engine)
//	wasmgap agent   [flags]   run the cells of a bench farm on this machine (bench --farm)
//	wasmgap compare a b       compare two runs of bench --format json, cell by cell
//	wasmgap explain [flags]   each engine's code of a kernel's hot function
//	wasmgap results list|show|compare|export|delete|machines   the stored runs
//	wasmgap load    [flags]   generate HTTP, SSE or WebSocket load
//	wasmgap warmup  [flags]   time every call from the first, find each engine's steady state
//	wasmgap version           print version information (also wasmgap --version)
//
// Each subcommand has its own flags; `wasmgap <command> -h` (or `wasmgap help <command>`)
// lists them on stdout. Flags may follow positional arguments. A bad flag value is one
// line on stderr, prefixed with the command, and exit status 2.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/wasmgap/wasmgap/internal/runner"
)

// command is one subcommand: its one-line summary and its entry point.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands lists every subcommand; each lives in a file of its own name.
var commands = map[string]command{
	"serve":   {"serve the playground page, its API and the chat under /chat/", runServe},
	"chat":    {"serve the chat alone, with the source article's routes", runChat},
	"bench":   {"measure kernels on server engines and print a table", runBench},
	"compare": {"compare two runs of bench --format json, cell by cell", runCompare},
	"explain": {"show each engine's machine code of a kernel, and where its time goes", runExplain},
	"results": {"list, show, compare, export or delete the stored runs", runResults},
	"agent":   {"run the cells a bench farm publishes, one at a time, on this machine", runAgent},
	"load":    {"generate HTTP, SSE or WebSocket load against a server", runLoad},
	"version": {"print version information", runVersion},
	"warmup":  {"time every call from the first and find each engine's steady state", runWarmup},
}

func main() {
	// A measurement runs in a worker: this same binary, started by package runner.
	runner.ServeWorkerIfRequested()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "help":
		if len(args) > 1 {
			// `wasmgap help bench` is `wasmgap bench -h`.
			if cmd, ok := commands[args[1]]; ok {
				return cmd.run(append(args[2:len(args):len(args)], "-h"), stdout, stderr)
			}
			fmt.Fprintf(stderr, "wasmgap help: unknown command %q\n\n", args[1])
			usage(stderr)
			return 2
		}
		usage(stdout)
		return 0
	case "-h", "-help", "--help":
		usage(stdout)
		return 0
	case "-version", "--version":
		return runVersion(args[1:], stdout, stderr)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "wasmgap: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return cmd.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: wasmgap <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-8s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nRun 'wasmgap <command> -h' or 'wasmgap help <command>' for the flags of one command.")
}

// parseFlags parses a subcommand's args into fs, whose name is the command ("wasmgap
// bench"). Flags may come before, between or after the positional arguments (`compare
// a.json b.json --format markdown`); after "--" every argument is positional. When
// parsing ends the command, ok is false and code is the exit status: help (-h, --help)
// prints fs.Usage on stdout and gives 0; a bad flag or flag value prints one line on
// stderr, prefixed with the command, and gives 2. fs writes to stderr afterwards.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	// The flag package prints the whole usage after an error: it goes nowhere, the
	// error alone is said.
	fs.SetOutput(io.Discard)
	err := parseInterspersed(fs, args)
	fs.SetOutput(stderr)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		fs.SetOutput(stderr)
		return 0, false
	default:
		fmt.Fprintf(stderr, "%s: %v (%s -h lists the flags)\n", fs.Name(), err, fs.Name())
		return 2, false
	}
}

// exitf says why a command stops, one line on stderr (format as fmt.Printf's, its newline
// added), and returns the exit status to stop with: 2 for bad flags, 1 for a failure.
func exitf(stderr io.Writer, code int, format string, a ...any) int {
	fmt.Fprintf(stderr, format+"\n", a...)
	return code
}

// parseInterspersed is fs.Parse for flags among the positional arguments: the flag
// package stops at the first positional one, so parsing resumes after each, and the
// positional ones are handed back to fs (fs.Args) once all flags are read.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			positional = append(positional, rest...) // after "--": no more flags
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}
