package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/history"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report/formatcases"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// cell builds a result with the given samples (a failure when failure is not empty).
func cell(kernel string, args []int, eng string, failure string, samples ...time.Duration) measure.Result {
	r := measure.Result{Kernel: kernel, Args: args, Engine: eng, Runs: 3, Warmup: 1, Failure: failure}
	if failure == "" {
		r.Runs = len(samples)
		r.Calls = 1
		for _, s := range samples {
			r.Samples = append(r.Samples, float64(s))
		}
		r.Min, r.Median, r.Max, r.CI = measure.Summarize(r.Samples)
	}
	switch eng {
	case engine.WazeroCompiler:
		r.Setup = engine.Setup{Compile: 612 * time.Millisecond, Instantiate: 2100 * time.Microsecond}
	case engine.WazeroInterpreter:
		r.Setup = engine.Setup{Compile: 95 * time.Millisecond, Instantiate: 1900 * time.Microsecond, Cached: true}
	case engine.Yaegi:
		r.Setup = engine.Setup{Compile: 41 * time.Millisecond}
	}
	return r
}

// batched builds a fib_it(40) cell of samples of calls calls each (ns per call), with its
// first call and the machine's noise; the wazero cell is flagged busy.
func batched(eng string, calls int, samples ...float64) measure.Result {
	r := measure.Result{Kernel: "fib_it", Args: []int{40}, Engine: eng, Runs: len(samples), Warmup: 1, Calls: calls,
		Value: 102334155, Expected: 102334155, Samples: samples, First: 850 * time.Nanosecond,
		Noise: &measure.Noise{Load1: 0.4, OtherCPU: 0.1, Cores: 2}}
	r.Min, r.Median, r.Max, r.CI = measure.Summarize(samples)
	if eng != engine.Native {
		r.Noise = &measure.Noise{Load1: 2.6, OtherCPU: 0.9, Cores: 2, Busy: true}
		r.First = 12 * time.Microsecond
	}
	return r
}

// executed gives a cell executions with the medians given (their own intervals ±2%), its
// figures then built over them (measure.AcrossExecutions).
func executed(r measure.Result, medians ...float64) measure.Result {
	for _, m := range medians {
		r.Executions = append(r.Executions, measure.Execution{Median: m, CI: measure.Interval{Lo: m * 0.98, Hi: m * 1.02, Level: 0.95}, Runs: r.Runs, Calls: r.Calls, Load1: 0.4, OtherCPU: 0.1})
	}
	r.Median, r.CI = measure.AcrossExecutions(r.Executions)
	return r
}

func fixture() Report {
	ms := time.Millisecond
	fib, ack, t1 := []int{40}, []int{3, 10}, []int{50_000, 1_000}
	return Report{
		Method: Method{Runs: 3, Warmup: 1, WarmupTime: 500 * time.Millisecond, Timeout: 30 * time.Second, MinSample: 10 * time.Millisecond, Timing: "monotonic clock around the call"},
		Environment: Environment{
			CPU: "AMD EPYC", Cores: 2, GOMAXPROCS: 2, Go: "go1.26.8",
			Modules: map[string]string{"wazero": "v1.12.0", "yaegi": "v0.16.1"}, OS: "linux", Arch: "amd64",
			Time: time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC),
		},
		Results: []measure.Result{
			batched(engine.Native, 655360, 14.7, 14.9, 15.0, 14.8, 14.9, 15.1, 14.8, 14.9),
			batched(engine.WazeroCompiler, 262144, 40.1, 39.0, 46.2, 41.0, 36.5, 40.3),
			executed(cell("fib_rec", fib, engine.Native, "", 410*ms, 412*ms, 430*ms), 412e6, 405e6, 420e6),
			executed(cell("fib_rec", fib, engine.WazeroCompiler, "", 1200*ms, 1230*ms, 1250*ms), 1230e6, 1190e6, 1330e6),
			cell("fib_rec", fib, engine.WazeroInterpreter, "", 9100*ms),
			cell("fib_rec", fib, engine.Yaegi, "timed out after 30s"),
			cell("ack", ack, engine.Native, "", 310*time.Microsecond, 300*time.Microsecond, 320*time.Microsecond),
			cell("ack", ack, engine.WazeroCompiler, "", 900*time.Microsecond, 905*time.Microsecond, 950*time.Microsecond),
			cell("ack", ack, engine.WazeroInterpreter, "stack overflow"),
			cell("ack", ack, engine.Yaegi, "", 66*ms, 65*ms, 70*ms),
			cell("test1", t1, engine.Native, "", 150*ms, 151*ms, 149*ms),
			cell("test1", t1, engine.WazeroCompiler, "", 170*ms, 171*ms, 169*ms),
			cell("test1", t1, engine.WazeroInterpreter, "wrong result: got 1, want 40999000"),
			cell("test1", t1, engine.Yaegi, "crashed: fatal error: runtime: out of memory"),
		},
		History: history.ForKernels("fib_rec", "ack", "test1"),
	}
}

