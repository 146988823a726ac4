package playground

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wasmgap/wasmgap/internal/browsertest"
	"github.com/wasmgap/wasmgap/internal/headless"
	"github.com/wasmgap/wasmgap/internal/runner"

	"github.com/wasmgap/wasmgap/kernels"
)

var screenshotPath = flag.String("screenshot", "", "also write the filled results' screenshot to this file (e.g. ../docs/playground.png)")

var bundleOnce sync.Once
var bundleErr error

// distDir returns web/dist, building the bundle first when it is missing.
func distDir(t *testing.T) string {
	t.Helper()
	dist, err := filepath.Abs(filepath.Join("..", "web", "dist"))
	if err != nil {
		t.Fatal(err)
	}
	bundleOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(dist, "manifest.json")); err == nil {
			return
		}
		cmd := exec.Command("go", "run", "./build")
		cmd.Dir = filepath.Dir(filepath.Dir(dist))
		out, err := cmd.CombinedOutput()
		if err != nil {
			bundleErr = fmt.Errorf("go run ./build: %v\n%s", err, out)
		}
	})
	if bundleErr != nil {
		t.Fatal(bundleErr)
	}
	return dist
}

// browserPage is one browser tab on a playground server: Chromium or Firefox, driven
// through the browser-neutral headless.Page (JavaScript evaluation); ctx is the Chromium
// tab's chromedp context, for the tests that use chromedp's own actions (nil in Firefox).
type browserPage struct {
	t    *testing.T
	page headless.Page
	ctx  context.Context
	url  string
	srv  *Server
	seen int // console errors already reported
}

// newBrowserPageIn starts a playground server and a browser of the kind on about:blank,
// each cell's run bounded at a minute (room for a busy machine). The browser tests run side
// by side (t.Parallel; go test's -parallel is the number of CPUs): each has a server and a
// page of its own, and spends much of its time waiting on a worker or a browser.
func newBrowserPageIn(t *testing.T, kind headless.Kind) *browserPage {
	t.Helper()
	return newBrowserPageLimited(t, kind, time.Minute)
}

