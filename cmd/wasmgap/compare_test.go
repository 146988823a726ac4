package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/report"
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

// Two runs of the same binary differ by the machine's noise only: most cells say so. A
// run in which one kernel was slowed (its samples 20 times as long, in the JSON) has
// that cell flagged, through the same comparison.
func TestCompareTwoRuns(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--engine", "native", "--kernel", "fib_it,fib_rec,ack_while,ack,test7,test8b",
		"--arg", "fib_rec.n=20", "--arg", "ack_while.m=5", "--arg", "ack.m=5", "--arg", "large=20000", "--min-sample", "2ms",
		// Native code is warm after its first calls: 50 ms of warm-up, not 500, a cell.
		"--warmup-time", "50ms"}
	// The machine is shared: a burst of load during one run and not the other is a real
	// difference, which the comparison rightly reports. Up to three pairs of runs are
	// made before the test says the comparison, not the machine, is at fault.
	var a, b string
	for attempt := 1; ; attempt++ {
		a = benchJSON(t, dir, "a.json", args...)
		b = benchJSON(t, dir, "b.json", args...)
		var stdout, stderr bytes.Buffer
		if code := run([]string{"compare", "--format", "json", a, b}, &stdout, &stderr); code != 0 {
			t.Fatalf("compare: exit %d: %s", code, stderr.String())
		}
		var c report.Comparison
		if err := json.Unmarshal(stdout.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		same := 0
		for _, ch := range c.Changes {
			if !ch.Significant && ch.Note == "" {
				same++
			}
		}
		if len(c.Changes) != 6 {
			t.Fatalf("%d cells compared, want 6:\n%s", len(c.Changes), stdout.String())
		}
		if same*2 >= len(c.Changes) {
			break
		}
		t.Logf("attempt %d: %d of %d cells without a significant difference:\n%s", attempt, same, len(c.Changes), stdout.String())
		if attempt == 3 {
			t.Fatalf("two runs of one binary differ significantly in most cells, three times")
		}
	}
	var stdout, stderr bytes.Buffer

	// Slow fib_it down twentyfold in the second run's samples: far past the spread a
	// loaded machine gives one kernel between two runs.
	raw, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep["results"].([]any) {
		cell := r.(map[string]any)
		if cell["kernel"] != "fib_it" {
			continue
		}
		for i, s := range cell["samples_ns"].([]any) {
			cell["samples_ns"].([]any)[i] = s.(float64) * 20
		}
	}
	slowed, _ := json.Marshal(rep)
	slow := filepath.Join(dir, "slow.json")
	if err := os.WriteFile(slow, slowed, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"compare", a, slow}, &stdout, &stderr); code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr.String())
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "fib_it(40)") && (strings.Contains(line, "no significant") || !strings.Contains(line, "+")) {
			t.Errorf("the slowed kernel is not flagged: %q\n%s", line, stdout.String())
		}
	}
	if !strings.Contains(stdout.String(), "fib_it(40)") {
		t.Errorf("no fib_it row:\n%s", stdout.String())
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
