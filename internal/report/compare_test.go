package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/measure"
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
	want := []string{"~ no significant difference (p=", "+50.0%", "~ no significant difference (p=", "failed in the new run: stack overflow"}
	if len(c.Changes) != len(want) {
		t.Fatalf("%d changes, want %d: %+v", len(c.Changes), len(want), c.Changes)
	}
	for i, w := range want {
		if got := c.Changes[i].Verdict(); !strings.HasPrefix(got, w) {
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
	for _, w := range []string{"a.json → b.json", "~ no significant difference (p=", "+50.0%", "4 compared, 1 changed significantly", "only in b.json: fib_rec(20) on native"} {
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

// noisy returns n samples of a call that takes center ns on a loaded machine: each one
// up to 30% slower than center, at random (seeded, so the test is the same every time).
func noisy(seed uint64, center float64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = center * (1 + 0.3*rng.Float64())
	}
	return out
}

// As benchstat decides: a change is reported when the U test's p is below α and both
// sides have the samples that p needs; overlapping noise is "~", whatever the medians
// say, and so is any difference measured with too few samples.
func TestCompareSignificance(t *testing.T) {
	cell := func(s []float64) Report { return Report{Results: []measure.Result{cellOf("test4", nil, "native", s)}} }
	for _, c := range []struct {
		name     string
		old, new []float64
		alpha    float64
		want     string // the verdict's start
		sig      bool
	}{
		// Six samples a side drawn from one distribution: the medians differ, the U test
		// says by chance.
		{"overlapping noise", noisy(1, 40, 6), noisy(2, 40, 6), 0, "~ no significant difference (p=", false},
		{"overlapping noise, 20 a side", noisy(3, 40, 20), noisy(4, 40, 20), 0, "~ no significant difference (p=", false},
		{"a real 20% change", noisy(5, 40, 10), noisy(6, 48, 10), 0, "+", true},
		{"a real 20% change, faster", noisy(7, 48, 10), noisy(8, 40, 10), 0, "-", true},
		{"3 samples a side", []float64{40, 41, 42}, []float64{80, 81, 82}, 0, "~ need ≥ 4 samples a side (3 and 3)", false},
		{"3 samples on one side", noisy(9, 40, 10), []float64{80, 81, 82}, 0, "~ need ≥ 4 samples a side (10 and 3)", false},
		// At α = 0.001 four samples a side can never be significant: 2/C(8,4) = 0.029, and 2/C(12,6) = 0.0022 for six.
		{"4 a side at alpha 0.001", []float64{40, 41, 42, 43}, []float64{80, 81, 82, 83}, 0.001, "~ need ≥ 7 samples a side (4 and 4)", false},
		{"4 a side at alpha 0.05", []float64{40, 41, 42, 43}, []float64{80, 81, 82, 83}, 0.05, "+", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmp, err := CompareWith(cell(c.old), cell(c.new), CompareOptions{Alpha: c.alpha})
			if err != nil {
				t.Fatal(err)
			}
			ch := cmp.Changes[0]
			alpha := c.alpha
			if alpha == 0 {
				alpha = Alpha
			}
			if got := ch.Verdict(); !strings.HasPrefix(got, c.want) || ch.Significant != c.sig {
				t.Errorf("verdict %q, significant %v (p = %.4f, delta %+.3f); want %q…, %v", got, ch.Significant, ch.P, ch.Delta, c.want, c.sig)
			}
			if ch.Significant && ch.P >= alpha || !ch.Significant && ch.Note == "" && ch.P < alpha {
				t.Errorf("significant %v with p = %.4f at α = %v", ch.Significant, ch.P, alpha)
			}
			if !ch.Significant && ch.Note == "" && !strings.Contains(ch.Verdict(), fmt.Sprintf("p=%.3f", ch.P)) {
				t.Errorf("verdict %q lacks its p-value %.3f", ch.Verdict(), ch.P)
			}
		})
	}
	if _, err := CompareWith(cell(noisy(1, 40, 6)), cell(noisy(2, 40, 6)), CompareOptions{Alpha: 1.5}); err == nil || !strings.Contains(err.Error(), "between 0 and 1") {
		t.Errorf("alpha 1.5: %v", err)
	}
}

func TestSamplesNeeded(t *testing.T) {
	// benchmath's table of the U test's smallest p with n samples a side: 2 / C(2n, n).
	for _, c := range []struct {
		alpha float64
		want  int
	}{{0.5, 2}, {0.1, 3}, {0.05, 4}, {0.01, 5}, {0.005, 6}, {0.002, 7}, {0.001, 7}} {
		if got := SamplesNeeded(c.alpha); got != c.want {
			t.Errorf("SamplesNeeded(%v) = %d, want %d", c.alpha, got, c.want)
		}
	}
}

// withExecutions makes a cell of executions with the medians given, each of 4 samples within
// ±1% of its median: the samples of one process agree, the processes do not.
func withExecutions(medians ...float64) measure.Result {
	r := measure.Result{Kernel: "fib_it", Args: []int{40}, Engine: "native", Calls: 1000}
	for _, m := range medians {
		s := samples(m, 4)
		r.Samples = append(r.Samples, s...)
		r.Executions = append(r.Executions, measure.Execution{Median: m, Min: slices.Min(s), Max: slices.Max(s), Runs: 4})
	}
	r.Runs = len(r.Samples)
	r.Median, r.CI = measure.AcrossExecutions(r.Executions)
	return r
}

// Two runs whose processes differ by luck (each process's samples tight, the processes
// ±15% apart) are not significant, by a test of the processes rather than the samples; a
// doubling is; a busy run is named in a caution.
func TestCompareExecutions(t *testing.T) {
	old := Report{Results: []measure.Result{withExecutions(100, 130, 110)}}
	luck := Report{Results: []measure.Result{withExecutions(125, 100, 118)}}
	c, err := Compare(old, luck)
	if err != nil {
		t.Fatal(err)
	}
	if ch := c.Changes[0]; ch.Significant || ch.Ratio == nil || ch.Ratio.Verdict() != measure.VerdictUnclear || ch.Old.Executions != 3 || !strings.HasPrefix(ch.Verdict(), "~ no significant difference") {
		t.Errorf("process luck: %+v (%s)", ch, ch.Verdict())
	}
	// The same samples as one process a side: compared sample by sample, by the U test.
	flat := func(r measure.Result) Report { r.Executions = nil; return Report{Results: []measure.Result{r}} }
	if c, _ := Compare(flat(old.Results[0]), flat(luck.Results[0])); c.Changes[0].Ratio != nil {
		t.Errorf("one process a side compared by executions: %+v", c.Changes[0])
	}
	doubled := withExecutions(205, 220, 230)
	doubled.Noise = &measure.Noise{Busy: true}
	c, err = Compare(old, Report{Results: []measure.Result{doubled}})
	if err != nil {
		t.Fatal(err)
	}
	if ch := c.Changes[0]; !ch.Significant || ch.P >= Alpha || ch.Ratio.Verdict() != measure.VerdictSlower || c.NewBusy != 1 || c.OldBusy != 0 {
		t.Errorf("a doubling: %+v, busy %d and %d", ch, c.OldBusy, c.NewBusy)
	}
	var buf bytes.Buffer
	if err := WriteComparison(&buf, FormatTable, c, "a", "b", old, Report{Results: []measure.Result{doubled}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "caution: b: 1 of 1 cells measured busy") {
		t.Errorf("no caution for the busy run:\n%s", buf.String())
	}
}
