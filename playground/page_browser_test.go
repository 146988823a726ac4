package playground

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/chatserver"
	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/loadpage"
	"github.com/wasmgap/wasmgap/internal/results"
)

// fullPage is a browser tab on a playground server as `wasmgap serve` makes it: the real
// chat and load panels beside it and a results store.
type fullPage struct {
	*browserPage
	store *results.Store
}

// newFullPage starts a playground server with the chat, the load panel and a results
// store, and a browser of the kind at width × 1000 CSS pixels.
func newFullPage(t *testing.T, kind headless.Kind, width int) *fullPage {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dist := distDir(t)
	store := tempStore(t)
	chat, err := chatserver.New(chatserver.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		chat.Shutdown(ctx)
	})
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	srv := New(Options{Dist: os.DirFS(dist), Timeout: time.Minute, Results: store, Chat: chat.Handler(),
		Load: loadpage.Handler(loadpage.Options{BaseURL: ts.URL, ChatPath: "/chat/"})})
	h = srv
	p := openBrowser(t, kind, ts.URL, width)
	p.srv = srv
	return &fullPage{browserPage: p, store: store}
}

// storedRuns lists the store's runs, newest first.
func (p *fullPage) storedRuns() []results.Summary {
	p.t.Helper()
	list, err := p.store.List(context.Background(), results.Filter{})
	if err != nil {
		p.t.Fatal(err)
	}
	return list
}

// TestRunIsADocumentInChromium: after a two-engine run, ticking a third engine, the
// articles' figures or unticking and ticking again leaves both measured cells; Copy as
// Markdown copies what was measured; the Run is one stored run; a reload of its run=1
// link shows it instead of running again, with a button to run again.
func TestRunIsADocumentInChromium(t *testing.T) { testRunIsADocument(t, headless.Chromium) }

// TestRunIsADocumentInFirefox takes the same steps in headless Firefox.
func TestRunIsADocumentInFirefox(t *testing.T) { testRunIsADocument(t, headless.Firefox) }

