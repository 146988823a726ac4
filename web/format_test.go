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

// The page (src/format.ts, duration) and the server's pages and reports (report.FormatNs)
// write a duration alike: on the cases of package formatcases, which report's own test
// checks too, and on a sweep of durations from 0.01 ns to about an hour with values near
// the halves of a rounding step among them.
func TestDurationAgreesWithReport(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	cases, err := formatcases.Durations()
	if err != nil {
		t.Fatal(err)
	}
	var ns []float64
	for _, c := range cases {
		ns = append(ns, c.NS)
	}
	for e := -2.0; e <= 12.6; e += 0.01 {
		v := math.Pow(10, e)
		ns = append(ns, v, math.Round(v), math.Round(v*1000)/1000+0.005)
	}

	src, err := os.ReadFile(filepath.Join("src", "format.ts"))
	if err != nil {
		t.Fatal(err)
	}
	js := api.Transform(string(src), api.TransformOptions{Loader: api.LoaderTS, Format: api.FormatESModule, Target: api.ES2022})
	for _, m := range js.Errors {
		t.Fatalf("esbuild over src/format.ts: %s", m.Text)
	}
	dir := t.TempDir()
	mod := filepath.Join(dir, "format.mjs")
	in := filepath.Join(dir, "ns.json")
	input, _ := json.Marshal(ns)
	if err := os.WriteFile(mod, js.Code, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, input, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `const { duration } = await import(process.env.FORMAT_MJS);
const { readFileSync } = await import("node:fs");
console.log(JSON.stringify(JSON.parse(readFileSync(process.env.NS_JSON, "utf8")).map(duration)));`
	cmd := exec.Command(node, "--no-warnings", "--input-type=module", "-e", script)
	cmd.Env = append(os.Environ(), "FORMAT_MJS=file://"+filepath.ToSlash(mod), "NS_JSON="+in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(ns) {
		t.Fatalf("node printed %q (%v), want %d durations", out, err, len(ns))
	}
	for i, c := range cases {
		if got[i] != c.Text {
			t.Errorf("duration(%v) = %q in format.ts, want %q (formatcases)", c.NS, got[i], c.Text)
		}
	}
	for i, v := range ns {
		if want := report.FormatNs(v); got[i] != want {
			t.Errorf("duration(%v) = %q in format.ts, report.FormatNs = %q", v, got[i], want)
		}
	}
}
