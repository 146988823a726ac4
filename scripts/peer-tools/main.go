// Command peer-tools builds the pinned Go programs that the benchmarks measure wasmgap
// against — vegeta (beside `wasmgap load`) and Centrifugo (beside `wasmgap chat`) — into the
// tools' cache (internal/gotool), and prints where each one is. The benchmarks build them at
// first use anyway; this command does it ahead, for CI and for the tests that run against a
// real Centrifugo.
//
// Usage: go run ./scripts/peer-tools [vegeta] [centrifugo]   (no argument: both)
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/wasmgap/wasmgap/internal/gotool"
)

var tools = map[string]gotool.Tool{"vegeta": gotool.Vegeta, "centrifugo": gotool.Centrifugo}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		args = []string{"vegeta", "centrifugo"}
	}
	for _, name := range args {
		t, ok := tools[name]
		if !ok {
			fmt.Fprintf(stderr, "peer-tools: unknown tool %q: allowed vegeta, centrifugo\n", name)
			return 2
		}
		path, err := t.Ensure(ctx, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "peer-tools: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s %s: %s\n", t.Name, t.Version, path)
	}
	return 0
}
