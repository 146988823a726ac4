package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/report"
)

// TestBenchStoresAndComparesLast runs bench twice into a store of the test's own: the
// first run is stored, the second compared with it, and both are then listed, shown,
// exported as compare's JSON, compared and deleted.
func TestBenchStoresAndComparesLast(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	bench := []string{"bench", "--engine", "native", "--kernel", "fib_it", "--arg", "n=30", "--runs", "4", "--warmup", "0", "--warmup-time", "0", "--min-sample", "1ms", "--results-db", db}
	call := runCLI

	out, errOut, code := call(append(bench, "--compare-last")...)
	if code != 0 || !strings.Contains(errOut, "no earlier run of these cells on this machine") || !strings.Contains(errOut, "stored as run 1") {
		t.Fatalf("first run: exit %d, stderr %q", code, errOut)
	}
	out, errOut, code = call(append(bench, "--compare-last")...)
	if code != 0 || !strings.Contains(out, "Change per cell: run 1 (") || !strings.Contains(out, "→ this run") || !strings.Contains(errOut, "stored as run 2") {
		t.Fatalf("second run: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// --no-save stores nothing; a JSON report stays whole on stdout, the comparison on stderr.
	out, errOut, code = call(append(bench, "--no-save", "--compare-last", "--format", "json")...)
	if code != 0 || strings.Contains(errOut, "stored as") || !strings.Contains(errOut, "Change per cell: run 2") {
		t.Fatalf("--no-save: exit %d, stderr %q", code, errOut)
	}
	if _, err := report.Read(strings.NewReader(out)); err != nil {
		t.Errorf("--format json with --compare-last: stdout is no report: %v", err)
	}

	out, errOut, code = call("results", "list", "--results-db", db, "--kernel", "fib_it", "--args", "30")
	if code != 0 || !strings.Contains(out, "fib_it(30) on native") || strings.Count(out, "\n") != 3 {
		t.Errorf("list: exit %d, %q %q", code, out, errOut)
	}
	out, _, _ = call("results", "list", "--results-db", db, "--kernel", "ack")
	if strings.Contains(out, "fib_it") {
		t.Errorf("list --kernel ack: %q", out)
	}
	var list []map[string]any
	out, _, _ = call("results", "list", "--results-db", db, "--format", "json", "--limit", "1")
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0]["id"] != 2.0 {
		t.Errorf("list json --limit 1: %v %q", err, out)
	}
	out, _, code = call("results", "show", "--results-db", db, "1")
	if code != 0 || !strings.Contains(out, "run 1, stored") || !strings.Contains(out, "measured by cli") || !strings.Contains(out, "fib_it(30)") {
		t.Errorf("show: %d %q", code, out)
	}

	// export writes what compare reads.
	dir := t.TempDir()
	for _, id := range []string{"1", "2"} {
		out, errOut, code = call("results", "export", "--results-db", db, id)
		if code != 0 {
			t.Fatalf("export %s: %s", id, errOut)
		}
		if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code = call("compare", filepath.Join(dir, "1.json"), filepath.Join(dir, "2.json"))
	if code != 0 || !strings.Contains(out, "fib_it(30)") {
		t.Errorf("compare of exports: %d %q %q", code, out, errOut)
	}
	out, _, code = call("results", "compare", "--results-db", db, "1", "2")
	if code != 0 || !strings.Contains(out, "Change per cell: run 1") || !strings.Contains(out, "run 2 (") {
		t.Errorf("results compare: %d %q", code, out)
	}

	out, _, code = call("results", "delete", "--results-db", db, "1")
	if code != 0 || out != "deleted 1 run(s)\n" {
		t.Errorf("delete: %d %q", code, out)
	}
	_, errOut, code = call("results", "show", "--results-db", db, "1")
	if code == 0 || !strings.Contains(errOut, "run 1: no such run") {
		t.Errorf("show of a deleted run: %d %q", code, errOut)
	}
}

func TestResultsRejectsBadInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	missing := filepath.Join(t.TempDir(), "none.db")
	// A store with one run to name.
	var o, e bytes.Buffer
	if code := run([]string{"bench", "--engine", "native", "--kernel", "fib_it", "--arg", "n=10", "--runs", "2", "--warmup", "0", "--warmup-time", "0", "--results-db", db}, &o, &e); code != 0 {
		t.Fatal(e.String())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"results"}, "usage: wasmgap results"},
		{[]string{"results", "drop"}, `unknown command "drop"`},
		{[]string{"results", "show", "--results-db", db}, "give 1 run id(s) (0 given)"},
		{[]string{"results", "show", "--results-db", db, "x"}, `"x" is not a run id`},
		{[]string{"results", "show", "--results-db", db, "99"}, "run 99: no such run"},
		{[]string{"results", "compare", "--results-db", db, "1"}, "give 2 run id(s) (1 given)"},
		{[]string{"results", "compare", "--results-db", db, "--alpha", "2", "1", "1"}, "--alpha 2 is out of range"},
		{[]string{"results", "list", "--results-db", missing}, "no results store at"},
		{[]string{"results", "list", "--results-db", db, "--source", "phone"}, `--source "phone": runs come from cli, server or browser`},
		{[]string{"results", "list", "--results-db", db, "--args", "30"}, "--args needs --kernel"},
		{[]string{"results", "list", "--results-db", db, "--since", "yesterday"}, `--since "yesterday": give a date`},
		{[]string{"results", "list", "--results-db", db, "--limit", "0"}, "--limit 0"},
		{[]string{"results", "delete", "--results-db", db}, "no run selected"},
		{[]string{"results", "list"}, "no results store under go test"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// TestBenchStoresNothingByDefaultUnderTest: a bench without --results-db inside go test
// writes no store into the data folder.
func TestBenchStoresNothingByDefaultUnderTest(t *testing.T) {
	t.Setenv(resultsDBEnv, "")
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := run([]string{"bench", "--engine", "native", "--kernel", "fib_it", "--arg", "n=10", "--runs", "2", "--warmup", "0", "--warmup-time", "0"}, &stdout, &stderr); code != 0 {
		t.Fatal(stderr.String())
	}
	if _, err := os.Stat("data"); !os.IsNotExist(err) || strings.Contains(stderr.String(), "stored as") {
		t.Errorf("bench under go test stored a run by default: %v, %q", err, stderr.String())
	}
}
