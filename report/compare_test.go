package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/measure"
)

// samples returns n samples around center, spread by ±1%, in a fixed order.
func samples(center float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = center * (1 + 0.01*float64((i*7)%5-2)/2)
	}
	return out
}

func cellOf(kernel string, args []int, eng string, s []float64) measure.Result {
	r := measure.Result{Kernel: kernel, Args: args, Engine: eng, Runs: len(s), Calls: 1000, Samples: s}
	r.Min, r.Median, r.Max, r.CI = measure.Summarize(s)
	return r
}

func TestCompare(t *testing.T) {
	old := Report{Results: []measure.Result{
		cellOf("fib_it", []int{40}, "native", samples(15, 10)),
		cellOf("fib_it", []int{40}, "wazero-compiler", samples(40, 10)),
		cellOf("ack", []int{3, 5}, "native", samples(90_000, 10)),
		cellOf("test7", []int{1000}, "native", samples(5000, 10)),
	}}
	slowed := cellOf("fib_it", []int{40}, "wazero-compiler", samples(60, 10))
	few := cellOf("ack", []int{3, 5}, "native", samples(90_000, 4))
	failed := measure.Result{Kernel: "test7", Args: []int{1000}, Engine: "native", Failure: "stack overflow"}
	new := Report{Results: []measure.Result{
		cellOf("fib_it", []int{40}, "native", samples(15.05, 10)),
		slowed, few, failed,
		cellOf("fib_rec", []int{20}, "native", samples(40_000, 10)),
	}}
	c, err := Compare(old, new)
	if err != nil {
		t.Fatal(err)
	}
	if got := old.Results[0].Samples; !slices.Equal(got, samples(15, 10)) {
		t.Errorf("Compare reordered the old run's samples to %v: they stay in the order they ran", got)
	}
	want := []string{"~ no significant difference", "+50.0%", "too few samples for 95% intervals (10 and 4: 6 needed)", "failed in the new run: stack overflow"}
	if len(c.Changes) != len(want) {
		t.Fatalf("%d changes, want %d: %+v", len(c.Changes), len(want), c.Changes)
	}
	for i, w := range want {
		if got := c.Changes[i].Verdict(); got != w {
			t.Errorf("%s on %s: %q, want %q", c.Changes[i].Label, c.Changes[i].Engine, got, w)
		}
	}
	if !c.Changes[1].Significant || c.Changes[1].P >= Alpha {
		t.Errorf("the slowed cell: %+v", c.Changes[1])
	}
	if len(c.OnlyNew) != 1 || c.OnlyNew[0] != "fib_rec(20) on native" || len(c.OnlyOld) != 0 {
		t.Errorf("only old %v, only new %v", c.OnlyOld, c.OnlyNew)
	}
	var buf bytes.Buffer
	if err := WriteComparison(&buf, FormatTable, c, "a.json", "b.json", old, new); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"a.json → b.json", "~ no significant difference", "+50.0%", "4 compared, 1 changed significantly", "only in b.json: fib_rec(20) on native"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, buf.String())
		}
	}
}

func TestCompareNothingInCommon(t *testing.T) {
	a := Report{Results: []measure.Result{cellOf("fib_it", []int{40}, "native", samples(15, 10))}}
	b := Report{Results: []measure.Result{cellOf("fib_it", []int{41}, "native", samples(15, 10))}}
	_, err := Compare(a, b)
	if err == nil || !strings.Contains(err.Error(), "no cell in common") || !strings.Contains(err.Error(), "fib_it(40) on native") || !strings.Contains(err.Error(), "fib_it(41) on native") {
		t.Errorf("Compare = %v", err)
	}
}

func TestRead(t *testing.T) {
	var good bytes.Buffer
	if err := Write(&good, FormatJSON, fixture()); err != nil {
		t.Fatal(err)
	}
	rep, err := Read(&good)
	if err != nil || len(rep.Results) != len(fixture().Results) {
		t.Fatalf("Read(a report) = %d cells, %v", len(rep.Results), err)
	}
	for _, c := range []struct{ in, want string }{
		{"BenchmarkKernel/fib_it 1 2 ns/op", "not a JSON report"},
		{`{"scenario":"http","latency":{}}`, `not a ` + "`wasmgap bench --format json`" + ` report: it has no "method" field (its fields are latency, scenario`},
		{`{"method":{},"environment":{},"results":[]}`, "the report has no cells"},
		{`{"method":{},"environment":{},"results":[{"engine":"native"}]}`, "cell 1 of the report names no kernel or engine"},
	} {
		if _, err := Read(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Read(%q) = %v, want %q", c.in, err, c.want)
		}
	}
}

func TestComparisonJSON(t *testing.T) {
	a := Report{Results: []measure.Result{cellOf("fib_it", []int{40}, "native", samples(15, 10))}}
	c, err := Compare(a, a)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteComparison(&buf, FormatJSON, c, "a", "b", a, a); err != nil {
		t.Fatal(err)
	}
	var back Comparison
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back.Changes) != 1 || back.Changes[0].Significant {
		t.Errorf("%v %+v", err, back)
	}
	if err := WriteComparison(&buf, FormatGoBench, c, "a", "b", a, a); err == nil || !strings.Contains(err.Error(), "valid formats are table, markdown, json") {
		t.Errorf("gobench comparison: %v", err)
	}
}
