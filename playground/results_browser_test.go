package playground

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/results"
)

// TestBrowserSharesAndSeesItsRunInChromium: two kernels run on browser-wasm in Chromium,
// "Share these results" stores them as a browser's run, and the Results tab draws this
// run's point in each kernel's distribution; a tampered submission stores nothing
// (TestShareRefusesTamperedSubmissions, on the same handler).
func TestBrowserSharesAndSeesItsRunInChromium(t *testing.T) { testBrowserShares(t, headless.Chromium) }

// TestBrowserSharesAndSeesItsRunInFirefox takes the same steps in headless Firefox, whose
// run is stored as Firefox's.
func TestBrowserSharesAndSeesItsRunInFirefox(t *testing.T) { testBrowserShares(t, headless.Firefox) }

// sharedBrowserName is the name the server reads from each browser's user agent.
var sharedBrowserName = map[headless.Kind]string{headless.Chromium: "Chrome", headless.Firefox: "Firefox"}

func testBrowserShares(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dist := distDir(t)
	store, err := results.Open(context.Background(), filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ts := httptest.NewServer(New(Options{Dist: os.DirFS(dist), Timeout: time.Minute, Results: store}))
	defer ts.Close()
	p := openBrowser(t, kind, ts.URL, 1400)
	ctx := p.bound()
	name := sharedBrowserName[kind]

	p.open("k=fib_it,ack&fib_it.n=30&ack.n=2&ack.m=3&e=browser-wasm&runs=3&warmup=1&warmup_ms=50")
	p.runAll(2 * time.Minute)
	p.waitFor(`!document.getElementById("share").hidden`, 10*time.Second, "the share button")
	if n, _ := store.List(ctx, results.Filter{}); len(n) != 0 {
		t.Fatalf("%d runs stored before the click: nothing is sent without it", len(n))
	}
	p.click("#share")
	p.waitFor(`document.getElementById("share-note").dataset.run !== undefined`, 20*time.Second, "the share to be stored")
	id, err := evalAs[string](p, `document.getElementById("share-note").dataset.run`)
	if err != nil {
		t.Fatal(err)
	}
	runID, _ := strconv.ParseInt(id, 10, 64)
	run, err := store.Get(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Source != results.SourceBrowser || len(run.Report.Results) != 2 || run.Browser.Name != name || !run.Browser.CrossOriginIsolated || run.Browser.HardwareConcurrency < 1 {
		t.Fatalf("stored %+v", run)
	}

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
	// The browser filter keeps it; another OS does not exist among the facets.
	p.waitFor(`[...document.getElementById("stored-browser").options].some((o) => o.value === "`+name+`")`, 10*time.Second, "the browser facet")
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
