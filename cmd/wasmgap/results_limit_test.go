package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command line args and returns its stdout, stderr and exit status.
func runCLI(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// Past --results-max-bytes, bench prints its report, refuses to store it with a clear
// error (exit 1) and stores nothing; a negative limit is refused.
func TestBenchStoreFull(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	bench := []string{"bench", "--engine", "native", "--kernel", "fib_it", "--arg", "n=30", "--runs", "2", "--warmup", "0", "--warmup-time", "0", "--min-sample", "1ms", "--results-db", db}
	call := runCLI
	out, errOut, code := call(append(bench, "--results-max-bytes", "1000")...)
	if code != 1 || !strings.Contains(out, "fib_it") || !strings.Contains(errOut, "the results store is full") ||
		!strings.Contains(errOut, "was not stored") || !strings.Contains(errOut, "--results-max-bytes") || strings.Contains(errOut, "stored as run") {
		t.Errorf("bench past the limit: exit %d, stdout %q, stderr %q; want the report, then the refusal", code, out, errOut)
	}
	out, errOut, code = call("results", "list", "--results-db", db)
	if code != 0 || strings.Contains(out, "fib_it") {
		t.Errorf("after the refusal: exit %d, list %q %q, want no run", code, out, errOut)
	}
	_, errOut, code = call(append(bench, "--results-max-bytes", "-1")...)
	if code == 0 || !strings.Contains(errOut, "--results-max-bytes -1: allowed 0") {
		t.Errorf("a negative limit: exit %d, stderr %q", code, errOut)
	}
}

// An engine or a kernel named twice is measured and stored once: a stored run holds each
// cell once.
func TestBenchNamedTwice(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	_, stderr, code := runCLI("bench", "--engine", "native,native", "--kernel", "fib_it", "--kernel", "fib_it", "--arg", "n=30", "--runs", "2",
		"--warmup", "0", "--warmup-time", "0", "--min-sample", "1ms", "--results-db", db)
	if code != 0 || !strings.Contains(stderr, "stored as run 1") {
		t.Errorf("bench with native and fib_it twice: exit %d, stderr %q", code, stderr)
	}
}
