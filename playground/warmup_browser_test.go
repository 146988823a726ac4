package playground

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/headless"
)

// TestPageWarmupViewInChromium: the page opened on its Warm-up view's URL runs the study
// on the server and shows one plot per engine, a line and the words per execution.
func TestPageWarmupViewInChromium(t *testing.T) { testPageWarmupView(t, headless.Chromium) }

// TestPageWarmupViewInFirefox shows the same view in headless Firefox.
func TestPageWarmupViewInFirefox(t *testing.T) { testPageWarmupView(t, headless.Firefox) }

func testPageWarmupView(t *testing.T, kind headless.Kind) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	p := newBrowserPageIn(t, kind)
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
	figs, err := evalAs[[]figure](p, `[...document.querySelectorAll("#warmup-plots figure")].map((f) => ({
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
		}
		if !strings.Contains(f.Caption, "consistent") && !strings.Contains(f.Caption, "inconsistent") {
			t.Errorf("%s: caption %q, want the verdict on the pair", f.Engine, f.Caption)
		}
	}
	// The view is a URL of its own: the form's choices are in it.
	url, err := evalAs[string](p, "location.search")
	if err != nil || !strings.Contains(url, "view=warmup") || !strings.Contains(url, "e=native%2Cwazero-compiler") {
		t.Errorf("the URL %q (%v) does not hold the view and its engines", url, err)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
