package playground

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/headless"
)

var shotsDir = flag.String("shots", "", "write the page's screenshots at 390, 1366 and 1920 px in both themes, after a run, into this folder")

// TestScreenshotsInChromium writes, with -shots DIR, the page after its default Run (and
// that run's own page) at three widths in the light and dark themes, for a person to look
// at (go tool task screenshot): chromium-page-390-light.png and so on.
func TestScreenshotsInChromium(t *testing.T) { testScreenshots(t, headless.Chromium) }

// TestScreenshotsInFirefox writes the same pictures from headless Firefox, beside
// Chromium's (firefox-page-390-light.png, …), through WebDriver BiDi's
// browsingContext.captureScreenshot.
func TestScreenshotsInFirefox(t *testing.T) { testScreenshots(t, headless.Firefox) }

func testScreenshots(t *testing.T, kind headless.Kind) {
	if *shotsDir == "" {
		t.Skip("-shots DIR not given")
	}
	p := newFullPage(t, kind, 1366)
	// The page as a newcomer meets it: its defaults, one Run (its wall time logged, as
	// this machine gives it).
	p.open("")
	start := time.Now()
	p.runAll(5 * time.Minute)
	t.Logf("the default Run took %v", time.Since(start).Round(100*time.Millisecond))
	runs := p.storedRuns()
	for _, theme := range []string{"light", "dark"} {
		if err := p.eval(`document.documentElement.dataset.theme = "`+theme+`", document.dispatchEvent(new Event("themechange")), true`, new(bool)); err != nil {
			t.Fatal(err)
		}
		for _, width := range []int{390, 1366, 1920} {
			if err := p.page.SetViewport(p.bound(), width, 1000); err != nil {
				t.Fatal(err)
			}
			// The chat's and the load panel's frames load lazily, when scrolled near: scroll
			// to the page's end and back, as a person reading down would, so that the
			// picture of the whole page shows them (Firefox captures the document without
			// scrolling it).
			if err := p.eval(`new Promise((done) => { scrollTo(0, document.documentElement.scrollHeight); setTimeout(() => { scrollTo(0, 0); done(true) }, 1000) })`, new(bool)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond)
			// What reaches past the viewport's right edge, the widest first: a person
			// would scroll the page sideways for it.
			wide, err := evalAs[[]string](p.browserPage, `[...document.querySelectorAll("body *")].filter((e) => e.offsetParent && e.getBoundingClientRect().right > innerWidth + 1 && !e.closest(".table-wrap")).map((e) => e.tagName + "#" + e.id + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).slice(0, 12)`)
			if err == nil && len(wide) > 0 {
				t.Logf("%s %d px: past the right edge: %v", theme, width, wide)
			}
			png, err := headless.Screenshot(p.bound(), p.page)
			if err != nil {
				t.Fatal(err)
			}
			writeShot(t, fmt.Sprintf("%s-page-%d-%s.png", kind, width, theme), png)
		}
	}
	if len(runs) > 0 {
		// The stored run's page, drawn by the page's own script, in both themes.
		if err := p.page.Navigate(p.bound(), fmt.Sprintf("%s/runs/%d", p.url, runs[0].ID)); err != nil {
			t.Fatal(err)
		}
		p.waitFor(`document.body.dataset.ready === "1"`, 20*time.Second, "the run's page")
		for _, theme := range []string{"light", "dark"} {
			if err := p.eval(`document.documentElement.dataset.theme = "`+theme+`", document.dispatchEvent(new Event("themechange")), true`, new(bool)); err != nil {
				t.Fatal(err)
			}
			for _, width := range []int{390, 1366, 1920} {
				if err := p.page.SetViewport(p.bound(), width, 1000); err != nil {
					t.Fatal(err)
				}
				time.Sleep(500 * time.Millisecond)
				png, err := headless.Screenshot(p.bound(), p.page)
				if err != nil {
					t.Fatal(err)
				}
				writeShot(t, fmt.Sprintf("%s-run-page-%d-%s.png", kind, width, theme), png)
			}
		}
	}
	// The Warm-up view after a small study, at 1366 px.
	if err := p.page.SetViewport(p.bound(), 1366, 1000); err != nil {
		t.Fatal(err)
	}
	p.open("view=warmup&kernel=fib_it&n=30&e=native,wazero-compiler&executions=2&calls=200&budget_ms=2000&run=warmup")
	p.waitFor(`["done", "failed"].includes(document.querySelector("#warmup-view")?.dataset.state)`, 2*time.Minute, "the study to end")
	if err := p.eval(`document.querySelector("#warmup-view details.warmup-legend").open = true`, nil); err != nil {
		t.Fatal(err)
	}
	png, err := headless.Screenshot(p.bound(), p.page)
	if err != nil {
		t.Fatal(err)
	}
	writeShot(t, fmt.Sprintf("%s-warmup-1366.png", kind), png)
}

func writeShot(t *testing.T, name string, png []byte) {
	t.Helper()
	path := *shotsDir + "/" + name
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", path)
}
