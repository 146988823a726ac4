// Command farm-demo runs a bench farm on this one machine, to try `wasmgap agent` and
// `wasmgap bench --farm` (docs/FARM.md): an embedded NATS server with JetStream on
// loopback that admits only holders of its nkeys, PostgreSQL as the shared results
// store where it is installed (else an SQLite file), two agents, and a plan run with
// --each, which prints a table per agent and the two side by side.
//
//	go run ./scripts/farm-demo -wasmgap bin/wasmgap
//
// Everything it starts lives in a temporary folder and stops with it. The two agents
// share one machine, so their timings spoil each other's: the demo shows the farm, not
// a measurement.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/wasmgap/wasmgap/internal/childproc"
	"github.com/wasmgap/wasmgap/internal/farm/farmtest"
	"github.com/wasmgap/wasmgap/internal/results/pgtest"
)

func main() {
	wasmgap := flag.String("wasmgap", "bin/wasmgap", "the wasmgap binary")
	mode := flag.String("mode", "each", "how the agents share the plan: each (a table per agent) or split")
	flag.Parse()
	if *mode != "each" && *mode != "split" {
		fmt.Fprintf(os.Stderr, "farm-demo: -mode %q: use each or split\n", *mode)
		os.Exit(2)
	}
	if err := demo(*wasmgap, *mode, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "farm-demo:", err)
		os.Exit(1)
	}
}

func demo(wasmgap, mode string, benchArgs []string) error {
	dir, err := os.MkdirTemp("", "farm-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// NATS: one nkey per client, the agents' with an agent's rights; a client without
	// one is refused.
	ns, err := farmtest.StartNATS(dir, farmtest.Bench, "demo-1", "demo-2")
	if err != nil {
		return err
	}
	defer ns.Shutdown()
	url, seeds := ns.URL, ns.Seeds
	fmt.Fprintf(os.Stderr, "farm-demo: NATS with JetStream at %s, nkeys in %s\n", url, dir)

	var dsn string
	switch pg, err := pgtest.Start(); {
	case errors.Is(err, pgtest.ErrNotInstalled):
		dsn = filepath.Join(dir, "results.db")
		fmt.Fprintf(os.Stderr, "farm-demo: %v: results in %s (SQLite)\n", err, dsn)
	case err != nil:
		return err
	default:
		defer pg.Stop()
		dsn = pg.DSN("postgres")
		fmt.Fprintf(os.Stderr, "farm-demo: results in PostgreSQL at %s\n", dsn)
	}

	for _, name := range []string{"demo-1", "demo-2"} {
		cmd := exec.Command(wasmgap, "agent", "--nats", url, "--nkey", seeds[name], "--name", name, "--engine", "native,wazero-compiler")
		cmd.Stderr = prefixed{name}
		if err := childproc.Start(cmd); err != nil {
			return fmt.Errorf("start agent %s: %w", name, err)
		}
		defer func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}()
	}
	args := []string{"bench", "--farm", url, "--nkey", seeds[farmtest.Bench], "--" + mode, "--agents", "2", "--ack-wait", "10s", "--results-db", dsn}
	if len(benchArgs) == 0 {
		benchArgs = []string{"--engine", "native,wazero-compiler", "--kernel", "fib_rec,fib_it,ack,test7", "--arg", "fib_rec.n=25", "--arg", "fib_it.n=40", "--arg", "ack.m=7", "--arg", "test7.large=100000", "--runs", "6", "--allow-failures"}
	}
	bench := exec.Command(wasmgap, append(args, benchArgs...)...)
	bench.Stdout, bench.Stderr = os.Stdout, os.Stderr
	fmt.Fprintf(os.Stderr, "farm-demo: %s %s\n", wasmgap, strings.Join(bench.Args[1:], " "))
	if err := childproc.Start(bench); err != nil {
		return err
	}
	if err := bench.Wait(); err != nil {
		return fmt.Errorf("bench --farm: %w", err)
	}
	return nil
}

// prefixed writes an agent's log lines to stderr after its name.
type prefixed struct{ name string }

func (p prefixed) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			fmt.Fprintf(os.Stderr, "  %s | %s", p.name, line)
		}
	}
	return len(b), nil
}