// newBrowserPageLimited is newBrowserPageIn with each cell's run bounded at limit
// (Options.Timeout, which the page's own cells take too).
func newBrowserPageLimited(t *testing.T, kind headless.Kind, limit time.Duration) *browserPage {
	t.Helper()
	dist := distDir(t)
	// A stand-in chat panel (the real one is package chatserver's); no load panel.
	chat := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>chat</title><p id="hello">chat panel at `+r.URL.Path+`</p>`)
	})
	srv := New(Options{Dist: os.DirFS(dist), Timeout: limit, Chat: chat})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	p := openBrowser(t, kind, ts.URL, 1600)
	p.srv = srv
	return p
}

// openBrowser starts a browser of the kind on about:blank, for the page served at url, in
// a viewport width × 1000 CSS pixels: Chromium's window, Firefox's viewport.
func openBrowser(t *testing.T, kind headless.Kind, url string, width int) *browserPage {
	t.Helper()
	page := browsertest.Open(t, kind,
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.WindowSize(width, 1000),
	)
	p := &browserPage{t: t, page: page, url: url}
	if c := headless.ChromedpContext(page); c != nil {
		ctx, cancel := context.WithTimeout(c, 10*time.Minute)
		t.Cleanup(cancel)
		p.ctx = ctx
	}
	if err := page.Navigate(p.bound(), "about:blank"); err != nil {
		t.Fatalf("open about:blank: %v", err)
	}
	if kind != headless.Chromium {
		if err := page.SetViewport(p.bound(), width, 1000); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// bound is the context of one step: generous, so that a hung browser fails the test.
func (p *browserPage) bound() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	p.t.Cleanup(cancel)
	return ctx
}

// errors returns the console's errors and exceptions since the last call.
func (p *browserPage) consoleErrors() []string {
	all := p.page.ConsoleErrors()
	errs := all[min(p.seen, len(all)):]
	p.seen = len(all)
	return errs
}

// eval evaluates the JavaScript expression (awaited) and decodes its value into out.
func (p *browserPage) eval(js string, out any) error {
	return p.page.Evaluate(p.bound(), js, out)
}

// evalAs evaluates the JavaScript expression and returns its value as a T.
func evalAs[T any](p *browserPage, js string) (T, error) {
	var v T
	err := p.eval(js, &v)
	return v, err
}

// text is the innerText of the element the CSS selector finds.
// refusesSetting checks a page opened on fib_it(40) on native and browser-wasm with
// setting (the page's name, in milliseconds) out of range at value ms, above the
// server's bound s: the page says what is allowed in its own milliseconds, and once run
// the server refuses it too, in its words (runner's Setting.Check: the value and the
// range as durations, what 0 means), as does the page for its browser cell.
func (p *browserPage) refusesSetting(setting string, value int, s runner.Setting) {
	t := p.t
	t.Helper()
	maxMS := time.Duration(s.Max).Milliseconds()
	msg, err := p.text("#" + setting + "-error")
	if want := fmt.Sprintf("%s = %d is out of range: allowed 0 to %d", setting, value, maxMS); err != nil || !strings.Contains(msg, want) {
		t.Errorf("the page's error %q (%v), want the allowed range", msg, err)
	}
	p.runAll(time.Minute)
	server := fmt.Sprintf("%s = %v is out of range: allowed %s", s.What, time.Duration(value)*time.Millisecond, s.Range())
	if got := p.cell("fib_it", "native"); !strings.Contains(got.Text, server) {
		t.Errorf("native with %s=%d: %+v, want the server's refusal %q", setting, value, got, server)
	}
	if got := p.cell("fib_it", "browser-wasm"); !strings.Contains(got.Text, fmt.Sprintf("allowed 0 to %d", maxMS)) {
		t.Errorf("browser-wasm with %s=%d: %+v, want the page's refusal with the allowed range", setting, value, got)
	}
}

func (p *browserPage) text(sel string) (string, error) {
	q, _ := json.Marshal(sel)
	return evalAs[string](p, `(() => { const e = document.querySelector(`+string(q)+`); if (!e) throw new Error("no element "+`+string(q)+`); return e.innerText; })()`)
}

// open loads the page with a query string and waits until it is ready.
func (p *browserPage) open(query string) {
	p.t.Helper()
	if err := p.page.Navigate(p.bound(), p.url+"/?"+query); err != nil {
		p.t.Fatalf("open ?%s: %v", query, err)
	}
	p.waitFor(`document.body.dataset.ready === "1"`, 20*time.Second, "the page to load its catalogue")
}

func (p *browserPage) waitFor(expr string, timeout time.Duration, what string) {
	p.t.Helper()
	var last error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ok, err := evalAs[bool](p, "Boolean("+expr+")")
		if err == nil && ok {
			return
		}
		last = err
	}
	p.t.Fatalf("waiting for %s: not within %v (%v)", what, timeout, last)
}

// edit replaces the source in the "Your kernel" editor as typing would: Ctrl+A in the
// editor (its select-all), then src inserted as one typed text (the input events of an
// input method's commit, as Chromium's Input.insertText makes them). The same events in
// both browsers: WebDriver BiDi types keys one at a time, which the editor would indent
// and close brackets after, and Firefox gives a synthetic paste event an empty clipboard.
func (p *browserPage) edit(src string) {
	p.t.Helper()
	q, _ := json.Marshal(src)
	js := `(() => {
		const c = document.querySelector("#editor .cm-content");
		if (!c) throw new Error("no editor on the page");
		c.focus();
		c.dispatchEvent(new KeyboardEvent("keydown", {key: "a", code: "KeyA", keyCode: 65, ctrlKey: true, bubbles: true, cancelable: true}));
		if (!document.execCommand("insertText", false, ` + string(q) + `)) throw new Error("the editor took no text");
	})()`
	if err := p.eval(js, nil); err != nil {
		p.t.Fatalf("edit the source: %v", err)
	}
}

// click clicks the element: with the mouse in Chromium (chromedp), with its click() in
// Firefox.
func (p *browserPage) click(sel string) {
	p.t.Helper()
	if p.ctx != nil {
		if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
			p.t.Fatalf("click %s: %v", sel, err)
		}
		return
	}
	q, _ := json.Marshal(sel)
	if err := p.eval(`(() => { const e = document.querySelector(`+string(q)+`); if (!e) throw new Error("no element to click"); e.scrollIntoView(); e.click(); })()`, nil); err != nil {
		p.t.Fatalf("click %s: %v", sel, err)
	}
}

// fill types values into the page's inputs, each found by its CSS selector, as a user
// would: the value set, then an input event.
func (p *browserPage) fill(values map[string]string) {
	p.t.Helper()
	pairs, err := json.Marshal(values)
	if err != nil {
		p.t.Fatal(err)
	}
	ok, err := evalAs[bool](p, `(() => {
		for (const [sel, v] of Object.entries(`+string(pairs)+`)) {
			const i = document.querySelector(sel);
			if (!i) return false;
			i.value = v;
			i.dispatchEvent(new Event("input"));
		}
		return true;
	})()`)
	if err != nil || !ok {
		p.t.Fatalf("fill %v: %v (an input not on the page?)", values, err)
	}
}

// runAll clicks Run (and, asked about cells expected to fail, runs them too) and waits
// until every cell has an outcome.
func (p *browserPage) runAll(timeout time.Duration) {
	p.t.Helper()
	p.click("#run")
	// "Run them too" to every question: before the Run (cells expected to fail) and during
	// it (a kernel's cells after one of them timed out).
	p.waitFor(`(document.getElementById("ask-all")?.click(), document.body.dataset.running === "0")`, timeout, "the run to finish")
}

// cellInfo is what a results cell shows, and the k and first call its details give.
type cellInfo struct {
	State string `json:"state"`
	Value string `json:"value"`
	Text  string `json:"text"`
	// Calls is k, the calls a sample ("" before a result); FirstNS the first call's time.
	Calls   string `json:"calls"`
	FirstNS string `json:"first_ns"`
}

func (p *browserPage) cell(kernel, engine string) cellInfo {
	p.t.Helper()
	js := fmt.Sprintf(`(() => {
		const td = document.querySelector('#results-table tr[data-kernel=%q] td[data-engine=%q]');
		if (!td) return {state: "missing", value: "", text: "", calls: "", first_ns: ""};
		return {state: td.dataset.state || "", value: td.dataset.value || "", text: td.innerText, calls: td.dataset.calls || "", first_ns: td.dataset.firstNs || ""};
	})()`, kernel, engine)
	var c cellInfo
	if err := p.eval(js, &c); err != nil {
		p.t.Fatalf("read cell %s/%s: %v", kernel, engine, err)
	}
	return c
}

// expected is the catalogue's value for a call, as a decimal string.
func expected(t *testing.T, kernel string, args ...int) string {
	t.Helper()
	k, err := kernels.Lookup(kernel)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(k.Expected(args))
}

func (p *browserPage) screenshot(name string) {
	p.t.Helper()
	if p.ctx == nil {
		return // Chromium's screenshots only: the docs' pictures are Chromium's
	}
	png, err := chromedp.Run(p.ctx, chromedp.Screenshot(chromedp.ID("results")))
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(p.t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot of the results: %s", path)
	if *screenshotPath != "" {
		if err := os.WriteFile(*screenshotPath, png, 0o644); err != nil {
			p.t.Fatal(err)
		}
	}
}

// TestPageInChromium drives the page in a real headless Chromium: one browser, one tab,
// the steps in order.
func TestPageInChromium(t *testing.T) { testPage(t, headless.Chromium) }

// TestPageInFirefox takes the same steps in a real headless Firefox (SpiderMonkey), driven
// through WebDriver BiDi.
func TestPageInFirefox(t *testing.T) { testPage(t, headless.Firefox) }

func testPage(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newBrowserPageIn(t, kind)

	t.Run("loads without console errors", func(t *testing.T) {
		p.t = t
		p.open("")
		p.waitFor(`document.querySelectorAll('#results-table tbody tr').length > 0`, 10*time.Second, "the table preview")
		if errs := p.consoleErrors(); len(errs) > 0 {
			t.Errorf("console errors on load:\n%s", strings.Join(errs, "\n"))
		}
		isolated, err := evalAs[bool](p, `crossOriginIsolated`)
		if err != nil || !isolated {
			t.Errorf("crossOriginIsolated = %v (%v): COOP/COEP missing, timers coarse", isolated, err)
		}
		// The chat panel is shown in its iframe (same origin, so it loads in the isolated
		// page) once it is scrolled to (the iframe loads lazily); the absent load panel is
		// hidden.
		if err := p.eval(`document.getElementById("chat-panel").scrollIntoView(), true`, new(bool)); err != nil {
			t.Fatal(err)
		}
		p.waitFor(`document.querySelector("#chat-panel iframe")?.contentDocument?.getElementById("hello")?.textContent === "chat panel at /"`,
			10*time.Second, "the chat panel's iframe")
		hidden, err := evalAs[[]bool](p, `[document.getElementById("chat-panel").hidden, document.getElementById("load-panel").hidden]`)
		if err != nil || len(hidden) != 2 || hidden[0] || !hidden[1] {
			t.Errorf("panels hidden = %v (%v), want chat shown and load hidden", hidden, err)
		}
	})

	t.Run("browser engines compute the catalogue's values", func(t *testing.T) {
		p.t = t
		p.open("k=fib_it,fib_rec&fib_it.n=90&fib_rec.n=25&e=browser-wasm,browser-js&runs=3&warmup=1&warmup_ms=50")
		p.runAll(2 * time.Minute)
		for _, c := range []struct {
			kernel string
			n      int
		}{{"fib_it", 90}, {"fib_rec", 25}} {
			want := expected(t, c.kernel, c.n)
			for _, engine := range []string{"browser-wasm", "browser-js"} {
				got := p.cell(c.kernel, engine)
				if got.State != "done" || got.Value != want || strings.Contains(got.Text, "wrong") {
					t.Errorf("%s(%d) on %s: %+v, want done with value %s", c.kernel, c.n, engine, got, want)
				}
				// Kept apart: the cell holds its first call's time. A coarse clock (Firefox's
				// performance.now ticks in microseconds) may read 0 for a call shorter than a tick.
				if first, err := strconv.ParseFloat(got.FirstNS, 64); err != nil || first < 0 {
					t.Errorf("%s on %s does not keep its first call apart: %+v", c.kernel, engine, got)
				}
			}
		}
	})

	t.Run("fib_it(40) in the browser is timed in ns per call with its k", func(t *testing.T) {
		p.t = t
		p.open("k=fib_it&fib_it.n=40&e=browser-wasm,browser-js&runs=6&warmup=1&warmup_ms=50")
		p.runAll(2 * time.Minute)
		for _, engine := range []string{"browser-wasm", "browser-js"} {
			js := fmt.Sprintf(`(() => {
				const td = document.querySelector('#results-table tr[data-kernel="fib_it"] td[data-engine=%q]');
				return [td?.querySelector(".median")?.textContent ?? "", td?.dataset.calls ?? "", td?.innerText ?? "", td?.querySelector(".median")?.dataset.ns ?? ""];
			})()`, engine)
			got, err := evalAs[[]string](p, js)
			if err != nil || len(got) != 4 {
				t.Fatalf("read the %s cell: %v", engine, err)
			}
			median, calls, text := got[0], got[1], got[2]
			// "14.9 ns" and k calls a sample: how many depends on this machine's speed; that
			// k calls fill the sample does not. Samples last at least half the 10 ms minimum
			// (a shorter one starts the samples over with a larger k).
			var v float64
			var unit string
			if _, err := fmt.Sscanf(median, "%g %s", &v, &unit); err != nil || !slices.Contains([]string{"ns", "µs"}, unit) || v <= 0 {
				t.Errorf("%s: median %q, want a time per call (cell %q)", engine, median, text)
			}
			ns, err := strconv.ParseFloat(got[3], 64)
			if err != nil || ns <= 0 {
				t.Errorf("%s: the median's ns %q: %v", engine, got[3], err)
			}
			k, err := strconv.Atoi(calls)
			if err != nil || k <= 1 {
				t.Errorf("%s: k = %q, want many calls a sample", engine, calls)
			}
			if sample := time.Duration(float64(k) * ns); sample < 5*time.Millisecond {
				t.Errorf("%s: k = %d calls of %.1f ns make a %v sample: k did not grow until a sample lasts the 10 ms minimum (half of it at least)", engine, k, ns, sample)
			}
			if strings.Contains(text, "≤") {
				t.Errorf("%s: %q is below the timer's step", engine, text)
			}
		}
		p.screenshot("fib_it.png")
		// The interval and k are in the details too.
		p.click(`#results-table tr[data-kernel="fib_it"] td[data-engine="browser-wasm"]`)
		p.waitFor(`document.getElementById("details").open`, 5*time.Second, "the details dialog")
		details, err := p.text("#details .dialog-body")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"95% interval", "6 timed samples of k = ", "first call", "per call"} {
			if !strings.Contains(details, want) {
				t.Errorf("details lack %q:\n%s", want, details)
			}
		}
		p.click("#details .close")
		p.waitFor(`!document.getElementById("details").open`, 5*time.Second, "the dialog to close")
	})

	t.Run("the sample's minimum is a setting of the page", func(t *testing.T) {
		p.t = t
		// 0 ms: one call per sample, on the server and in the browser alike.
		p.open("k=fib_it&fib_it.n=40&e=native,browser-wasm&runs=2&warmup=0&min_sample_ms=0")
		if v, err := evalAs[string](p, `document.getElementById("min_sample_ms").value`); err != nil || v != "0" {
			t.Errorf("the min_sample_ms input holds %q (%v), want the link's 0", v, err)
		}
		p.runAll(time.Minute)
		for _, engine := range []string{"native", "browser-wasm"} {
			got := p.cell("fib_it", engine)
			if got.State != "done" || got.Calls != "1" {
				t.Errorf("fib_it(40) on %s with min_sample_ms=0: %+v, want one call per sample (k = 1)", engine, got)
			}
		}
		p.open("k=fib_it&fib_it.n=40&e=native,browser-wasm&runs=2&warmup=0&min_sample_ms=5000")
		p.refusesSetting("min_sample_ms", 5000, runner.Bounds.MinSample)
	})

	t.Run("the warm-up's minimum is a setting of the page", func(t *testing.T) {
		p.t = t
		// Out of range: the page says what is allowed, and the server refuses it too;
		// the value in range reaches the run request (TestRunDefaults) and the browser's
		// harness (warmup_ms of its WorkerRequest).
		p.open("k=fib_it&fib_it.n=40&e=native,browser-wasm&runs=1&warmup=1&warmup_ms=20000")
		if v, err := evalAs[string](p, `document.getElementById("warmup_ms").value`); err != nil || v != "20000" {
			t.Errorf("the warmup_ms input holds %q (%v), want the link's 20000", v, err)
		}
		p.refusesSetting("warmup_ms", 20000, runner.Bounds.WarmupTime)
	})

	t.Run("a saved run is compared with the live one", func(t *testing.T) {
		p.t = t
		p.open("k=fib_it,fib_rec&fib_it.n=40&fib_rec.n=20&e=native&runs=6&warmup=1&warmup_ms=50")
		p.runAll(time.Minute)
		load := func(name, body string) {
			js := fmt.Sprintf(`(() => {
				const dt = new DataTransfer();
				dt.items.add(new File([%q], %q, {type: "application/json"}));
				const input = document.getElementById("compare-file");
				input.files = dt.files;
				input.dispatchEvent(new Event("change"));
			})()`, body, name)
			if err := p.eval(js, nil); err != nil {
				t.Fatal(err)
			}
		}
		// fib_it: a saved millisecond per call, far slower than the live nanoseconds; fib_rec:
		// samples so spread that any live median falls in their interval.
		load("saved.json", `{"method":{"runs":6},"environment":{"cpu":"saved CPU","time":"2026-11-30T12:00:00Z"},"results":[
			{"kernel":"fib_it","args":[40],"engine":"native","calls":1,"samples_ns":[1e6,1e6,1e6,1e6,1e6,1e6]},
			{"kernel":"fib_rec","args":[20],"engine":"native","calls":1,"samples_ns":[1,1,1,1e12,1e12,1e12]},
			{"kernel":"ack","args":[3,10],"engine":"native","samples_ns":[1,2,3]}]}`)
		p.waitFor(`document.querySelectorAll("#compare-table tbody tr").length === 2`, 5*time.Second, "the comparison's rows")
		rows, err := evalAs[[][]string](p, `[...document.querySelectorAll("#compare-table tbody tr")].map(tr => [tr.dataset.significant, tr.innerText])`)
		if err != nil || len(rows) != 2 {
			t.Fatalf("rows %v (%v)", rows, err)
		}
		if rows[0][0] != "1" || !strings.Contains(rows[0][1], "fib_it(40)") || !strings.Contains(rows[0][1], "-100") {
			t.Errorf("fib_it row %q, want a significant change of about −100%%", rows[0])
		}
		if rows[1][0] != "0" || !strings.Contains(rows[1][1], "no significant difference") {
			t.Errorf("fib_rec row %q, want no significant difference", rows[1])
		}
		p.screenshot("compare.png")
		load("load.json", `{"scenario":"http","latency":{}}`)
		p.waitFor(`document.getElementById("compare-out").innerText.includes('has no "method" field')`, 5*time.Second, "the error on another JSON")
	})

	t.Run("every kernel's browser ports agree with the catalogue", func(t *testing.T) {
		p.t = t
		// Small sizes (the loops still share 200 values), fib_it(92) past 2^53.
		args := map[string][]int{
			"fib_it": {92}, "fib_rec": {20}, "ack_while": {2, 3}, "ack": {2, 3},
			"test7": {1000}, "test8": {1000}, "test8b": {1000},
		}
		q := []string{"k=" + strings.Join(kernels.Names(), ","), "e=browser-wasm,browser-js", "runs=1", "warmup=0"}
		for _, k := range kernels.All() {
			a, ok := args[k.Name]
			if !ok {
				a = []int{30_000, 200}
			}
			args[k.Name] = a
			for i, p := range k.Params {
				q = append(q, fmt.Sprintf("%s.%s=%d", k.Name, p.Name, a[i]))
			}
		}
		p.open(strings.Join(q, "&"))
		p.runAll(3 * time.Minute)
		for _, k := range kernels.All() {
			want := expected(t, k.Name, args[k.Name]...)
			for _, engine := range []string{"browser-wasm", "browser-js"} {
				if got := p.cell(k.Name, engine); got.State != "done" || got.Value != want {
					t.Errorf("%s on %s: %+v, want %s", k.Label(args[k.Name]), engine, got, want)
				}
			}
		}
		// host_call (in kernels.Names, not in All): the page's wasm tier calls nop once per
		// iteration and gets the catalogue's value; the JavaScript port has no module to call.
		if got := p.cell("host_call", "browser-wasm"); got.State != "done" || got.Value != fmt.Sprint(kernels.NopValue) {
			t.Errorf("host_call() on browser-wasm: %+v, want %d", got, kernels.NopValue)
		}
		if got := p.cell("host_call", "browser-js"); got.State != "na" || !strings.Contains(got.Text, "n/a") {
			t.Errorf("host_call() on browser-js: %+v, want n/a", got)
		}
	})

	t.Run("a server engine fills its cell", func(t *testing.T) {
		p.t = t
		p.open("k=fib_it,fib_rec&fib_it.n=90&fib_rec.n=25&e=native,wazero-compiler,browser-wasm,browser-js&runs=3&warmup=1&warmup_ms=50")
		p.runAll(2 * time.Minute)
		for _, c := range []struct {
			kernel string
			n      int
		}{{"fib_it", 90}, {"fib_rec", 25}} {
			for _, engine := range []string{"native", "wazero-compiler"} {
				got := p.cell(c.kernel, engine)
				if want := expected(t, c.kernel, c.n); got.State != "done" || got.Value != want {
					t.Errorf("%s(%d) on %s: %+v, want done with value %s", c.kernel, c.n, engine, got, want)
				}
			}
		}
		if got := p.cell("fib_rec", "browser-js"); !strings.Contains(got.Text, "×") {
			t.Errorf("browser-js cell shows no ratio to native: %q", got.Text)
		}
		p.screenshot("results.png")

		// The method and environment, one click away.
		p.click(`#results-table tr[data-kernel="fib_rec"] td[data-engine="native"]`)
		p.waitFor(`document.getElementById("details").open`, 5*time.Second, "the details dialog")
		details, err := p.text("#details .dialog-body")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"fib_rec(25) on native", "Method", "worker process", "3 timed samples", "median", "Environment", "GOMAXPROCS", "equal to the catalogue's"} {
			if !strings.Contains(strings.ToLower(details), strings.ToLower(want)) {
				t.Errorf("details lack %q:\n%s", want, details)
			}
		}
		p.click("#details .close")
		p.waitFor(`!document.getElementById("details").open`, 5*time.Second, "the dialog to close")

		// Copy as Markdown (the clipboard is captured: headless has no real one).
		if err := p.eval(`navigator.clipboard.writeText = async (t) => { window.copied = t; }`, nil); err != nil {
			t.Fatal(err)
		}
		p.click("#copy")
		p.waitFor(`typeof window.copied === "string"`, 5*time.Second, "the Markdown")
		md, err := evalAs[string](p, `window.copied`)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"| kernel | native | wazero compiler | browser wasm | browser JS |", "| `fib_rec(25)` |", "Median of 3 timed", "Browser: "} {
			if !strings.Contains(md, want) {
				t.Errorf("Markdown lacks %q:\n%s", want, md)
			}
		}

		// The articles' figures, toggled on beside the live rows and in the chart.
		p.click("#history")
		p.waitFor(`[...document.querySelectorAll('#results-table tr.history')].some(tr => tr.innerText.includes("PHP 7.0.0") && tr.innerText.includes("19.5 s"))`,
			10*time.Second, "the historical rows")
		p.waitFor(`[...document.querySelectorAll('#chart svg text')].some(t => t.textContent === "HHVM 3.8.1")`, 5*time.Second, "historical bars in the chart")

		// The URL reproduces the selection.
		loc, err := evalAs[string](p, `location.search`)
		if err != nil || !strings.Contains(loc, "k=fib_it,fib_rec") || !strings.Contains(loc, "fib_rec.n=25") || !strings.Contains(loc, "e=native,wazero-compiler,browser-wasm,browser-js") || !strings.Contains(loc, "history=1") {
			t.Errorf("location.search %q (%v) does not hold the selection", loc, err)
		}
	})

	t.Run("an out-of-range argument shows the server's error", func(t *testing.T) {
		p.t = t
		p.open("k=fib_rec&fib_rec.n=200&e=native,browser-js&runs=1&warmup=0")
		formError, err := p.text(`.kernel[data-kernel="fib_rec"] .field-error`)
		if err != nil || !strings.Contains(formError, "allowed 0 to 92") {
			t.Errorf("the form's own check: %q (%v)", formError, err)
		}
		p.runAll(30 * time.Second)
		for _, engine := range []string{"native", "browser-js"} {
			got := p.cell("fib_rec", engine)
			if got.State != "error" || !strings.Contains(got.Text, "fib_rec: n = 200 is out of range: allowed 0 to 92") {
				t.Errorf("%s cell %+v, want the server's error", engine, got)
			}
		}

		p.open("k=fib_rec&fib_rec.n=10&e=native,browser-js&runs=0&warmup=0")
		p.runAll(30 * time.Second)
		for _, engine := range []string{"native", "browser-js"} {
			if got := p.cell("fib_rec", engine); got.State != "error" || !strings.Contains(got.Text, "runs = 0 is out of range: allowed 1 to 100") {
				t.Errorf("%s cell with runs = 0: %+v", engine, got)
			}
		}

		// fib(80) is past 2^53: the JavaScript port says so rather than answer wrong.
		p.open("k=fib_rec&fib_rec.n=80&e=browser-js&runs=1&warmup=0")
		p.runAll(30 * time.Second)
		if got := p.cell("fib_rec", "browser-js"); got.State != "done" || !strings.Contains(got.Text, "exceeds 2^53") {
			t.Errorf("fib_rec(80) on browser-js: %+v, want the port's refusal", got)
		}
	})

	t.Run("ack(3,10) on wazero-interpreter overflows its stack", func(t *testing.T) {
		p.t = t
		p.open("k=ack&ack.n=3&ack.m=10&e=wazero-interpreter&runs=1&warmup=0")
		p.runAll(2 * time.Minute)
		if got := p.cell("ack", "wazero-interpreter"); got.State != "done" || !strings.Contains(got.Text, "stack overflow") {
			t.Errorf("cell %+v, want \"stack overflow\"", got)
		}
	})

	t.Run("a queued run shows its place in line", func(t *testing.T) {
		p.t = t
		// Take this address's share of the slots with long runs from outside the page.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		share := p.srv.queue.perRunning
		for i := 0; i < share; i++ {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/api/run",
				strings.NewReader(`{"kernel":"fib_rec","engine":"native","args":{"n":60},"runs":1,"warmup":0}`))
			req.Header.Set("Content-Type", "application/json")
			go func() {
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
		}
		deadline := time.Now().Add(10 * time.Second)
		for running, _ := p.srv.queue.stats(); running < share; running, _ = p.srv.queue.stats() {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d slots taken", running, share)
			}
			time.Sleep(10 * time.Millisecond)
		}
		p.open("k=fib_rec&fib_rec.n=20&e=native&runs=1&warmup=0")
		p.click("#run")
		p.waitFor(`document.querySelector('td[data-engine="native"]')?.innerText.includes("queued: #1 in line")`, 10*time.Second, "the queue position")
		cancel() // the slots free up: the page's run goes next
		p.waitFor(`document.body.dataset.running === "0"`, time.Minute, "the queued run to finish")
		if got := p.cell("fib_rec", "native"); got.State != "done" || got.Value != expected(t, "fib_rec", 20) {
			t.Errorf("the queued run's cell: %+v", got)
		}
	})

	t.Run("cancel stops a long run", func(t *testing.T) {
		p.t = t
		for _, engine := range []string{"browser-js", "native"} {
			p.open("k=fib_rec&fib_rec.n=55&e=" + engine + "&runs=1&warmup=0")
			p.click("#run")
			p.waitFor(fmt.Sprintf(`document.querySelector('td[data-engine=%q]')?.dataset.state === "running"`, engine), 20*time.Second, engine+" to start")
			time.Sleep(300 * time.Millisecond)
			p.click("#cancel")
			p.waitFor(`document.body.dataset.running === "0"`, 10*time.Second, "the run to stop")
			if got := p.cell("fib_rec", engine); got.State != "cancelled" {
				t.Errorf("%s cell after cancel: %+v", engine, got)
			}
			if engine == "native" {
				// The disconnect ends the server's run and frees its slot.
				deadline := time.Now().Add(10 * time.Second)
				for {
					running, _ := p.srv.queue.stats()
					if running == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the server still runs %d job(s) after the page cancelled", running)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		}
	})
}
