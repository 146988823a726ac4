package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/runner"
)

// TestMain lets this test binary serve as the workers that bench starts.
func TestMain(m *testing.M) {
	runner.ServeWorkerIfRequested()
	os.Exit(m.Run())
}

func TestBenchRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "v8"}, `unknown engine "v8": valid engines are ` + strings.Join(engine.Names(), ", ")},
		{[]string{"--kernel", "fib"}, `unknown kernel "fib": valid kernels are fib_it, fib_rec, ack_while, ack, test1`},
		{[]string{"--kernel", "ack", "--arg", "m=21"}, "ack: m = 21 is out of range: allowed 0 to 20"},
		{[]string{"--kernel", "ack", "--arg", "x=1"}, `no selected kernel has a parameter "x": the parameters are m (0 to 20) for ack; n (0 to 3) for ack`},
		{[]string{"--arg", "n"}, `"n" is not name=value`},
		{[]string{"--arg", "n=ten"}, "--arg n=ten: the value must be an integer"},
		{[]string{"--format", "xml"}, `unknown format "xml": valid formats are table, markdown, json, csv, gobench`},
		{[]string{"--runs", "0"}, "--runs: timed runs = 0 is out of range: allowed 1 to 100"},
		{[]string{"--runs", "0", "--warmup", "0"}, "--runs: timed runs = 0 is out of range: allowed 1 to 100"},
		{[]string{"--executions", "0"}, "--executions: worker processes per cell = 0 is out of range: allowed 1 to 20"},
		{[]string{"--warmup", "-1"}, "--warmup: warm-up runs = -1 is out of range: allowed 0 (no warm-up) to 100"},
		{[]string{"--timeout", "0s"}, "--timeout: time limit per execution = 0s is out of range: allowed 1s to 1h0m0s"},
		{[]string{"--min-sample", "1m"}, "--min-sample: minimum sample time = 1m0s is out of range: allowed 0 (one call per sample) to 1s"},
		{[]string{"--min-sample", "-1ms"}, "--min-sample: minimum sample time = -1ms is out of range"},
		{[]string{"--warmup-time", "11s"}, "--warmup-time: minimum warm-up time = 11s is out of range: allowed 0 (the warm-up runs only) to 10s"},
		{[]string{"--warmup-time", "-1ms"}, "--warmup-time: minimum warm-up time = -1ms is out of range"},
		{[]string{"fib_rec"}, "unexpected arguments"},
		{[]string{"--all", "--engine", "native"}, "give --all or --engine, not both"},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"bench"}, c.args...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) || stdout.Len() != 0 {
			t.Errorf("bench %v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}

func TestBenchJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"bench", "--engine", "native", "--kernel", "fib_it", "--kernel", "ack", "--arg", "ack.m=3", "--runs", "2", "--warmup", "0", "--format", "json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep report.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout.String())
	}
	if len(rep.Results) != 2 || rep.Method.Runs != 2 || rep.Method.Warmup != 0 || rep.Environment.Go == "" {
		t.Fatalf("report = %+v", rep)
	}
	for _, r := range rep.Results {
		if r.Failed() || r.Value != r.Expected || len(r.Samples) != 2 || r.Warmup != 0 {
			t.Errorf("%s: %+v", r.Label(), r)
		}
	}
	// fib_it(40) is shorter than a sample: its samples repeat it k times, k grown until a
	// sample lasts the minimum (half of it at least, whatever this machine's speed); the
	// method says how long a sample lasts.
	// Its two runs were two executions, a worker process each.
	if fib := rep.Results[0]; len(fib.Executions) != 2 || rep.Method.Executions != runner.DefaultExecutions || rep.Method.MinSample != 10*time.Millisecond {
		t.Errorf("fib_it(40): executions %+v; method %+v", fib.Executions, rep.Method)
	} else {
		for _, e := range fib.Executions {
			if e.Calls <= 1 || e.Median <= 0 || float64(e.Calls)*e.Median < float64(rep.Method.MinSample/2) || e.Runs != 1 {
				t.Errorf("fib_it(40): an execution of k = %d, median %.1f ns per call, %d runs", e.Calls, e.Median, e.Runs)
			}
		}
	}
	// --warmup 0 is no warm-up, whatever --warmup-time says.
	if fib := rep.Results[0]; fib.WarmedUp != 0 {
		t.Errorf("fib_it(40) warmed up %v with --warmup 0", fib.WarmedUp)
	}
	if got := rep.Results[1].Label(); got != "ack(3, 3)" {
		t.Errorf("second cell %s, want ack(3, 3)", got)
	}
	// Off a terminal: the forecast, then one line per finished cell.
	said := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(said) != 3 || !strings.HasPrefix(said[0], "wasmgap bench: 2 cells (2 kernels on native), ") ||
		!strings.HasPrefix(said[1], "[1/2] fib_it(40) on native: ") || !strings.HasPrefix(said[2], "[2/2] ack(3, 3) on native: ") {
		t.Errorf("stderr off a terminal: %q; want the forecast and a line per cell", said)
	}
}

