package playground

import (
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
)

// TestRunPage: a stored run's page is the page's bundle naming the run (its script draws
// the run from its JSON with the playground's table: TestStoredRunPage in the browsers),
// with its downloads; its CSV has a line per cell; a bad or unknown id is refused, and an
// unbuilt bundle is said to be one.
func TestRunPage(t *testing.T) {
	ctx := context.Background()
	store, err := results.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ok := func(engine string, ns float64, samples, calls int) measure.Result {
		r := measure.Result{Kernel: "fib_it", Args: []int{30}, Engine: engine, Runs: samples, Calls: calls, Value: 832040, Expected: 832040}
		for range samples {
			r.Samples = append(r.Samples, ns)
		}
		r.Min, r.Median, r.Max, r.CI = measure.Summarize(r.Samples)
		return r
	}
	failed := measure.Result{Kernel: "ack", Args: []int{3, 10}, Engine: "wazero-interpreter", Failure: "wasm error: unreachable\nwasm stack trace:\n\tack(i32,i32) i64"}
	rep := report.Report{Method: report.Method{Runs: 6, Warmup: 1, Timing: report.DefaultTiming},
		Environment: report.Environment{CPU: "Test CPU", Cores: 2, OS: "linux", Arch: "amd64", Go: "go1.26"},
		Results:     []measure.Result{ok("native", 10, 6, 75430), ok("wazero-interpreter", 250, 4, 100), failed}}
	id, err := store.Save(ctx, results.NewRun(results.SourceServer, rep))
	if err != nil {
		t.Fatal(err)
	}
	dist := fstest.MapFS{"manifest.json": {Data: []byte(`{"files":{"main.js":"main-ABC.js","main.css":"main-DEF.css"}}`)}}
	ts := fakeServer(t, Options{Results: store, Dist: dist}, instantRun)
	get := func(path string) (*http.Response, string) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, page := get("/runs/" + itoa(id))
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /runs/%d: %d %s", id, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{`data-page="run" data-run="` + itoa(id) + `"`, `src="/main-ABC.js"`, `href="/main-DEF.css"`,
		`href="/api/results/` + itoa(id) + `"`, `href="/runs/` + itoa(id) + `.csv"`, `id="table"`, `id="open-playground"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the run's page lacks %s", want)
		}
	}
	resp, text := get("/runs/" + itoa(id) + ".csv")
	lines, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if resp.StatusCode != http.StatusOK || err != nil || len(lines) != 4 || lines[0][0] != "kernel" || lines[1][2] != "native" || lines[3][11] == "" {
		t.Errorf("CSV: %d %v\n%s", resp.StatusCode, err, text)
	}
	for path, status := range map[string]int{"/runs/999": http.StatusNotFound, "/runs/x": http.StatusBadRequest} {
		if resp, _ := get(path); resp.StatusCode != status {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, status)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRunPageUnbuilt: without the page's bundle, a stored run's page says so and where its
// data is.
func TestRunPageUnbuilt(t *testing.T) {
	ctx := context.Background()
	store, err := results.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r := measure.Result{Kernel: "fib_it", Args: []int{30}, Engine: "native", Runs: 1, Calls: 1, Value: 832040, Expected: 832040, Samples: []float64{5}}
	id, err := store.Save(ctx, results.NewRun(results.SourceServer, report.Report{Method: report.Method{Runs: 1}, Results: []measure.Result{r}}))
	if err != nil {
		t.Fatal(err)
	}
	ts := fakeServer(t, Options{Results: store, Dist: fstest.MapFS{}}, instantRun)
	resp, err := http.Get(ts.URL + "/runs/" + itoa(id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `href="/api/results/`+itoa(id)+`"`) || !strings.Contains(string(b), "not built") || strings.Contains(string(b), "<script type=\"module\"") {
		t.Errorf("GET /runs/%d without a bundle: %d %q, want the page saying so, linking its JSON", id, resp.StatusCode, b)
	}
}