func TestGolden(t *testing.T) {
	for _, format := range Formats() {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, format, fixture()); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", format+".golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("%s output differs from %s (go test ./internal/report -update rewrites it):\n%s", format, path, got)
			}
		})
	}
}

// The golden files hold what the formats promise, checked here beyond "unchanged".
func TestFormatsContent(t *testing.T) {
	out := map[string]string{}
	for _, f := range Formats() {
		var buf bytes.Buffer
		if err := Write(&buf, f, fixture()); err != nil {
			t.Fatal(err)
		}
		out[f] = buf.String()
	}
	for _, want := range []string{
		"fib_rec(40)", "412", "1.25", "×3.03", "2.67–3.44", "varies", "×1.12", "×22.1", "9.1", "(1 run)", "timed out after 30s", "stack overflow",
		"ack(3, 10)", "310", "905", "×2.92", "wrong result: got 1, want 40999000",
		"612 ms", "AMD EPYC, 2 cores, GOMAXPROCS 2, go1.26.8 linux/amd64, wazero v1.12.0",
		"historical: fib(40)", "45.0391s", "PHP 5.5.9", "did not finish",
	} {
		for _, f := range []string{FormatTable, FormatMarkdown} {
			if !strings.Contains(out[f], want) {
				t.Errorf("%s output lacks %q", f, want)
			}
		}
	}
	// Markdown keeps each cell whole and the whole method; the text table aligns the
	// medians, puts the interval on a second line, says busy once, and wraps a short method.
	for _, want := range []string{"905 µs ±? ×2.9", "14.9 ns ±1.3% k=655360", "9.1 s", "median of 3 timed samples after 1 warm-up call and more until the warm-up lasted 500ms, each sample at least 10ms"} {
		if !strings.Contains(out[FormatMarkdown], want) {
			t.Errorf("markdown output lacks %q", want)
		}
	}
	text := strings.ReplaceAll(out[FormatTable], "\n  ", " ")
	for _, want := range []string{"14.9 ns", "±1.3%", "wide", "\nbusy: ", "method: median of 3 timed samples after 1 warm-up call and more until the warm-up lasted 500ms, each sample at least 10ms", "every call checked against the catalogue"} {
		if !strings.Contains(text, want) {
			t.Errorf("table output lacks %q", want)
		}
	}
	if n := strings.Count(out[FormatTable], "busy"); n != 2 { // the footer's label, the machine line's count
		t.Errorf("table says busy %d times, want once in its footer and once in the machine line:\n%s", n, out[FormatTable])
	}
	for _, l := range strings.Split(out[FormatTable], "\n") {
		if utf8.RuneCountInString(l) > 200 && !strings.HasPrefix(l, "Phases") && !strings.HasPrefix(l, "environment") && !strings.HasPrefix(l, "machine") {
			t.Errorf("a line of %d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
	if !strings.Contains(out[FormatMarkdown], "| kernel | native | wazero-compiler |") {
		t.Errorf("markdown has no pipe table:\n%s", out[FormatMarkdown])
	}

	var back Report
	if err := json.Unmarshal([]byte(out[FormatJSON]), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != 14 || back.Results[2].Median != fixture().Results[2].Median || len(back.Results[2].Executions) != 3 || back.Results[0].Calls != 655360 || !back.Results[0].CI.Valid() || back.Environment.CPU != "AMD EPYC" || len(back.History) == 0 {
		t.Errorf("json round trip lost data: %+v", back)
	}

	lines := strings.Split(out[FormatGoBench], "\n")
	var bench int
	for _, l := range lines {
		if strings.HasPrefix(l, "Benchmark") {
			bench++
			if f := strings.Fields(l); len(f) != 4 || f[3] != "ns/op" {
				t.Errorf("benchmark line %q is not `name k N ns/op`", l)
			}
		}
	}
	if bench != 8+6+7*3+1 {
		t.Errorf("%d benchmark lines, want one per sample of the good cells (36)", bench)
	}
	for _, want := range []string{
		"BenchmarkKernel/ack(3,10)/wazero-compiler\t1\t905000.00 ns/op",
		"BenchmarkKernel/fib_it(40)/native\t655360\t14.70 ns/op",
		"# BenchmarkKernel/fib_it(40)/native median 14.9 ns, 95% CI 14.7 ns – 15 ns (±1.3%)",
	} {
		if !strings.Contains(out[FormatGoBench], want) {
			t.Errorf("gobench output lacks %q:\n%s", want, out[FormatGoBench])
		}
	}

}

func TestUnknownFormat(t *testing.T) {
	err := Write(&bytes.Buffer{}, "xml", fixture())
	if err == nil || !strings.Contains(err.Error(), `unknown format "xml": valid formats are table, markdown, json, csv, gobench`) {
		t.Errorf("Write(xml) = %v", err)
	}
}

// The durations and ratios every formatter of the project writes alike: these, and the
// page's (web/src/format.ts, whose test in package web checks the same cases).
func TestFormatDuration(t *testing.T) {
	cases, err := formatcases.Durations()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if got := FormatNs(c.NS); got != c.Text {
			t.Errorf("FormatNs(%v) = %q, want %q", c.NS, got, c.Text)
		}
		if c.NS == math.Trunc(c.NS) {
			if got := FormatDuration(time.Duration(c.NS)); got != c.Text {
				t.Errorf("FormatDuration(%v) = %q, want %q", time.Duration(c.NS), got, c.Text)
			}
		}
	}
	for _, ns := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := FormatNs(ns); got != "—" {
			t.Errorf("FormatNs(%v) = %q, want —", ns, got)
		}
	}
	ratios, err := formatcases.Ratios()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ratios {
		if got := FormatRatio(c.X); got != c.Text {
			t.Errorf("FormatRatio(%v) = %q, want %q", c.X, got, c.Text)
		}
	}
	for _, x := range []float64{math.NaN(), math.Inf(1)} {
		if got := FormatRatio(x); got != "" {
			t.Errorf("FormatRatio(%v) = %q, want none", x, got)
		}
	}
}

func TestCPUModel(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cpuinfo")
	os.WriteFile(path, []byte("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n"), 0o644)
	if got := cpuModel(path); got != "AMD EPYC 7B13" {
		t.Errorf("cpuModel = %q", got)
	}
	if got := cpuModel(filepath.Join(dir, "missing")); !strings.HasPrefix(got, "unknown") {
		t.Errorf("cpuModel(missing) = %q", got)
	}
}

func TestCurrentEnvironment(t *testing.T) {
	e := CurrentEnvironment()
	if e.Cores < 1 || e.GOMAXPROCS < 1 || !strings.HasPrefix(e.Go, "go") || e.OS == "" || e.CPU == "" || e.Module("wazero") == "unknown" || e.Time.IsZero() {
		t.Errorf("CurrentEnvironment() = %+v", e)
	}
}

// benchstat reads the gobench format: every sample is a result with k iterations, and
// nothing else is a syntax error.
func TestGoBenchParses(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, FormatGoBench, fixture()); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&buf, "report")
	n, fib := 0, 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		case *benchfmt.Result:
			n++
			if string(rec.Name) == "Kernel/fib_it(40)/native" {
				fib++
				if rec.Iters != 655360 || rec.Values[0].Unit != "sec/op" || rec.Values[0].Value > 16e-9 || rec.Values[0].Value < 14e-9 {
					t.Errorf("fib_it result %d iterations, %+v", rec.Iters, rec.Values)
				}
			}
		}
	}
	if n != 8+6+7*3+1 || fib != 8 {
		t.Errorf("benchfmt read %d results (%d of fib_it on native), want 36 (8)", n, fib)
	}
}

