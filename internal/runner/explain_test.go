package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/explain"
	"github.com/wasmgap/wasmgap/kernels"
)

// TestExplainInAWorker: an explanation comes back from a worker process (this test binary,
// through TestMain), and a worker past its time limit is a refusal that says so.
func TestExplainInAWorker(t *testing.T) {
	k, _ := kernels.Lookup("fib_rec")
	rep, err := Explain(context.Background(), k, []int{20}, explain.Source, explain.Options{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Engines) != 1 || rep.Engines[0].Refused != "" || len(rep.Engines[0].Listings) != 1 || rep.Engines[0].Listings[0].RecursiveCalls != 1 {
		t.Fatalf("the source of fib_rec(20): %+v", rep)
	}
	// A wasm-objdump that never answers: the worker is killed at its limit.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wasm-objdump"), []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	rep, err = Explain(context.Background(), k, []int{20}, explain.Wasm, explain.Options{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Engines[0].Refused; !strings.Contains(got, "timed out after 1s") {
		t.Errorf("a worker past its limit: refused %q, want the time limit named", got)
	}
}

// TestExplainChecksBeforeAWorker: a bad engine or arguments start no worker.
func TestExplainChecksBeforeAWorker(t *testing.T) {
	k, _ := kernels.Lookup("fib_rec")
	before := workersStarted.Load()
	if _, err := Explain(context.Background(), k, []int{20}, "nope", explain.Options{}, 0); err == nil {
		t.Error("an unknown engine: no error")
	}
	if _, err := Explain(context.Background(), k, []int{500}, explain.Source, explain.Options{}, 0); err == nil {
		t.Error("n = 500: no error")
	}
	if n := workersStarted.Load() - before; n != 0 {
		t.Errorf("%d workers started for bad requests", n)
	}
}
