package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/warmup"
)

func TestWarmupRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "xml"}, `unknown format "xml"`},
		{[]string{"--executions", "99"}, "--executions: fresh processes per engine = 99 is out of range: allowed 1 to 20"},
		{[]string{"--calls", "3"}, "--calls: samples per execution = 3 is out of range: allowed 10 to 10000"},
		{[]string{"--engine", "nope"}, `unknown engine "nope"`},
		{[]string{"--arg", "n=500"}, "--arg:"},
		{[]string{"--budget", "6m"}, "--budget: time per execution after which the samples stop = 6m0s is out of range"},
		{[]string{"--timeout", "0s"}, "--timeout: time limit per execution = 0s is out of range"},
		{[]string{"--arg", "big=5"}, `no selected kernel has a parameter "big"`},
		{[]string{"--kernel", "fib_rec,nope"}, `--kernel: unknown kernel "nope"`},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		var out, errOut bytes.Buffer
		if code := run(append([]string{"warmup"}, c.args...), &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, errOut.String())
		}
		if !strings.Contains(errOut.String(), c.want) || strings.Count(strings.TrimSpace(errOut.String()), "\n") != 0 {
			t.Errorf("%v: stderr %q, want one line that says %q", c.args, errOut.String(), c.want)
		}
	}
}

// The JSON report holds every execution's series, its changepoints, class and steady
// median, and the table holds a sparkline per execution.
func TestWarmupReports(t *testing.T) {
	args := []string{"warmup", "--engine", "native", "--kernel", "fib_it", "--arg", "n=30", "--executions", "2", "--calls", "30", "--group", "2"}
	var out, errOut bytes.Buffer
	if code := run(append(args, "--format", "json"), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep warmup.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Engines) != 1 || len(rep.Engines[0].Runs) != 2 {
		t.Fatalf("report %+v: want one engine with two runs", rep)
	}
	for i, r := range rep.Engines[0].Runs {
		if len(r.Times) != 30 || r.Group != 2 || r.Analysis == nil || r.Analysis.Class == "" || r.Analysis.Changepoints == nil || len(r.Analysis.Segments) == 0 {
			t.Errorf("run %d: %d samples of %d calls, analysis %+v", i, len(r.Times), r.Group, r.Analysis)
		}
	}
	out.Reset()
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"warm-up of fib_it(30)", "samples of 2 calls", "native", "#1", "#2", "log scale"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
	// Several kernels, each with its own arguments: one Markdown table, a row per pair.
	out.Reset()
	md := []string{"warmup", "--engine", "native", "--kernel", "fib_it,ack", "--arg", "fib_it.n=30", "--arg", "ack.n=1", "--arg", "ack.m=2", "--executions", "1", "--calls", "20", "--format", "markdown"}
	if code := run(md, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"| kernel | engine |", "| fib_it(30) | native |", "| ack(1, 2) | native |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, out.String())
		}
	}
}

// TestWarmupStores: a finished study is stored and its id said, the same report read back
// by that id; --no-save stores nothing.
func TestWarmupStores(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	args := []string{"warmup", "--engine", "native", "--kernel", "fib_it", "--arg", "n=30", "--executions", "1", "--calls", "20", "--format", "json", "--results-db", db}
	var out, errOut bytes.Buffer
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	m := regexp.MustCompile(`fib_it\(30\) stored as study ([0-9]+) in `).FindStringSubmatch(errOut.String())
	if m == nil {
		t.Fatalf("stderr %q: want the stored study's id", errOut.String())
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	var printed warmup.Report
	if err := json.Unmarshal(out.Bytes(), &printed); err != nil {
		t.Fatal(err)
	}
	store, err := results.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	st, err := store.Study(context.Background(), id)
	if err != nil || st.Source != results.SourceCLI || st.Report.Label != printed.Label || len(st.Report.Engines) != 1 || len(st.Report.Engines[0].Runs[0].Times) != 20 {
		t.Fatalf("study %d: %+v, %v; want the printed report", id, st, err)
	}
	out.Reset()
	errOut.Reset()
	if code := run(append(args, "--no-save"), &out, &errOut); code != 0 || strings.Contains(errOut.String(), "stored") {
		t.Fatalf("--no-save: exit %d, stderr %q", code, errOut.String())
	}
	if _, err := store.Study(context.Background(), id+1); !errors.Is(err, results.ErrStudyNotFound) {
		t.Errorf("after --no-save, study %d: %v; want none stored", id+1, err)
	}
}
