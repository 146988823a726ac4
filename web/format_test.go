package web

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/report/formatcases"
)

// The page (src/format.ts: duration, ratio) and the server's pages and reports
// (report.FormatNs, FormatRatio) write a duration and a ratio alike: on the cases of
// package formatcases, which report's own test checks too, and on sweeps of durations from
// 0.01 ns to about an hour and of ratios from 0.01 to 10 000, with values near the halves
// of a rounding step among them.
func TestFormatAgreesWithReport(t *testing.T) {
	cases, err := formatcases.Durations()
	if err != nil {
		t.Fatal(err)
	}
	ratios, err := formatcases.Ratios()
	if err != nil {
		t.Fatal(err)
	}
	var ns, xs []float64
	for _, c := range cases {
		ns = append(ns, c.NS)
	}
	for _, c := range ratios {
		xs = append(xs, c.X)
	}
	for e := -2.0; e <= 12.6; e += 0.01 {
		v := math.Pow(10, e)
		ns = append(ns, v, math.Round(v), math.Round(v*1000)/1000+0.005)
		if e <= 4 {
			xs = append(xs, v, math.Round(v*100)/100+0.005)
		}
	}

	out := runNode(t, map[string][]float64{"durations": ns, "ratios": xs}, `const { duration, ratio } = await import(process.env.DIR + "/format.mjs");
console.log(JSON.stringify({ durations: input.durations.map(duration), ratios: input.ratios.map(ratio) }));`, "format")
	var got struct{ Durations, Ratios []string }
	if err := json.Unmarshal(out, &got); err != nil || len(got.Durations) != len(ns) || len(got.Ratios) != len(xs) {
		t.Fatalf("node printed %q (%v), want %d durations and %d ratios", out, err, len(ns), len(xs))
	}
	for i, c := range cases {
		if got.Durations[i] != c.Text {
			t.Errorf("duration(%v) = %q in format.ts, want %q (formatcases)", c.NS, got.Durations[i], c.Text)
		}
	}
	for i, v := range ns {
		if want := report.FormatNs(v); got.Durations[i] != want {
			t.Errorf("duration(%v) = %q in format.ts, report.FormatNs = %q", v, got.Durations[i], want)
		}
	}
	for i, c := range ratios {
		if got.Ratios[i] != c.Text {
			t.Errorf("ratio(%v) = %q in format.ts, want %q (formatcases)", c.X, got.Ratios[i], c.Text)
		}
	}
	for i, x := range xs {
		if want := report.FormatRatio(x); got.Ratios[i] != want {
			t.Errorf("ratio(%v) = %q in format.ts, report.FormatRatio = %q", x, got.Ratios[i], want)
		}
	}
}

// The page groups digits (src/format.ts, grouped) and calls an interval wide (src/stats.ts,
// wide) as report.Grouped and measure.Result.Wide do, on the cases of package formatcases:
// a cell without an interval (under 6 samples) is never wide.
func TestGroupedAndWideAgreeWithReport(t *testing.T) {
	groups, err := formatcases.Groups()
	if err != nil {
		t.Fatal(err)
	}
	spreads, err := formatcases.Spreads()
	if err != nil {
		t.Fatal(err)
	}
	out := runNode(t, map[string]any{"groups": groups, "spreads": spreads}, `const { grouped } = await import(process.env.DIR + "/format.mjs");
const { wide, spread } = await import(process.env.DIR + "/stats.mjs");
const ci = (c) => (c.level > 0 ? { lo_ns: c.lo, hi_ns: c.hi, level: c.level } : undefined);
console.log(JSON.stringify({
  groups: input.groups.map((c) => grouped(c.decimal)),
  wide: input.spreads.map((c) => wide(c.median, ci(c))),
  spread: input.spreads.map((c) => spread(c.median, ci(c))),
}));`, "format", "stats")
	var got struct {
		Groups, Spread []string
		Wide           []bool
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Groups) != len(groups) || len(got.Wide) != len(spreads) || len(got.Spread) != len(spreads) {
		t.Fatalf("node printed %q (%v), want %d groups and %d spreads", out, err, len(groups), len(spreads))
	}
	for i, c := range groups {
		if got.Groups[i] != c.Text {
			t.Errorf("grouped(%q) = %q in format.ts, want %q (formatcases)", c.Decimal, got.Groups[i], c.Text)
		}
		if want := report.Grouped(c.Decimal); got.Groups[i] != want {
			t.Errorf("grouped(%q) = %q in format.ts, report.Grouped = %q", c.Decimal, got.Groups[i], want)
		}
	}
	for i, c := range spreads {
		if got.Wide[i] != c.Wide {
			t.Errorf("wide(%v, %v–%v level %v) = %v in stats.ts, want %v (formatcases)", c.Median, c.Lo, c.Hi, c.Level, got.Wide[i], c.Wide)
		}
		if got.Spread[i] != c.Text {
			t.Errorf("spread(%v, %v–%v level %v) = %q in stats.ts, want %q (formatcases)", c.Median, c.Lo, c.Hi, c.Level, got.Spread[i], c.Text)
		}
	}
}

// runNode runs script under Node (the test is skipped without it) with input, as JSON, in
// the constant input and each src/<module>.ts, compiled by esbuild, at DIR/<module>.mjs
// (process.env.DIR); it returns what the script printed.
func runNode(t *testing.T, input any, script string, modules ...string) []byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	dir := t.TempDir()
	for _, name := range modules {
		src, err := os.ReadFile(filepath.Join("src", name+".ts"))
		if err != nil {
			t.Fatal(err)
		}
		js := api.Transform(string(src), api.TransformOptions{Loader: api.LoaderTS, Format: api.FormatESModule, Target: api.ES2022})
		for _, m := range js.Errors {
			t.Fatalf("esbuild over src/%s.ts: %s", name, m.Text)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".mjs"), js.Code, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.json")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	prelude := `const { readFileSync } = await import("node:fs");
const input = JSON.parse(readFileSync(process.env.IN_JSON, "utf8"));
`
	cmd := exec.Command(node, "--no-warnings", "--input-type=module", "-e", prelude+script)
	cmd.Env = append(os.Environ(), "DIR=file://"+filepath.ToSlash(dir), "IN_JSON="+in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	return out
}