// A failing cell is a result: the table shows it, and bench exits 1 after it (a script or
// a CI job can tell), or 0 with --allow-failures.
func TestBenchFailureIsAResult(t *testing.T) {
	for _, c := range []struct {
		allow []string
		code  int
	}{{nil, 1}, {[]string{"--allow-failures"}, 0}} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"bench", "--engine", "native", "--kernel", "fib_rec", "--arg", "n=60", "--timeout", "1s", "--history"}, c.allow...)
		if code := run(args, &stdout, &stderr); code != c.code {
			t.Fatalf("%v: exit %d, want %d: %s", c.allow, code, c.code, stderr.String())
		}
		for _, want := range []string{"fib_rec(60)", "timed out after 1s", "environment: ", "historical: fib(40)"} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("table lacks %q:\n%s", want, stdout.String())
			}
		}
		if said := stderr.String(); c.code == 1 && !strings.Contains(said, "wasmgap bench: 1 of 1 cells failed") {
			t.Errorf("stderr %q does not say a cell failed", said)
		}
	}
}

// A bench stopped by SIGINT or SIGTERM ends the cell in flight, prints the table of the
// cells done, stores them as a partial run, and exits 128 + the signal's number.
func TestBenchInterrupted(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "results.db")
			// fib_it(30) is done at once; fib_rec(60) outlasts any test, and is stopped.
			cmd, stdout, stderr := startWasmgap(t, "bench --engine native --kernel fib_it,fib_rec --arg fib_it.n=30 --arg fib_rec.n=60 --runs 2 --warmup 0 --min-sample 1ms --timeout 10m --results-db "+db)
			lines := bufio.NewScanner(stderr)
			var said []string
			for lines.Scan() {
				said = append(said, lines.Text())
				if strings.HasPrefix(lines.Text(), "[1/2] fib_it(30) on native: ") {
					break
				}
			}
			if len(said) < 2 || !strings.HasPrefix(said[0], "wasmgap bench: 2 cells (2 kernels on native)") {
				t.Fatalf("stderr before the first cell's end: %q; want the forecast, then a line per cell", said)
			}
			cmd.Process.Signal(c.sig)
			for lines.Scan() {
				said = append(said, lines.Text())
			}
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != c.code {
				t.Fatalf("exit %v, want status %d; stderr %q", err, c.code, said)
			}
			out := stdout.String()
			if !strings.Contains(out, "fib_it(30)") || strings.Contains(out, "fib_rec(60)") || !strings.Contains(out, "stopped by "+c.name) {
				t.Errorf("stdout lacks the partial table:\n%s", out)
			}
			if all := strings.Join(said, "\n"); !strings.Contains(all, "stored as partial run 1") {
				t.Errorf("stderr does not say the partial run was stored: %q", all)
			}
			var list bytes.Buffer
			if code := run([]string{"results", "list", "--results-db", db}, &list, io.Discard); code != 0 || !strings.Contains(list.String(), "partial (stopped by "+c.name) || !strings.Contains(list.String(), "fib_it(30) on native") {
				t.Errorf("results list: exit %d:\n%s", code, list.String())
			}
			list.Reset()
			run([]string{"results", "list", "--format", "csv", "--results-db", db}, &list, io.Discard)
			recs, err := csv.NewReader(&list).ReadAll()
			if err != nil || len(recs) != 2 || recs[0][8] != "partial" || !strings.HasPrefix(recs[1][8], "stopped by "+c.name) || !strings.HasSuffix(recs[1][8], " after 1 of 2 cells") {
				t.Errorf("results list --format csv: %v, %q", err, recs)
			}
		})
	}
}

// startWasmgap runs `wasmgap <args>` as a child process (this test binary, through
// TestChatHelperProcess), its stdout collected, its stderr a pipe; it is killed when the
// test ends.
func startWasmgap(t *testing.T, args string) (*exec.Cmd, *bytes.Buffer, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChatHelperProcess$")
	cmd.Env = append(os.Environ(), "WASMGAP_CHAT_HELPER="+args)
	stdout := &bytes.Buffer{}
	cmd.Stdout = stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, stdout, stderr
}
