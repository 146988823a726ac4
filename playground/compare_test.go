package playground

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

// noisySamples returns n samples of a call of center ns on a loaded machine: each up to
// 30% slower, at random (seeded: the same every time).
func noisySamples(seed uint64, center float64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = center * (1 + 0.3*rng.Float64())
	}
	return out
}

func postCompare(t *testing.T, url string, body any) (*http.Response, map[string]any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/api/compare", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("status %d: the answer is not JSON: %v", resp.StatusCode, err)
	}
	return resp, out
}

// The page's comparison is the CLI's: the same cells give the same verdicts, p-values and
// significance as report.CompareWith, the code behind `wasmgap compare`.
func TestCompareAPIDecidesAsTheCLI(t *testing.T) {
	ts := fakeServer(t, Options{Engines: []string{"native"}}, instantRun)
	cases := []struct {
		name     string
		old, new []float64
		alpha    float64
		want     string
		sig      bool
	}{
		{"overlapping noise", noisySamples(1, 40, 6), noisySamples(2, 40, 6), 0, "~ no significant difference (p=", false},
		{"a real 20% change", noisySamples(5, 40, 10), noisySamples(6, 48, 10), 0, "+", true},
		{"3 samples a side", []float64{40, 41, 42}, []float64{80, 81, 82}, 0, "~ need ≥ 4 samples a side (3 and 3)", false},
		{"4 a side at alpha 0.001", []float64{40, 41, 42, 43}, []float64{80, 81, 82, 83}, 0.001, "~ need ≥ 7 samples a side (4 and 4)", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cell := func(s []float64) compareCell {
				return compareCell{Kernel: "test4", Args: []int{50000, 1000}, Engine: "native", Samples: s}
			}
			req := compareRequest{Old: []compareCell{cell(c.old), {Kernel: "fib_it", Args: []int{40}, Engine: "native", Samples: c.old}}, New: []compareCell{cell(c.new)}, Alpha: c.alpha}
			resp, out := postCompare(t, ts.URL, req)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %v", resp.StatusCode, out)
			}
			changes, _ := out["changes"].([]any)
			if len(changes) != 1 {
				t.Fatalf("changes: %v", out)
			}
			ch := changes[0].(map[string]any)
			if v, _ := ch["verdict"].(string); !strings.HasPrefix(v, c.want) || ch["significant"] != c.sig {
				t.Errorf("verdict %q, significant %v; want %q…, %v", v, ch["significant"], c.want, c.sig)
			}
			if ch["label"] != "test4(50000, 1000)" {
				t.Errorf("label %v", ch["label"])
			}
			if only, _ := out["only_old"].([]any); len(only) != 1 || only[0] != "fib_it(40) on native" {
				t.Errorf("only_old %v", out["only_old"])
			}
			// The CLI's code on the same cells.
			r := func(s []float64) report.Report {
				return report.Report{Results: []measure.Result{{Kernel: "test4", Args: []int{50000, 1000}, Engine: "native", Samples: s}}}
			}
			cli, err := report.CompareWith(r(c.old), r(c.new), report.CompareOptions{Alpha: c.alpha})
			if err != nil {
				t.Fatal(err)
			}
			if want := cli.Changes[0]; ch["verdict"] != want.Verdict() || ch["p"] != want.P || ch["significant"] != want.Significant {
				t.Errorf("the API says %v (p %v), wasmgap compare %q (p %v)", ch["verdict"], ch["p"], want.Verdict(), want.P)
			}
			if alpha, _ := out["alpha"].(float64); alpha != cli.Alpha || out["samples_needed"] != float64(report.SamplesNeeded(cli.Alpha)) {
				t.Errorf("alpha %v, samples_needed %v", out["alpha"], out["samples_needed"])
			}
		})
	}
}

func TestCompareAPIRefusesBadRequests(t *testing.T) {
	ts := fakeServer(t, Options{Engines: []string{"native"}}, instantRun)
	good := []compareCell{{Kernel: "fib_it", Args: []int{40}, Engine: "native", Samples: []float64{1, 2, 3, 4}}}
	other := []compareCell{{Kernel: "fib_rec", Args: []int{30}, Engine: "native", Samples: []float64{1, 2, 3, 4}}}
	for _, c := range []struct {
		name     string
		body     any
		field    string
		mentions string
	}{
		{"no old cells", map[string]any{"new": good}, "old", "old has no cells"},
		{"no new cells", map[string]any{"old": good, "new": []any{}}, "new", "new has no cells"},
		{"unknown field", map[string]any{"old": good, "new": good, "beta": 1}, "beta", `unknown field "beta"`},
		{"alpha out of range", map[string]any{"old": good, "new": good, "alpha": 2}, "alpha", "between 0 and 1"},
		{"no kernel", map[string]any{"old": []map[string]any{{"engine": "native"}}, "new": good}, "old[0]", "names no kernel or engine"},
		{"negative sample", map[string]any{"old": good, "new": []map[string]any{{"kernel": "fib_it", "args": []int{40}, "engine": "native", "samples_ns": []float64{1, -2}}}}, "new[0].samples_ns", "a positive number"},
		{"nothing in common", map[string]any{"old": good, "new": other}, "", "no cell in common"},
		{"not an object", []int{1}, "", "the body must be one JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, out := postCompare(t, ts.URL, c.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want 400: %v", resp.StatusCode, out)
			}
			if msg, _ := out["error"].(string); !strings.Contains(msg, c.mentions) {
				t.Errorf("error %q, want one that mentions %q", msg, c.mentions)
			}
			if f, _ := out["field"].(string); f != c.field {
				t.Errorf("field %q, want %q", f, c.field)
			}
		})
	}
	resp, err := http.Post(ts.URL+"/api/compare", "text/plain", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: status %d, want 415", resp.StatusCode)
	}
	big := strings.Repeat(" ", maxCompareBody+1)
	resp, err = http.Post(ts.URL+"/api/compare", "application/json", strings.NewReader(big+"{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body past the limit: status %d, want 413", resp.StatusCode)
	}
}
