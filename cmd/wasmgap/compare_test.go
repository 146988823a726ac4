package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/report"
)

// benchJSON runs `wasmgap bench --format json` with args and writes its report to dir/name.
func benchJSON(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"bench", "--format", "json"}, args...), &stdout, &stderr); code != 0 {
		t.Fatalf("bench %v: exit %d: %s", args, code, stderr.String())
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rewriteSamples writes the report at path again as dir/name, each sample of the
// cells of kernel (all cells when kernel is "") changed by f.
func rewriteSamples(t *testing.T, path, dir, name, kernel string, f func(samples []any)) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep["results"].([]any) {
		cell := r.(map[string]any)
		if kernel == "" || cell["kernel"] == kernel {
			f(cell["samples_ns"].([]any))
		}
	}
	out, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// compareJSON runs `wasmgap compare --format json old new`.
func compareJSON(t *testing.T, old, new string) report.Comparison {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"compare", "--format", "json", old, new}, &stdout, &stderr); code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr.String())
	}
	var c report.Comparison
	if err := json.Unmarshal(stdout.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// A real report compared with itself, its samples in another order, differs in no
// cell; with one kernel's samples twenty times as long, that cell alone is flagged, as
// a slowdown, in the table too. The machine's steadiness is no part of it: two runs of
// one binary on a shared machine may rightly differ (report's own tests check the
// statistics against noise drawn from a fixed seed).
func TestCompareTwoRuns(t *testing.T) {
	dir := t.TempDir()
	a := benchJSON(t, dir, "a.json", "--engine", "native", "--kernel", "fib_it,fib_rec,ack_while,ack,test7,test8b",
		"--arg", "fib_rec.n=20", "--arg", "ack_while.m=5", "--arg", "ack.m=5", "--arg", "large=20000", "--min-sample", "2ms",
		// Native code is warm after its first calls: 50 ms of warm-up, not 500, a cell.
		// One process a cell: the samples are compared (the U test), not the processes,
		// whose spread on a busy machine is report's tests' business.
		"--warmup-time", "50ms", "--executions", "1")
	shuffled := rewriteSamples(t, a, dir, "shuffled.json", "", func(s []any) { slices.Reverse(s) })
	c := compareJSON(t, a, shuffled)
	if len(c.Changes) != 6 {
		t.Fatalf("%d cells compared, want 6: %+v", len(c.Changes), c)
	}
	for _, ch := range c.Changes {
		if ch.Significant || ch.Note != "" || ch.Delta != 0 {
			t.Errorf("%s: the same samples in another order read as a change: %+v", ch.Label, ch)
		}
	}

	slow := rewriteSamples(t, a, dir, "slow.json", "fib_it", func(s []any) {
		for i, v := range s {
			s[i] = v.(float64) * 20
		}
	})
	for _, ch := range compareJSON(t, a, slow).Changes {
		if want := ch.Label == "fib_it(40)"; ch.Significant != want || want && ch.Delta < 18 {
			t.Errorf("%s: significant %v, delta %+.2f; only fib_it(40) is slowed, twentyfold", ch.Label, ch.Significant, ch.Delta)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"compare", a, slow}, &stdout, &stderr); code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr.String())
	}
	row := ""
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "fib_it(40)") {
			row = line
		}
	}
	if row == "" || strings.Contains(row, "no significant") || !strings.Contains(row, "+") {
		t.Errorf("the slowed kernel is not flagged in the table: %q\n%s", row, stdout.String())
	}
}

func TestCompareRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := write("one.json", `{"method":{},"environment":{},"results":[{"kernel":"fib_it","args":[40],"engine":"native","samples_ns":[1,2,3]}]}`)
	other := write("other.json", `{"method":{},"environment":{},"results":[{"kernel":"fib_it","args":[30],"engine":"native","samples_ns":[1,2,3]}]}`)
	load := write("load.json", `{"scenario":"http","latency":{}}`)
	text := write("table.txt", "Kernels: median time per call\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{one}, "give two reports, the old and the new (1 given)"},
		{[]string{one, other}, "no cell in common"},
		{[]string{one, load}, `load.json: not a ` + "`wasmgap bench --format json`" + ` report: it has no "method" field`},
		{[]string{text, one}, "table.txt: not a JSON report"},
		{[]string{one, filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"--alpha", "0", one, one}, "--alpha 0 is out of range: a significance level lies between 0 and 1"},
		{[]string{"--format", "gobench", one, one}, `unknown format "gobench": valid formats are table, markdown, json`},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"compare"}, c.args...), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("compare %v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// Flags may follow the two files (`compare a.json b.json --format markdown`), and every
// comparison format, CSV included, is offered.
func TestCompareFlagsAfterFiles(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--engine", "native", "--kernel", "fib_it", "--arg", "n=20", "--runs", "6", "--warmup", "0", "--warmup-time", "0", "--min-sample", "1ms"}
	old := benchJSON(t, dir, "old.json", args...)
	new := benchJSON(t, dir, "new.json", args...)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"compare", old, new, "--format", "markdown"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "### Change per cell: old.json → new.json") {
		t.Fatalf("compare old new --format markdown: exit %d, stdout %.80q, stderr %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"compare", old, "--format=csv", new}, &stdout, &stderr); code != 0 {
		t.Fatalf("compare --format csv: exit %d: %s", code, stderr.String())
	}
	recs, err := csv.NewReader(&stdout).ReadAll()
	if err != nil || len(recs) != 2 || recs[0][0] != "kernel" || recs[1][0] != "fib_it(20)" || recs[1][1] != "native" {
		t.Errorf("compare --format csv: %v, %q", err, recs)
	}
}