// The runtimes of out-of-process engines (measure.Result.Runtime) reach the environment,
// one per engine, and every format prints them.
func TestRuntimes(t *testing.T) {
	rep := fixture()
	c := cell("fib_rec", []int{40}, "c", "", 300*time.Millisecond)
	c.Runtime = "gcc 12.2.0"
	php := cell("fib_rec", []int{40}, "php", "", 9*time.Second)
	php.Runtime = "PHP 8.2.29 (opcache off, no JIT)"
	phpAgain := php
	phpAgain.Runtime = "PHP 9"
	rep.Results = append(rep.Results, c, php, phpAgain)
	rep.Environment = rep.Environment.WithRuntimes(rep.Results)
	want := []Runtime{{Engine: "c", Version: "gcc 12.2.0"}, {Engine: "php", Version: "PHP 8.2.29 (opcache off, no JIT)"}}
	if !reflect.DeepEqual(rep.Environment.Runtimes, want) {
		t.Fatalf("Runtimes = %+v, want %+v", rep.Environment.Runtimes, want)
	}
	for _, f := range []string{FormatTable, FormatMarkdown, FormatJSON, FormatGoBench} {
		var buf bytes.Buffer
		if err := Write(&buf, f, rep); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"gcc 12.2.0", "PHP 8.2.29 (opcache off, no JIT)"} {
			if !strings.Contains(buf.String(), s) {
				t.Errorf("%s: %q missing", f, s)
			}
		}
		if f != FormatJSON && strings.Contains(buf.String(), "PHP 9") { // the JSON has every cell's own
			t.Errorf("%s: a second version of one engine printed", f)
		}
	}
}

