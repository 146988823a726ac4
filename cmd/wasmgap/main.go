// Command wasmgap runs the project's kernels on every engine, serves the
// playground page and the chat, and generates load.
//
// Usage:
//
//	wasmgap serve   [flags]   the playground page, its API and the chat under /chat/
//	wasmgap chat    [flags]   the chat alone, with the source article's routes at the root
//	wasmgap bench   [flags]   measure kernels on server engines and print a table
//	wasmgap compare a b       compare two runs of bench --format json, cell by cell
//	wasmgap results list|show|compare|export|delete   the stored runs
//	wasmgap load    [flags]   generate HTTP, SSE or WebSocket load
//	wasmgap version           print version information
//
// Each subcommand has its own flags; `wasmgap <command> -h` lists them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/wasmgap/wasmgap/runner"
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
	"results": {"list, show, compare, export or delete the stored runs", runResults},
	"load":    {"generate HTTP, SSE or WebSocket load against a server", runLoad},
	"version": {"print version information", runVersion},
}

func main() {
	// A measurement runs in a worker: this same binary, started by package runner.
	runner.ServeWorkerIfRequested()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
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
	fmt.Fprintln(w, "\nRun 'wasmgap <command> -h' for the flags of one command.")
}

// parseFlags parses a subcommand's args into fs. When parsing ends the command (help was
// asked for, or a flag was bad, which fs has already reported on stderr), ok is false and
// code is the exit status: 0 for help, 2 for a bad flag.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}
