package playground

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
	"github.com/wasmgap/wasmgap/internal/results"
	"github.com/wasmgap/wasmgap/kernels"
)

// TestBrowserCellsAreStoredWithTheRunInChromium: two kernels run on native and
// browser-wasm in Chromium are one stored run, the browser's cells named by the browser
// that measured them; /runs/N draws both engines' columns with the page's own table; the
// Results tab draws this run's point in each kernel's distribution.
func TestBrowserCellsAreStoredWithTheRunInChromium(t *testing.T) {
	testBrowserCellsStored(t, headless.Chromium)
}

// TestBrowserCellsAreStoredWithTheRunInFirefox takes the same steps in headless Firefox,
// whose cells are stored as Firefox's.
func TestBrowserCellsAreStoredWithTheRunInFirefox(t *testing.T) {
	testBrowserCellsStored(t, headless.Firefox)
}

// sharedBrowserName is the name the server reads from each browser's user agent.
var sharedBrowserName = map[headless.Kind]string{headless.Chromium: "Chrome", headless.Firefox: "Firefox"}

func testBrowserCellsStored(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	store := tempStore(t)
	ts, p := resultsPage(t, kind, store)
	ctx := p.bound()
	name := sharedBrowserName[kind]

	p.open("k=fib_it,ack&fib_it.n=30&ack.n=2&ack.m=3&e=native,browser-wasm&runs=3&warmup=1&warmup_ms=50")
	p.runAll(2 * time.Minute)
	p.waitFor(`document.querySelector("#status a[data-run]") !== null`, 20*time.Second, "the status to link the stored run")
	id, err := evalAs[string](p, `document.querySelector("#status a[data-run]").dataset.run`)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := p.text("#status"); !strings.Contains(status, "with this browser's cells") {
		t.Errorf("the status %q does not say the browser's cells were stored", status)
	}
	// The lessons above the table and the summary row: browser wasm read against native.
	lessons, err := evalAs[[]string](p, `[...document.querySelectorAll("#lessons li")].map((li) => li.dataset.engine + " " + li.dataset.against + ": " + li.textContent)`)
	if err != nil || !slices.ContainsFunc(lessons, func(l string) bool { return strings.HasPrefix(l, "browser-wasm native: ") }) {
		t.Errorf("the lessons %q (%v), want browser wasm read against native", lessons, err)
	}
	summary, _ := p.text(`#results-table tfoot tr.summary td[data-engine="browser-wasm"] .ratio`)
	if !strings.HasPrefix(summary, "×") {
		t.Errorf("the summary row's browser wasm reads %q, want its geometric mean of ×", summary)
	}
	runID, _ := strconv.ParseInt(id, 10, 64)
	run, err := store.Get(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	byEngine := map[string]int{}
	for _, r := range run.Report.Results {
		byEngine[r.Engine]++
		if r.Engine == "browser-wasm" && !strings.HasPrefix(r.Runtime, name+" ") {
			t.Errorf("browser cell %s named %q, want %s's", r.Label(), r.Runtime, name)
		}
	}
	if byEngine["native"] != 2 || byEngine["browser-wasm"] != 2 {
		t.Fatalf("run %s holds %v, want both kernels on native and browser-wasm", id, byEngine)
	}
	if all, _ := store.List(ctx, results.Filter{}); len(all) != 1 {
		t.Errorf("%d runs stored, want the Run as one", len(all))
	}

	// The run's own page: the page's table, with the browser engine's column.
	if err := p.page.Navigate(p.bound(), ts.URL+"/runs/"+id); err != nil {
		t.Fatal(err)
	}
	p.waitFor(`document.body.dataset.ready === "1"`, 20*time.Second, "the run's page")
	for _, e := range []string{"native", "browser-wasm"} {
		p.waitFor(`document.querySelector('#results-table th[data-engine="`+e+`"]') !== null && document.querySelector('#results-table tr[data-kernel="ack"] td[data-engine="`+e+`"][data-state="done"] .median') !== null`,
			5*time.Second, "the run page's "+e+" column")
	}
	// The same lessons and summary, drawn by the same code.
	p.waitFor(`document.querySelectorAll("#lessons li").length === `+strconv.Itoa(len(lessons)), 10*time.Second, "the run page's lessons")
	if again, _ := p.text(`#results-table tfoot tr.summary td[data-engine="browser-wasm"] .ratio`); again != summary {
		t.Errorf("the run page's summary of browser wasm %q, the page's %q", again, summary)
	}
	if head, _ := p.text(`#results-table th[data-engine="browser-wasm"]`); !strings.Contains(head, name) {
		t.Errorf("the browser column is headed %q, want it named after %s", head, name)
	}
	if href, _ := evalAs[string](p, `document.getElementById("open-playground").getAttribute("href")`); !strings.Contains(href, "e=native,browser-wasm") || !strings.Contains(href, "warmup_ms=50") || !strings.Contains(href, "limit=") {
		t.Errorf("Open in the playground links %q, want every setting of the run", href)
	}

	// The Results tab: this run's point for each kernel.
	p.open("")
	// The Results tab: this run's point for each kernel.
	p.click("#tab-results")
	p.waitFor(`document.getElementById("stored").dataset.loaded >= "1"`, 20*time.Second, "the Results tab")
	for _, k := range []struct{ kernel, args string }{{"fib_it", "30"}, {"ack", "2,3"}} {
		js := `(() => { const s = document.getElementById("stored-kernel"); s.value = "` + k.kernel + `"; s.dispatchEvent(new Event("change"));
			const a = document.getElementById("stored-args"); a.value = "` + k.args + `"; a.dispatchEvent(new Event("change")); return true })()`
		if _, err := evalAs[bool](p, js); err != nil {
			t.Fatal(err)
		}
		label := k.kernel + "(" + strings.ReplaceAll(k.args, ",", ", ") + "):"
		p.waitFor(`document.getElementById("stored-status").textContent.startsWith("`+label+`")`, 20*time.Second, "the "+k.kernel+" distribution")
		p.waitFor(`document.querySelector('#stored-svg circle.stored-point[data-run="`+id+`"][data-engine="browser-wasm"]') !== null`, 10*time.Second,
			"run "+id+"'s point in the "+k.kernel+" distribution")
		p.waitFor(`document.querySelector('#stored-runs-table tr[data-run="`+id+`"] a[href="/runs/`+id+`"]') !== null`, 10*time.Second, "the run's link")
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestStoredRunPageFitsInChromium: at 1366 px, a stored run of eight engines on its own
// page clips no column (its table needs no sideways scroll), keeps the busy and short
// marks the page showed, writes a lopsided interval as its ends, and reads its lessons:
// a sentence where the ratio's interval says which is faster, none for a busy cell, and
// each engine's geometric mean of × with its interval.
func TestStoredRunPageFitsInChromium(t *testing.T) { testStoredRunPageFits(t, headless.Chromium) }

// TestStoredRunPageFitsInFirefox takes the same steps in headless Firefox.
func TestStoredRunPageFitsInFirefox(t *testing.T) { testStoredRunPageFits(t, headless.Firefox) }

// eightEngines are eight engines the page knows, in no particular order.
var eightEngines = []string{"native", "wazero-compiler", "wazero-interpreter", "yaegi", "node-wasm", "browser-wasm", "browser-js", "java"}

func testStoredRunPageFits(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	ctx := context.Background()
	store, err := results.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rep := report.Report{Method: report.Method{Runs: 10, Warmup: 1, WarmupTime: 500 * time.Millisecond, MinSample: 10 * time.Millisecond, Timeout: 20 * time.Second, Timing: report.DefaultTiming},
		Environment: report.Environment{CPU: "Test CPU", Cores: 2, OS: "linux", Arch: "amd64", Go: "go1.26"}}
	for _, k := range []struct {
		name string
		args []int
	}{{"fib_it", []int{40}}, {"fib_rec", []int{25}}} {
		kern, _ := kernels.Lookup(k.name)
		for i, e := range eightEngines {
			r := measure.Result{Kernel: k.name, Args: k.args, Engine: e, Runs: 10, Warmup: 1, Calls: 1000, Value: kern.Expected(k.args), Expected: kern.Expected(k.args)}
			for j := range 10 {
				r.Samples = append(r.Samples, float64(1234567*(i+1))*(1+float64(j)/100))
			}
			switch e {
			case "yaegi": // a lopsided interval
				r.Samples = append(r.Samples[:7], 3e7, 5e7, 9e7)
			case "java": // short of its runs, on a busy machine
				r.Samples, r.Runs = r.Samples[:7], 7
				r.Noise = &measure.Noise{Load1: 3, OtherCPU: 1.5, Cores: 2, Busy: true}
			}
			r.Min, r.Median, r.Max, r.CI = measure.Summarize(r.Samples)
			if !strings.HasPrefix(e, "browser-") && e != "java" && e != "yaegi" {
				// A server cell in three processes, a little apart: its ratios have intervals.
				for _, f := range []float64{1, 1.02, 0.98} {
					r.Executions = append(r.Executions, measure.Execution{Median: r.Median * f, CI: measure.Interval{Lo: r.Median * f * 0.99, Hi: r.Median * f * 1.01, Level: 0.95}, Runs: 3, Calls: 1000})
				}
				r.Median, r.CI = measure.AcrossExecutions(r.Executions)
			}
			rep.Results = append(rep.Results, r)
		}
	}
	id, err := store.Save(ctx, results.NewRun(results.SourceServer, rep))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(Options{Dist: os.DirFS(distDir(t)), Timeout: time.Minute, Results: store}))
	defer ts.Close()
	p := openBrowser(t, kind, ts.URL, 1366)
	if err := p.page.Navigate(p.bound(), ts.URL+"/runs/"+strconv.FormatInt(id, 10)); err != nil {
		t.Fatal(err)
	}
	p.waitFor(`document.body.dataset.ready === "1"`, 20*time.Second, "the run's page")
	n, err := evalAs[float64](p, `document.querySelectorAll("#results-table thead th[data-engine]").length`)
	if err != nil || n != 8 {
		t.Fatalf("%v engine columns (%v), want 8", n, err)
	}
	fits, err := evalAs[bool](p, `(() => { const w = document.getElementById("table"); return w.scrollWidth <= w.clientWidth; })()`)
	if err != nil || !fits {
		t.Errorf("the table of 8 engines at 1366 px is wider than its box (%v): a column is clipped", err)
	}
	if busy, _ := p.text(`#results-table tr[data-kernel="fib_rec"] td[data-engine="java"]`); !strings.Contains(busy, "busy") || !strings.Contains(busy, "7 of 10 runs") {
		t.Errorf("java's cell %q, want its busy and short marks", busy)
	}
	if status, _ := p.text("#status"); !strings.Contains(status, "busy machine") || !strings.Contains(status, "fewer than the 10 runs") {
		t.Errorf("the status %q, want the busy and short cells counted", status)
	}
	if spread, _ := p.text(`#results-table tr[data-kernel="fib_rec"] td[data-engine="yaegi"] .spread`); !strings.Contains(spread, "–") || strings.Contains(spread, "±") {
		t.Errorf("yaegi's lopsided interval reads %q, want its ends", spread)
	}
	lessons, err := evalAs[map[string]string](p, `Object.fromEntries([...document.querySelectorAll("#lessons li")].map((li) => [li.dataset.engine, li.className + "|" + li.textContent]))`)
	if err != nil {
		t.Fatal(err)
	}
	if l := lessons["wazero-compiler"]; !strings.HasPrefix(l, "|wazero compiler runs recursive calls (fib_rec(25)) 2.00× slower than native (×") {
		t.Errorf("wazero compiler's lesson %q, want it 2.00× slower than native with its interval", l)
	}
	// A browser cell is one process: its sentence reads the two cells' own intervals, and says so.
	if l := lessons["browser-wasm"]; !strings.HasPrefix(l, "|browser wasm runs recursive calls (fib_rec(25)) 6.00× slower than native (×") || !strings.Contains(l, "own intervals") {
		t.Errorf("browser wasm's lesson %q, want it 6.00× slower than native from the cells' own intervals", l)
	}
	if l := lessons["java"]; !strings.HasPrefix(l, "muted|") || !strings.Contains(l, "busy machine") {
		t.Errorf("java's lesson %q, want none read from a busy cell", l)
	}
	if sum, _ := p.text(`#results-table tfoot tr.summary td[data-engine="wazero-interpreter"]`); !strings.HasPrefix(sum, "×3.00") || !strings.Contains(sum, "–") {
		t.Errorf("wazero interpreter's summary %q, want ×3.00 with its interval", sum)
	}
	if href, _ := evalAs[string](p, `document.getElementById("open-playground").getAttribute("href")`); !strings.Contains(href, "limit=20") || !strings.Contains(href, "fib_rec.n=25") {
		t.Errorf("Open in the playground links %q, want the run's time limit and sizes", href)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// tempStore is a results store in a temporary folder, closed when the test ends.
func tempStore(t *testing.T) *results.Store {
	t.Helper()
	store, err := results.Open(context.Background(), filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// resultsPage serves the built page with store, as `wasmgap serve --results-db` does, and
// opens it in kind's browser, 1400 px wide.
func resultsPage(t *testing.T, kind headless.Kind, store *results.Store) (*httptest.Server, *browserPage) {
	t.Helper()
	ts := httptest.NewServer(New(Options{Dist: os.DirFS(distDir(t)), Timeout: time.Minute, Results: store}))
	t.Cleanup(ts.Close)
	return ts, openBrowser(t, kind, ts.URL, 1400)
}
