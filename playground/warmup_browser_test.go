package playground

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/headless"
)

// TestPageWarmupViewInChromium: the page opened on its Warm-up view's URL runs the study
// on the server and shows one plot per engine, a line and the words per execution; the
// study is stored, its link shown, and that URL opens it again for its engines.
func TestPageWarmupViewInChromium(t *testing.T) { testPageWarmupView(t, headless.Chromium) }

// TestPageWarmupViewInFirefox shows the same view in headless Firefox.
func TestPageWarmupViewInFirefox(t *testing.T) { testPageWarmupView(t, headless.Firefox) }

func testPageWarmupView(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	p := newFullPage(t, kind, 1600)
	p.open("view=warmup&kernel=fib_it&n=30&e=native,wazero-compiler&executions=2&calls=60&budget_ms=2000&run=warmup")
	p.waitFor(`document.querySelector("#warmup-view") !== null`, 10*time.Second, "the Warm-up view")
	p.waitFor(`["done", "failed"].includes(document.querySelector("#warmup-view")?.dataset.state)`, 2*time.Minute, "the study to end")
	status, _ := p.text("#warmup-status")
	type figure struct {
		Engine  string   `json:"engine"`
		Lines   int      `json:"lines"`
		Caption string   `json:"caption"`
		Words   []string `json:"words"`
	}
	figs, err := evalAs[[]figure](p.browserPage, `[...document.querySelectorAll("#warmup-plots figure")].map((f) => ({
		engine: f.dataset.engine,
		lines: f.querySelectorAll("polyline.warmup-series").length,
		caption: f.querySelector("figcaption").textContent,
		words: [...f.querySelectorAll("li.warmup-words")].map((li) => li.textContent),
	}))`)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || figs[0].Engine != "native" || figs[1].Engine != "wazero-compiler" {
		t.Fatalf("figures %+v (status %q): want native and wazero-compiler", figs, status)
	}
	class := regexp.MustCompile(`^(flat|no steady state|(warm-up|slowdown), steady after [0-9,]+ calls, [0-9.]+ ms)[,;] `)
	for _, f := range figs {
		if f.Lines != 2 || len(f.Words) != 2 {
			t.Errorf("%s: %d lines and %d descriptions, want one per execution, 2", f.Engine, f.Lines, len(f.Words))
		}
		for _, w := range f.Words {
			if !class.MatchString(w) || !strings.Contains(w, "60 samples") {
				t.Errorf("%s: %q, want the class in words and the 60 samples", f.Engine, w)
			}
			// wazero's compiler compiles before the first call: its load is said, native has none.
			if got, want := strings.Contains(w, ", load: compile "), f.Engine == "wazero-compiler"; got != want {
				t.Errorf("%s: %q: the load said %v, want %v", f.Engine, w, got, want)
			}
		}
		if !strings.Contains(f.Caption, "consistent") && !strings.Contains(f.Caption, "inconsistent") {
			t.Errorf("%s: caption %q, want the verdict on the pair", f.Engine, f.Caption)
		}
	}
	// The finished study is stored: its link, also in the address bar, opens it again.
	href, err := evalAs[string](p.browserPage, `document.querySelector("#warmup-link")?.getAttribute("href") ?? ""`)
	m := regexp.MustCompile(`\?view=warmup&study=([0-9]+)$`).FindStringSubmatch(href)
	if err != nil || m == nil {
		t.Fatalf("the study's link %q (%v), want ?view=warmup&study=ID", href, err)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	st, err := p.store.Study(context.Background(), id)
	if err != nil || len(st.Report.Engines) != 2 || st.Report.Kernel != "fib_it" {
		t.Fatalf("stored study %d: %+v, %v", id, st.Report.Engines, err)
	}
	if url, err := evalAs[string](p.browserPage, "location.search"); err != nil || url != "?view=warmup&study="+m[1] {
		t.Errorf("the URL %q (%v), want the study's own", url, err)
	}
	// Opened by its URL, the stored study shows the Warm-up view for its engines.
	p.open("view=warmup&study=" + m[1])
	p.waitFor(`["done", "failed"].includes(document.querySelector("#warmup-view")?.dataset.state)`, 30*time.Second, "the stored study")
	status, _ = p.text("#warmup-status")
	shown, err := evalAs[[]string](p.browserPage, `[...document.querySelectorAll("#warmup-plots figure")].map((f) => f.dataset.engine + ":" + f.querySelectorAll("polyline.warmup-series").length)`)
	if err != nil || strings.Join(shown, " ") != "native:2 wazero-compiler:2" || !strings.Contains(status, "Study "+m[1]) {
		t.Errorf("study %s opened by its URL: figures %v (%v), status %q; want native and wazero-compiler, 2 executions each", m[1], shown, err, status)
	}
	checked, err := evalAs[string](p.browserPage, `[...document.querySelectorAll("input[name=warmup-engine]:checked")].map((c) => c.value).join(",") + " " + document.querySelector("#warmup-kernel").value`)
	if err != nil || checked != "native,wazero-compiler fib_it" {
		t.Errorf("the form after opening the study: %q (%v), want its kernel and engines", checked, err)
	}
	// An unknown study says so.
	p.open("view=warmup&study=" + strconv.FormatInt(id+1000, 10))
	p.waitFor(`document.querySelector("#warmup-view")?.dataset.state === "failed"`, 30*time.Second, "the unknown study's error")
	if status, _ = p.text("#warmup-status"); !strings.Contains(status, "no stored warm-up study") {
		t.Errorf("an unknown study: status %q", status)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestWarmupTabInPlaceInChromium: the Warm-up tab is a tab like the others: it shows its
// view in the page's place without a reload (its URL with it), and the articles' tab gives
// the page back, its selection's URL with it; the classes are explained beside the view.
func TestWarmupTabInPlaceInChromium(t *testing.T) { testWarmupTabInPlace(t, headless.Chromium) }

// TestWarmupTabInPlaceInFirefox takes the same steps in headless Firefox.
func TestWarmupTabInPlaceInFirefox(t *testing.T) { testWarmupTabInPlace(t, headless.Firefox) }

func testWarmupTabInPlace(t *testing.T, kind headless.Kind) {
	t.Parallel()
	p := newFullPage(t, kind, 1366)
	p.open("k=fib_rec&fib_rec.n=20&e=native")
	if err := p.eval(`window.stayed = 1`, nil); err != nil {
		t.Fatal(err)
	}
	p.click("#tab-warmup")
	p.waitFor(`document.querySelector("#warmup-view") !== null && !document.querySelector("#warmup-view").hidden && document.getElementById("controls").hidden`, 10*time.Second, "the Warm-up view in the page's place")
	if tag, _ := evalAs[string](p.browserPage, `document.getElementById("tab-warmup").tagName`); tag != "BUTTON" {
		t.Errorf("the Warm-up tab is a %s, want a button as the other tabs", tag)
	}
	if legend, _ := evalAs[string](p.browserPage, `document.querySelector("#warmup-view .warmup-legend")?.textContent ?? ""`); !strings.Contains(legend, "bad inconsistent") {
		t.Errorf("the view's legend %q does not explain the classes", legend)
	}
	if q, _ := evalAs[string](p.browserPage, `location.search`); !strings.Contains(q, "view=warmup") {
		t.Errorf("the URL %q in the Warm-up view, want view=warmup", q)
	}
	p.click("#tab-articles")
	p.waitFor(`!document.getElementById("controls").hidden && document.querySelector("#warmup-view").hidden`, 10*time.Second, "the page given back")
	if stayed, _ := evalAs[bool](p.browserPage, `window.stayed === 1`); !stayed {
		t.Errorf("the page reloaded between the tabs")
	}
	if q, _ := evalAs[string](p.browserPage, `location.search`); !strings.Contains(q, "k=fib_rec") || strings.Contains(q, "view=warmup") {
		t.Errorf("the URL %q back on the articles' tab, want its selection", q)
	}
}
