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

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
)

// TestRunPage: a stored run's page is HTML with its table (a time, a ratio to native and
// ×1 on native, k grouped as the playground groups it, ±? and never "wide" without an
// interval, a failure in one line), its chart, method, environment, downloads and the playground
// link with its selection; its CSV has a line per cell; a bad or unknown id is refused.
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
	ts := fakeServer(t, Options{Results: store}, instantRun)
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
	for _, want := range []string{`<table id="run-table"`, "<code>fib_it(30)</code>", "<code>ack(3, 10)</code>", "10 ns", "×25.0",
		`<span class="failure">trapped</span>`, `<svg id="run-chart"`,
		`<td data-engine="wazero-interpreter" data-label="wazero interpreter"`, // a phone's card line's name
		"6 samples, k = 75\u202f430 calls a sample", "4 samples, k = 100 calls a sample", "Test CPU",
		`<span class="median">10 ns</span><span class="small spread">±0.0%</span><span>×1</span>`,
		`<span class="median">250 ns</span><span class="small spread">±?</span><span>×25.0</span>`, "timed samples per cell",
		`href="/api/results/` + itoa(id) + `"`, `href="/runs/` + itoa(id) + `.csv"`,
		`href="/?ack.m=10&amp;ack.n=3&amp;e=native,wazero-interpreter&amp;fib_it.n=30&amp;k=fib_it,ack&amp;runs=6&amp;warmup=1"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the run's page lacks %s", want)
		}
	}
	if strings.Contains(page, "wide</span>") {
		t.Errorf("the run's page calls a cell wide, none is")
	}
	if strings.Contains(page, "wasm stack trace:\n") && !strings.Contains(page, `title="wasm error`) {
		t.Errorf("the trace is shown in the table, not in the failure's title")
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