func testRunIsADocument(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newFullPage(t, kind, 1366)
	const query = "k=fib_it&fib_it.n=30&e=native,wazero-interpreter&runs=2&warmup=0&min_sample_ms=1&warmup_ms=0"
	p.open(query)
	p.runAll(2 * time.Minute)
	want := expected(t, "fib_it", 30)
	measured := func(when string) {
		t.Helper()
		for _, e := range []string{"native", "wazero-interpreter"} {
			if c := p.cell("fib_it", e); c.State != "done" || c.Value != want {
				t.Errorf("%s: fib_it(30) on %s: %+v, want its measurement kept", when, e, c)
			}
		}
	}
	measured("after the run")
	p.click(`input[name="engine"][value="browser-js"]`)
	measured("after ticking browser-js")
	if c := p.cell("fib_it", "browser-js"); c.State != "idle" {
		t.Errorf("the newly ticked browser-js cell: %+v, want idle", c)
	}
	p.click(`input[name="engine"][value="native"]`)
	if c := p.cell("fib_it", "native"); c.State != "missing" {
		t.Errorf("native unticked: its cell %+v, want hidden", c)
	}
	p.click(`input[name="engine"][value="native"]`)
	measured("after unticking and ticking native again")
	p.click("#history")
	measured("after the articles' figures")
	p.click("#history")

	if err := p.eval(`navigator.clipboard.writeText = async (t) => { window.copied = t; }`, nil); err != nil {
		t.Fatal(err)
	}
	p.click("#copy")
	p.waitFor(`typeof window.copied === "string"`, 5*time.Second, "the Markdown")
	md, err := evalAs[string](p.browserPage, `window.copied`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md, "idle") || !strings.Contains(md, "| `fib_it(30)` |") || strings.Contains(md, "browser JS") {
		t.Errorf("Markdown copies what is not measured:\n%s", md)
	}

	// One Run of two server engines: one stored run of two cells, linked from the status.
	runs := p.storedRuns()
	if len(runs) != 1 || len(runs[0].Cells) != 2 {
		t.Fatalf("stored runs %+v, want one run of two cells", runs)
	}
	link, err := evalAs[string](p.browserPage, `document.querySelector("#status a[data-run]")?.getAttribute("href") ?? ""`)
	if err != nil || link != fmt.Sprintf("/runs/%d", runs[0].ID) {
		t.Errorf("the status links %q (%v), want /runs/%d", link, err, runs[0].ID)
	}

	// A reload of the run=1 link shows the run of a moment ago and runs nothing.
	p.open(query + "&run=1")
	p.waitFor(`document.getElementById("run-again") !== null`, 10*time.Second, "the kept run and its Run again button")
	measured("after a reload of the run=1 link")
	time.Sleep(time.Second)
	if running, err := evalAs[string](p.browserPage, `document.body.dataset.running ?? ""`); err != nil || running == "1" {
		t.Errorf("the reload runs again (running = %q, %v)", running, err)
	}
	if n := len(p.storedRuns()); n != 1 {
		t.Errorf("%d stored runs after the reload, want still 1", n)
	}
	p.click("#run-again")
	p.waitFor(`document.body.dataset.running === "0"`, 2*time.Minute, "the second run")
	if runs := p.storedRuns(); len(runs) != 2 || len(runs[0].Cells) != 2 {
		t.Errorf("stored runs after Run again %+v, want two runs of two cells", runs)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestPageStaysPutInChromium: five seconds after a run=1 link loads at 1366 px, with the
// real chat and load panels, the page has not scrolled and nothing in it has the focus
// (Chromium's chat iframe took it with its nickname field).
func TestPageStaysPutInChromium(t *testing.T) { testPageStaysPut(t, headless.Chromium) }

// TestPageStaysPutInFirefox takes the same steps in headless Firefox.
func TestPageStaysPutInFirefox(t *testing.T) { testPageStaysPut(t, headless.Firefox) }

func testPageStaysPut(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newFullPage(t, kind, 1366)
	for _, link := range []string{
		"k=fib_it&fib_it.n=30&e=native&runs=2&warmup=0&min_sample_ms=1&warmup_ms=0&run=1",
		"k=fib_it&fib_it.n=30&e=native&runs=2&warmup=0#custom=",
	} {
		p.open(link)
		time.Sleep(5 * time.Second)
		got, err := evalAs[[]string](p.browserPage, `[String(window.scrollY), document.activeElement?.tagName ?? ""]`)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != "0" || got[1] == "IFRAME" {
			t.Errorf("?%s: 5 s after loading, scrollY = %s and the focus is in %s; want 0 and not in a panel", link, got[0], got[1])
		}
	}
}

// TestProgressBesideRunInChromium: while a Run goes on, its progress ("1 of 2 cells", with
// the time left only when every cell left has a forecast of its own) is beside Run and, once the page is scrolled away from Run, in a bar
// fixed to the viewport with a Cancel that stops the run.
func TestProgressBesideRunInChromium(t *testing.T) { testProgressBesideRun(t, headless.Chromium) }

// TestProgressBesideRunInFirefox takes the same steps in headless Firefox.
func TestProgressBesideRunInFirefox(t *testing.T) { testProgressBesideRun(t, headless.Firefox) }

func testProgressBesideRun(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newFullPage(t, kind, 1366)
	// fib_rec(32) is milliseconds natively and seconds a call on wazero's interpreter:
	// time to look at the page while the second cell runs.
	p.open("k=fib_rec&fib_rec.n=32&e=native,wazero-interpreter&runs=2&warmup=1&min_sample_ms=1&warmup_ms=0")
	p.click("#run")
	p.waitFor(`document.getElementById("progress").textContent.includes(" of 2 cells")`, 20*time.Second, "the progress beside Run")
	// A fresh server and browser know neither cell's time: no time left is made up from
	// the first, cheap cell for the second, costly one.
	p.waitFor(`document.getElementById("progress").textContent === "1 of 2 cells"`, time.Minute, "the count beside Run, with no time left")
	// The running cell says how long it has been running.
	p.waitFor(`/^\d+ s$/.test(document.querySelector("#table .elapsed")?.textContent ?? "")`, 30*time.Second, "the running cell's elapsed seconds")
	// Scrolled to the end, Run is out of sight: the bar shows the progress and Cancel.
	if err := p.eval(`window.scrollTo(0, document.documentElement.scrollHeight)`, nil); err != nil {
		t.Fatal(err)
	}
	visible := `(() => { const b = document.getElementById("runbar"); if (b.hidden) return false;
		const r = b.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && b.innerText.includes("1 of 2 cells"); })()`
	p.waitFor(visible, 10*time.Second, "the floating progress bar")
	if running, _ := evalAs[string](p.browserPage, `document.body.dataset.running`); running != "1" {
		t.Skip("the second cell ended before the bar could be used: nothing to cancel")
	}
	p.click("#runbar-cancel")
	p.waitFor(`document.body.dataset.running === "0" && document.getElementById("runbar").hidden`, 20*time.Second, "the run to stop and the bar to go")
}

// TestLoadPanelShowsItsResultInChromium: after a load run in the load panel, its frame has
// no scroll of its own and, the panel scrolled to, its requests/s is in the viewport.
func TestLoadPanelShowsItsResultInChromium(t *testing.T) {
	testLoadPanelShowsItsResult(t, headless.Chromium)
}

// TestLoadPanelShowsItsResultInFirefox takes the same steps in headless Firefox.
func TestLoadPanelShowsItsResultInFirefox(t *testing.T) {
	testLoadPanelShowsItsResult(t, headless.Firefox)
}

func testLoadPanelShowsItsResult(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newFullPage(t, kind, 1366)
	p.open("k=fib_it&e=native")
	const frame = `document.querySelector("#load-panel iframe")`
	if err := p.eval(`document.getElementById("load-panel").scrollIntoView(), true`, new(bool)); err != nil {
		t.Fatal(err)
	}
	p.waitFor(frame+`?.contentDocument?.getElementById("start") != null`, 20*time.Second, "the load panel")
	err := p.eval(`(() => { const d = `+frame+`.contentDocument;
		d.querySelector('input[name="n"]').value = "200"; d.querySelector('input[name="c"]').value = "2";
		d.getElementById("start").click(); return true })()`, new(bool))
	if err != nil {
		t.Fatal(err)
	}
	p.waitFor(frame+`.contentDocument.getElementById("summary").innerText.includes("Requests/s")`, time.Minute, "the load run's summary")
	time.Sleep(500 * time.Millisecond) // the frame's resize
	got, err := evalAs[[]float64](p.browserPage, `(() => {
		const f = `+frame+`; document.getElementById("load-panel").scrollIntoView({block: "start"});
		const d = f.contentDocument;
		const row = [...d.querySelectorAll("#summary tr, #summary th, #summary td")].find((e) => e.textContent.startsWith("Requests/s"));
		return [d.documentElement.scrollHeight, d.documentElement.clientHeight, f.getBoundingClientRect().top + row.getBoundingClientRect().bottom, innerHeight];
	})()`)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] > got[1]+1 {
		t.Errorf("the load panel scrolls inside its frame: %v px of page in %v", got[0], got[1])
	}
	if got[2] > got[3] {
		t.Errorf("requests/s is at %v px, below the viewport's %v with the panel scrolled to", got[2], got[3])
	}
}

// TestFailureInOneLineInChromium: a cell that overflows its stack shows it in one line,
// the trace in its details only.
func TestFailureInOneLineInChromium(t *testing.T) { testFailureInOneLine(t, headless.Chromium) }

// TestFailureInOneLineInFirefox takes the same steps in headless Firefox.
func TestFailureInOneLineInFirefox(t *testing.T) { testFailureInOneLine(t, headless.Firefox) }

func testFailureInOneLine(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newFullPage(t, kind, 1366)
	// ack(3, 10) overflows wazero's interpreter's stack; fib_rec(80) is refused by the
	// JavaScript port in a long sentence.
	p.open("k=ack,fib_rec&ack.n=3&ack.m=10&fib_rec.n=80&e=wazero-interpreter,browser-js&runs=1&warmup=0&min_sample_ms=0")
	p.runAll(2 * time.Minute)
	c := p.cell("ack", "wazero-interpreter")
	if c.State != "done" || strings.TrimSpace(c.Text) != "stack overflow" {
		t.Errorf("the failed cell reads %q (%s), want the one line \"stack overflow\"", c.Text, c.State)
	}
	if c := p.cell("fib_rec", "browser-js"); c.State != "done" || !strings.Contains(c.Text, "exceeds 2^53") {
		t.Errorf("fib_rec(80) on browser-js: %+v, want the port's refusal", c)
	}
	lines, err := evalAs[[]float64](p.browserPage, `[...document.querySelectorAll('#results-table td.failed')].map((td) => {
		const f = td.querySelector(".failure");
		return td.children.length === 1 ? f.getBoundingClientRect().height / parseFloat(getComputedStyle(f).lineHeight) : 99; })`)
	if err != nil || len(lines) < 2 {
		t.Fatalf("failed cells' heights %v (%v), want two failed cells at least", lines, err)
	}
	for _, l := range lines {
		if l > 1.5 {
			t.Errorf("a failed cell takes %.1f lines (%v), want one: %v", l, err, lines)
		}
	}
}

// TestTableReadsInChromium: the × column is taken against the engine chosen (kept in the
// URL), a header sorts the rows by its times, the kernel column stays while the table
// scrolls sideways, and at 390 px each kernel is a card of its engines' lines, nothing
// scrolling sideways, each median on one line; the interpreter against compiled code
// (wazero's two tiers) fits 390 px too, no time broken from its unit.
func TestTableReadsInChromium(t *testing.T) { testTableReads(t, headless.Chromium) }

// TestTableReadsInFirefox takes the same steps in headless Firefox.
func TestTableReadsInFirefox(t *testing.T) { testTableReads(t, headless.Firefox) }

func testTableReads(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newFullPage(t, kind, 1366)
	p.open("k=fib_it,fib_rec&fib_it.n=30&fib_rec.n=18&e=native,wazero-interpreter,wazero-compiler&runs=2&warmup=0&min_sample_ms=1&warmup_ms=0")
	p.runAll(2 * time.Minute)
	ratio := func(engine string) string {
		t.Helper()
		r, err := evalAs[string](p.browserPage, `document.querySelector('#results-table tr[data-kernel="fib_rec"] td[data-engine="`+engine+`"] .ratio')?.textContent ?? ""`)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got := ratio("native"); got != "×1" {
		t.Errorf("native's ratio %q, want ×1 (the default base)", got)
	}
	if err := p.eval(`(() => { const s = document.getElementById("baseline"); s.value = "wazero-interpreter"; s.dispatchEvent(new Event("change")); return true })()`, new(bool)); err != nil {
		t.Fatal(err)
	}
	if got := ratio("wazero-interpreter"); got != "×1" {
		t.Errorf("wazero-interpreter's ratio %q with it as the base, want ×1", got)
	}
	if got := ratio("native"); !strings.HasPrefix(got, "×0.") {
		t.Errorf("native's ratio %q against wazero's interpreter, want below 1", got)
	}
	if q, _ := evalAs[string](p.browserPage, `location.search`); !strings.Contains(q, "base=wazero-interpreter") {
		t.Errorf("the URL %q does not keep the base", q)
	}
	order := func() string {
		t.Helper()
		o, err := evalAs[string](p.browserPage, `[...document.querySelectorAll("#results-table tbody tr:not(.history)")].map((tr) => tr.dataset.kernel).join(",")`)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	p.click(`#results-table th[data-engine="native"]`)
	if o := order(); o != "fib_it,fib_rec" {
		t.Errorf("sorted by native, fastest first: %s", o)
	}
	p.click(`#results-table th[data-engine="native"]`)
	if o := order(); o != "fib_rec,fib_it" {
		t.Errorf("sorted by native, slowest first: %s", o)
	}
	if pos, err := evalAs[string](p.browserPage, `getComputedStyle(document.querySelector("#results-table tbody th.rowhead")).position`); err != nil || pos != "sticky" {
		t.Errorf("at 1366 px the kernel column is %q (%v), want sticky", pos, err)
	}
	if err := p.page.SetViewport(p.bound(), 390, 900); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	// A phone: a card per kernel, each engine's cell a line headed by the engine's name;
	// nothing scrolls sideways, neither the page nor the table, and no median breaks.
	type phone struct {
		PageWide, TableWide, Tall   int
		Labels                      []string
		Lines                       []float64
		JITRows, JITWide, JITTall   int
		JITTableWide, JITWrapClient int
	}
	got, err := evalAs[phone](p.browserPage, `(() => {
		const table = document.getElementById("results-table");
		const tds = [...table.querySelectorAll('tbody tr[data-kernel="fib_rec"] td.cell')];
		const jit = document.getElementById("jit-table");
		return {
			PageWide: document.documentElement.scrollWidth - innerWidth,
			TableWide: table.parentElement.scrollWidth - table.parentElement.clientWidth,
			Tall: [...table.querySelectorAll(".median")].filter((m) => m.getBoundingClientRect().height > 1.5 * parseFloat(getComputedStyle(m).lineHeight)).length,
			// Chromium computes the content to the name, Firefox keeps attr(data-label).
			Labels: tds.map((td) => {
				const c = getComputedStyle(td, "::before").content;
				return c === JSON.stringify(td.dataset.label) || c === "attr(data-label)" ? td.dataset.label : "no name: " + c;
			}),
			Lines: tds.map((td) => td.getBoundingClientRect().height / parseFloat(getComputedStyle(td.querySelector(".median")).lineHeight)),
			// The interpreter against compiled code (wazero's two tiers here).
			JITRows: jit ? jit.tBodies[0].rows.length : -1,
			JITWide: jit ? jit.parentElement.scrollWidth - jit.parentElement.clientWidth : -1,
			JITTableWide: jit ? jit.scrollWidth - jit.clientWidth : -1,
			JITWrapClient: jit ? jit.parentElement.clientWidth : -1,
			JITTall: jit ? [...jit.querySelectorAll("td.num")].filter((td) => {
				const r = document.createRange();
				r.selectNodeContents(td);
				return r.getClientRects().length > 1;
			}).length : -1,
		};
	})()`)
	if err != nil {
		t.Fatal(err)
	}
	if got.PageWide > 0 || got.TableWide > 0 || got.Tall != 0 {
		t.Errorf("at 390 px: the page is %d px too wide, the table %d px, %d medians break across lines; want 0, 0, 0", got.PageWide, got.TableWide, got.Tall)
	}
	if got.JITRows != 2 || got.JITWide > 0 || got.JITTableWide > 0 || got.JITWrapClient <= 0 || got.JITTall != 0 {
		t.Errorf("at 390 px the interpreter against compiled code: %d rows (want 2), its box scrolls %d px and the table %d px sideways in %d px (want 0 and 0), %d times break across lines (want 0)",
			got.JITRows, got.JITWide, got.JITTableWide, got.JITWrapClient, got.JITTall)
	}
	if want := []string{"native", "wazero compiler", "wazero interpreter"}; !slices.Equal(got.Labels, want) {
		t.Errorf("at 390 px fib_rec's cells are headed %q, want the engines' names %q", got.Labels, want)
	}
	// The tab bar at 390 px, every tab shown ("Your kernel" too: this server has user
	// kernels off, so its tab is unhidden here as a server with them on shows it): no label
	// on two lines, none out of the page or its bar.
	type tabs struct {
		Shown       []string
		TwoLines    []string
		Out         []string
		BarOverflow int
	}
	tb, err := evalAs[tabs](p.browserPage, `(() => {
		const bar = document.getElementById("tabs");
		document.getElementById("tab-custom").hidden = false;
		const shown = [...bar.querySelectorAll('[role="tab"]')].filter((tab) => !tab.hidden && tab.getClientRects().length > 0);
		const lines = (tab) => {
			const r = document.createRange();
			r.selectNodeContents(tab);
			return new Set([...r.getClientRects()].filter((q) => q.width > 0).map((q) => Math.round(q.top))).size;
		};
		const out = shown.filter((tab) => {
			const r = tab.getBoundingClientRect();
			return r.left < 0 || r.right > document.documentElement.clientWidth;
		});
		return {
			Shown: shown.map((tab) => tab.textContent),
			TwoLines: shown.filter((tab) => lines(tab) > 1).map((tab) => tab.textContent),
			Out: out.map((tab) => tab.textContent),
			BarOverflow: bar.scrollWidth - bar.clientWidth,
		};
	})()`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"The articles' kernels", "Your kernel", "Results", "Warm-up"}; !slices.Equal(tb.Shown, want) {
		t.Errorf("at 390 px the tabs shown are %q, want %q", tb.Shown, want)
	}
	if len(tb.TwoLines) > 0 || len(tb.Out) > 0 || tb.BarOverflow > 0 {
		t.Errorf("at 390 px tab labels on two lines %q, tabs out of the page %q, the bar %d px too wide; want none, none, 0", tb.TwoLines, tb.Out, tb.BarOverflow)
	}
	for _, l := range got.Lines {
		if l > 2.5 {
			t.Errorf("at 390 px a cell of fib_rec takes %.1f lines (%v), want its name and numbers on a line or two", l, got.Lines)
		}
	}
}

// TestForecastAsksInChromium: the per-cell time limit comes from the link and bounds the
// server's cell; a cell that failed here is forecast with the selection's time, and Run
// asks about it first: skipped, nothing runs.
func TestForecastAsksInChromium(t *testing.T) { testForecastAsks(t, headless.Chromium) }

// TestForecastAsksInFirefox takes the same steps in headless Firefox.
func TestForecastAsksInFirefox(t *testing.T) { testForecastAsks(t, headless.Firefox) }

func testForecastAsks(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newFullPage(t, kind, 1366)
	const query = "k=ack&ack.n=3&ack.m=10&e=wazero-interpreter&runs=1&warmup=0&min_sample_ms=0&limit=20"
	p.open(query)
	if v, err := evalAs[string](p.browserPage, `document.getElementById("limit_s").value`); err != nil || v != "20" {
		t.Errorf("the time limit input holds %q (%v), want the link's 20", v, err)
	}
	p.runAll(2 * time.Minute)
	runs := p.storedRuns()
	if len(runs) != 1 {
		t.Fatalf("stored runs %+v, want one", runs)
	}
	run, err := p.store.Get(context.Background(), runs[0].ID)
	if err != nil || run.Report.Method.Timeout != 20*time.Second {
		t.Errorf("the stored run's time limit %v (%v), want the page's 20s", run.Report.Method.Timeout, err)
	}
	p.open(query)
	note, err := p.text("#form-note")
	if err != nil || !strings.Contains(note, "about ") {
		t.Errorf("the form's note %q (%v), want the selection's forecast time", note, err)
	}
	p.click("#run")
	p.waitFor(`document.getElementById("ask-skip") !== null`, 10*time.Second, "Run to ask about the cell expected to fail")
	ask, _ := p.text("#ask")
	if !strings.Contains(ask, "ack(3, 10) on wazero interpreter") {
		t.Errorf("the question %q does not name the cell", ask)
	}
	p.click("#ask-skip")
	p.waitFor(`document.body.dataset.running === "0"`, time.Minute, "the run to end")
	if n := len(p.storedRuns()); n != 1 {
		t.Errorf("%d stored runs after skipping the only cell, want still 1", n)
	}
}

// TestTimedOutAsksInChromium: once a cell times out, Run asks before the same kernel's
// other cells start, each of which would take the whole limit too; skipped, they do not
// run and the Run ends.
func TestTimedOutAsksInChromium(t *testing.T) { testTimedOutAsks(t, headless.Chromium) }

// TestTimedOutAsksInFirefox takes the same steps in headless Firefox.
func TestTimedOutAsksInFirefox(t *testing.T) { testTimedOutAsks(t, headless.Firefox) }

func testTimedOutAsks(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newFullPage(t, kind, 1366)
	// ack(3, 13) is about 2^13 times ack(3, 0)'s work: far past a 1 s limit natively.
	p.open("k=ack&ack.n=3&ack.m=13&e=native,wazero-compiler,wazero-interpreter&runs=1&warmup=0&min_sample_ms=0&limit=1")
	p.click("#run")
	p.waitFor(`document.getElementById("ask-skip") !== null`, 2*time.Minute, "Run to ask about the cells after the one that timed out")
	if c := p.cell("ack", "native"); c.State != "done" || strings.TrimSpace(c.Text) != "timed out after 1 s" {
		t.Errorf("native's cell %+v, want it timed out after 1 s", c)
	}
	ask, _ := p.text("#ask")
	if want := "ack(3, 13) timed out after 1 s on native; its 2 other cells (wazero compiler, wazero interpreter) may too"; !strings.Contains(ask, want) {
		t.Errorf("the question %q, want %q", ask, want)
	}
	if progress, _ := p.text("#progress"); !strings.HasPrefix(progress, "1 of 3 cells") {
		t.Errorf("the progress %q while the page asks, want the timed-out cell counted (1 of 3 cells)", progress)
	}
	for _, e := range []string{"wazero-compiler", "wazero-interpreter"} {
		if c := p.cell("ack", e); c.State != "pending" {
			t.Errorf("%s's cell %+v while the page asks, want still waiting", e, c)
		}
	}
	// Scrolled to the table, the question is in view: in the floating bar, and the status
	// waits for the answer instead of counting down.
	if err := p.eval(`document.getElementById("table").scrollIntoView({block: "start"})`, nil); err != nil {
		t.Fatal(err)
	}
	inView := `(() => { const b = document.getElementById("runbar-ask-skip"); if (!b) return false;
		const r = b.getBoundingClientRect(); return r.width > 0 && r.top >= 0 && r.bottom <= innerHeight; })()`
	p.waitFor(inView, 10*time.Second, "the question in view beside the table")
	if status, _ := p.text("#status"); !strings.HasPrefix(status, "Waiting for your answer") {
		t.Errorf("the status %q while the page asks, want it waiting for the answer", status)
	}
	if bar, _ := p.text("#runbar"); strings.Contains(bar, " left") {
		t.Errorf("the floating bar %q while the page asks, want no time left", bar)
	}
	p.click("#runbar-ask-skip")
	p.waitFor(`document.body.dataset.running === "0"`, time.Minute, "the run to end")
	for _, e := range []string{"wazero-compiler", "wazero-interpreter"} {
		if c := p.cell("ack", e); c.State != "cancelled" {
			t.Errorf("%s's cell %+v after Skip, want not run (cancelled)", e, c)
		}
	}
	if status, _ := p.text("#status"); !strings.HasPrefix(status, "Done — results below") {
		t.Errorf("the status %q after Skip, want the Run done", status)
	}
}

// TestForecastFromServerInChromium: with nothing in this browser's storage, the note
// beside Run forecasts a server cell from this machine's runs stored on the server.
func TestForecastFromServerInChromium(t *testing.T) { testForecastFromServer(t, headless.Chromium) }

// TestForecastFromServerInFirefox takes the same steps in headless Firefox.
func TestForecastFromServerInFirefox(t *testing.T) { testForecastFromServer(t, headless.Firefox) }

func testForecastFromServer(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newFullPage(t, kind, 1366)
	query := "k=fib_it&fib_it.n=30&e=native&runs=2&warmup=1&min_sample_ms=1&warmup_ms=0"
	p.open(query)
	p.click("#run")
	p.waitFor(`document.body.dataset.running === "0" && document.getElementById("status").textContent.startsWith("Done")`, time.Minute, "the run")
	if err := p.eval(`localStorage.clear()`, nil); err != nil {
		t.Fatal(err)
	}
	p.open(query)
	p.waitFor(`document.getElementById("form-note").textContent.includes("about ")`, 20*time.Second, "the forecast from the server's stored runs")
}
