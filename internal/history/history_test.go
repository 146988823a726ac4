package history

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/kernels"
)

// Every figure names a real kernel with arguments it accepts, and its number is the
// article's text read as seconds: a typo in either shows here.
func TestFiguresConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range All() {
		id := f.Table + "|" + f.Label + "|" + f.Kernel
		if seen[id] {
			t.Errorf("%s: twice", id)
		}
		seen[id] = true
		k, err := kernels.Lookup(f.Kernel)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if err := k.Check(f.Args); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		if f.Article != k.Article {
			t.Errorf("%s: article %q, but the kernel comes from %q", id, f.Article, k.Article)
		}
		if f.Label == "" || f.Language == "" || f.Version == "" || f.Hardware == "" || f.Text == "" {
			t.Errorf("%s: missing label, language, version, hardware or text: %+v", id, f)
		}
		if f.Failed() {
			if f.Seconds != 0 {
				t.Errorf("%s: a failure with a time", id)
			}
			continue
		}
		secs, err := strconv.ParseFloat(strings.TrimSuffix(f.Text, "s"), 64)
		if err != nil || secs != f.Seconds {
			t.Errorf("%s: text %q but seconds %v", id, f.Text, f.Seconds)
		}
	}
}

func TestTables(t *testing.T) {
	counts := map[string]int{}
	for _, f := range All() {
		counts[f.Table]++
	}
	// fib: 8 languages × 2 kernels, C gives one figure for both; ack likewise;
	// loops 2014: 2 × 10; new results: 3 × 10 for PHP and HHVM, plus 15 partial figures.
	want := map[string]int{TableFib: 15, TableAck: 15, TableLoops2014: 20, TableLoopsNew: 45}
	for _, table := range Tables() {
		if counts[table] != want[table] {
			t.Errorf("%s: %d figures, want %d", table, counts[table], want[table])
		}
	}
	if len(counts) != len(want) {
		t.Errorf("tables %v, want %v", counts, want)
	}
	// The new results' language columns, in the article's order.
	var labels []string
	for _, f := range figures {
		if f.Table == TableLoopsNew && !slices.Contains(labels, f.Label) {
			labels = append(labels, f.Label)
		}
	}
	if got := strings.Join(labels, ", "); got != "php 5.5.9, php 7.0, hhvm 3.8.1, node.js 0.10.25, c++ gcc 4.8.4, c++ -O3 gcc 4.8.4, go 1.4.2, OpenJDK 1.7.0_79 ArrayList, OpenJDK 1.7.0_79 Vector, Zephir 0.7.1b" {
		t.Errorf("new results columns: %s", got)
	}
}

func TestForKernels(t *testing.T) {
	for _, f := range ForKernels("ack") {
		if f.Kernel != "ack" {
			t.Errorf("ForKernels(ack) gave %s", f.Kernel)
		}
	}
	if n := len(ForKernels("fib_rec", "ack")); n != 16 {
		t.Errorf("ForKernels(fib_rec, ack) = %d figures, want 16", n)
	}
	if n := len(ForKernels("nothing")); n != 0 {
		t.Errorf("ForKernels(nothing) = %d figures", n)
	}
}

func TestAllIsACopy(t *testing.T) {
	a := All()
	a[0].Args[0] = -1
	a[0].Text = "changed"
	if b := All(); b[0].Args[0] == -1 || b[0].Text == "changed" {
		t.Error("All shares its data with the caller")
	}
}

func ExampleForKernels() {
	for _, f := range ForKernels("fib_rec")[:3] {
		b, _ := json.Marshal(struct {
			Label   string  `json:"label"`
			Seconds float64 `json:"seconds"`
		}{f.Label, f.Seconds})
		fmt.Println(string(b))
	}
	// Output:
	// {"label":"PHP 5.5.9","seconds":45.0391}
	// {"label":"PHP 7.0.0","seconds":19.4653}
	// {"label":"HHVM 3.8.1","seconds":1.7428}
}