// A text table wider than the reader's terminal is printed in parts that each fit and
// repeat the kernel column; every cell is still there. No width: the table is whole.
func TestTableWrapsToWidth(t *testing.T) {
	var whole bytes.Buffer
	if err := WriteWidth(&whole, FormatTable, fixture(), 0); err != nil {
		t.Fatal(err)
	}
	wide := 0
	for _, l := range strings.Split(whole.String(), "\n") {
		if strings.HasPrefix(l, "kernel ") {
			wide = max(wide, utf8.RuneCountInString(l))
		}
	}
	width := wide * 2 / 3
	var wrapped bytes.Buffer
	if err := WriteWidth(&wrapped, FormatTable, fixture(), width); err != nil {
		t.Fatal(err)
	}
	text := wrapped.String()
	if !strings.Contains(text, "(continued)") {
		t.Fatalf("a %d-column table at width %d is not wrapped:\n%s", wide, width, text)
	}
	inKernels := true
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "Phases") {
			inKernels = false
		}
		if inKernels && utf8.RuneCountInString(l) > width && !strings.HasPrefix(l, "Kernels:") {
			t.Errorf("line of %d columns past width %d: %q", utf8.RuneCountInString(l), width, l)
		}
	}
	for _, want := range []string{"fib_rec(40)", "412", "1.25", "×3.03", "9.10", "×22.1", "(1 run)", "timed out after 30s", "stack overflow", "wazero-interpreter", "yaegi"} {
		if !strings.Contains(text, want) {
			t.Errorf("wrapped table lacks %q", want)
		}
	}
	if kernelHeaders := strings.Count(text, "\nkernel "); kernelHeaders <= strings.Count(whole.String(), "\nkernel ") {
		t.Errorf("the parts do not repeat the kernel column: %d headers", kernelHeaders)
	}
}

// The Phases table counts cells "from cache" only for an engine whose cells came from a
// compilation cache: an interpreter's or a cold cache's setup shows no "0 of N".
func TestPhasesFromCacheOnlyWithACache(t *testing.T) {
	var out bytes.Buffer
	if err := Write(&out, FormatTable, fixture()); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case engine.WazeroInterpreter: // cached setups in the fixture
			if !strings.Contains(l, "3 of 3") {
				t.Errorf("cached engine's phases %q lack 3 of 3", l)
			}
		case engine.WazeroCompiler, engine.Yaegi:
			if strings.Contains(l, " of ") {
				t.Errorf("phases of an engine with nothing cached count a cache: %q", l)
			}
		}
	}
}

// The engines a report names are its columns, in that order, those without a result
// included; engines with results it does not name follow.
func TestEnginesKeepTheirColumns(t *testing.T) {
	r := Report{
		Engines: []string{"b", "a"},
		Results: []measure.Result{
			{Kernel: "fib_it", Args: []int{10}, Engine: "c", Median: 5, Samples: []float64{5}, Runs: 1},
		},
	}
	var out bytes.Buffer
	if err := Write(&out, FormatMarkdown, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| kernel | b | a | c |") || !strings.Contains(out.String(), "| fib_it(10) | – | – | 5 ns") {
		t.Errorf("columns not b, a, c with b and a empty:\n%s", out.String())
	}
}

// Digits are grouped, and intervals called wide, as the page does (web/src/format.ts,
// grouped; web/src/stats.ts, wide; package web's test checks the same cases): a cell
// without an interval reads "±?" and is never "wide".
func TestGroupedAndWide(t *testing.T) {
	groups, err := formatcases.Groups()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range groups {
		if got := Grouped(c.Decimal); got != c.Text {
			t.Errorf("Grouped(%q) = %q, want %q", c.Decimal, got, c.Text)
		}
	}
	for _, s := range []string{"", "-", "12a", "1.5", "k"} {
		if got := Grouped(s); got != s {
			t.Errorf("Grouped(%q) = %q, want it unchanged", s, got)
		}
	}
	spreads, err := formatcases.Spreads()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range spreads {
		r := measure.Result{Median: c.Median, CI: measure.Interval{Lo: c.Lo, Hi: c.Hi, Level: c.Level}}
		if got := r.Wide(); got != c.Wide {
			t.Errorf("Result{Median: %v, CI: %+v}.Wide() = %v, want %v", c.Median, r.CI, got, c.Wide)
		}
		text := Spread(r)
		if got := strings.TrimSuffix(text, " wide"); got != c.Text {
			t.Errorf("Spread(%v, %+v) = %q, want %q", c.Median, r.CI, text, c.Text)
		}
		if strings.HasSuffix(text, " wide") != c.Wide {
			t.Errorf("Spread(%v, %+v) = %q, want wide %v", c.Median, r.CI, text, c.Wide)
		}
		if c.Level == 0 && c.Median > 0 && text != "±?" {
			t.Errorf("Spread of a cell without an interval = %q, want ±? only", text)
		}
	}
}
