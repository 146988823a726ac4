package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/internal/warmup"
)

// TestResultsListsShowsDeletesStudies: `wasmgap results` lists a stored warm-up study
// beside the runs, shows it by id with --study, and deletes it; a bad id names the
// studies there are.
func TestResultsListsShowsDeletesStudies(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	if _, errOut, code := runCLI("bench", "--engine", "native", "--kernel", "fib_it", "--arg", "n=10", "--runs", "2", "--warmup", "0", "--warmup-time", "0", "--results-db", db); code != 0 {
		t.Fatal(errOut)
	}
	store, err := results.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	flat := make([]float64, 60)
	for i := range flat {
		flat[i] = 100 + float64(i%3)
	}
	rep := warmup.Report{Kernel: "fib_rec", Args: []int{20}, Label: "fib_rec(20)", Method: warmup.NewMethod(2, warmup.Collection{Samples: 60, Group: 1}, warmup.Options{})}
	rep.Engines = append(rep.Engines, warmup.NewEngineResult("native", []warmup.Series{{Times: flat, Group: 1, Timer: "host clock"}, {Failure: "timed out"}}, warmup.Options{}))
	id, err := store.SaveStudy(context.Background(), results.NewStudy(results.SourceCLI, rep))
	store.Close()
	if err != nil || id != 1 {
		t.Fatalf("SaveStudy: %d, %v", id, err)
	}

	out, errOut, code := runCLI("results", "list", "--results-db", db)
	if code != 0 || !strings.Contains(out, "fib_it(10) on native") || !strings.Contains(out, "study  stored (UTC)") ||
		!strings.Contains(out, "fib_rec(20)") || !strings.Contains(out, "1 of 2 executions failed") {
		t.Errorf("list: exit %d, stdout %q, stderr %q; want the run and the study", code, out, errOut)
	}
	if out, _, _ = runCLI("results", "list", "--results-db", db, "--kind", "runs"); strings.Contains(out, "fib_rec(20)") {
		t.Errorf("list --kind runs shows the study: %q", out)
	}
	if out, _, _ = runCLI("results", "list", "--results-db", db, "--kind", "studies"); strings.Contains(out, "fib_it") || !strings.Contains(out, "fib_rec(20)") {
		t.Errorf("list --kind studies: %q", out)
	}
	if out, _, _ = runCLI("results", "list", "--results-db", db, "--os", "linux", "--kind", "studies"); strings.Contains(out, "fib_rec") {
		t.Errorf("list --os: a study records no OS, yet: %q", out)
	}
	var list []map[string]any
	out, _, _ = runCLI("results", "list", "--results-db", db, "--format", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 || list[0]["kind"] != "run" || list[1]["kind"] != "study" || list[1]["executions"] != 2.0 {
		t.Errorf("list json: %v %q; want the run then the study, each with its kind", err, out)
	}
	if out, _, _ = runCLI("results", "list", "--results-db", db, "--format", "csv", "--kind", "studies"); !strings.Contains(out, "fib_rec(20) on native; 2 executions,study") {
		t.Errorf("list csv: %q", out)
	}

	out, errOut, code = runCLI("results", "show", "--results-db", db, "--study", "1")
	if code != 0 || !strings.Contains(out, "warm-up study 1, stored") || !strings.Contains(out, "warm-up of fib_rec(20)") || !strings.Contains(out, "timed out") {
		t.Errorf("show --study: exit %d, %q %q", code, out, errOut)
	}
	var st results.Study
	out, _, _ = runCLI("results", "show", "--results-db", db, "--study", "--format", "json", "1")
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.ID != 1 || st.Report.Label != "fib_rec(20)" {
		t.Errorf("show --study --format json: %v, %+v", err, st)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "--study", "7"}, "warm-up study 7: no such warm-up study: the store holds studies 1"},
		{[]string{"show", "--study", "x"}, `"x" is not a study id`},
		{[]string{"show", "--study"}, "give the ids of warm-up studies"},
		{[]string{"show", "--study", "--format", "csv", "1"}, `unknown format "csv": valid formats are table, json, markdown`},
		{[]string{"show", "7"}, "run 7: no such run (`wasmgap results list` lists the stored runs); a warm-up study's id is shown by `wasmgap results show --study ID`"},
		{[]string{"list", "--kind", "cells"}, `--kind "cells": allowed all, runs, studies`},
		{[]string{"delete", "--study", "--source", "cli", "1"}, "--study takes study ids only, not --source"},
		{[]string{"delete", "--study", "1", "7"}, "delete warm-up study 7: no such warm-up study (the store holds studies 1); nothing was deleted"},
	} {
		out, errOut, code := runCLI(append(append([]string{"results"}, c.args[0], "--results-db", db), c.args[1:]...)...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errOut, c.want)
		}
	}

	if out, errOut, code = runCLI("results", "delete", "--results-db", db, "--study", "1"); code != 0 || out != "deleted 1 warm-up study(ies)\n" {
		t.Errorf("delete --study 1: exit %d, %q %q", code, out, errOut)
	}
	if _, errOut, _ = runCLI("results", "show", "--results-db", db, "--study", "1"); !strings.Contains(errOut, "the store holds no warm-up study") {
		t.Errorf("show of the deleted study: %q", errOut)
	}
	if out, _, _ = runCLI("results", "list", "--results-db", db); !strings.Contains(out, "fib_it(10)") || strings.Contains(out, "study") {
		t.Errorf("list after the delete: %q; want the run only", out)
	}
}
