package playground

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/wasmgap/wasmgap/internal/headless"
)

var shotsDir = flag.String("shots", "", "write the page's screenshots at 390, 1366 and 1920 px in both themes, after a run, into this folder")

// TestScreenshotsInChromium writes, with -shots DIR, the page after a small run (and a
// stored run's page) at three widths in the light and dark themes, for a person to look at
// (go tool task screenshot): chromium-page-390-light.png and so on.
func TestScreenshotsInChromium(t *testing.T) { testScreenshots(t, headless.Chromium) }

// TestScreenshotsInFirefox writes the same pictures from headless Firefox, beside
// Chromium's (firefox-page-390-light.png, …), through WebDriver BiDi's
// browsingContext.captureScreenshot. The stored run's page follows the system's theme and
// Firefox's BiDi emulates no colour scheme: for its dark picture the page's
// prefers-color-scheme: dark rules are made to apply to every medium.
func TestScreenshotsInFirefox(t *testing.T) { testScreenshots(t, headless.Firefox) }

func testScreenshots(t *testing.T, kind headless.Kind) {
	if *shotsDir == "" {
		t.Skip("-shots DIR not given")
	}
	p := newFullPage(t, kind, 1366)
	p.open("k=fib_it,fib_rec,ack&fib_it.n=30&fib_rec.n=20&ack.n=3&ack.m=10&e=native,wazero-compiler,wazero-interpreter,browser-wasm,browser-js&runs=3&warmup=1&min_sample_ms=2&warmup_ms=50")
	p.runAll(5 * time.Minute)
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
		// The stored run's page follows the system's theme (it has no script): at 390 px
		// light and 1920 px dark.
		for _, v := range []struct {
			width  int
			scheme string
		}{{390, "light"}, {1920, "dark"}} {
			if p.ctx == nil {
				// Firefox: the page's dark rules applied to every medium below, once loaded.
			} else {
				scheme := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v.scheme}}}
				if _, err := chromedp.Run(p.ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
					_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, scheme)
					return err
				})); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.page.SetViewport(p.bound(), v.width, 1000); err != nil {
				t.Fatal(err)
			}
			if err := p.page.Navigate(p.bound(), fmt.Sprintf("%s/runs/%d", p.url, runs[0].ID)); err != nil {
				t.Fatal(err)
			}
			if p.ctx == nil && v.scheme == "dark" {
				n, err := evalAs[int](p.browserPage, `(() => {
					let n = 0;
					for (const s of document.styleSheets) for (const r of s.cssRules) {
						if (r.media && /prefers-color-scheme:\s*dark/.test(r.media.mediaText)) { r.media.mediaText = "all"; n++; }
					}
					return n;
				})()`)
				if err != nil || n == 0 {
					t.Fatalf("the run page's dark rules: %d found (%v)", n, err)
				}
			}
			time.Sleep(time.Second)
			png, err := headless.Screenshot(p.bound(), p.page)
			if err != nil {
				t.Fatal(err)
			}
			writeShot(t, fmt.Sprintf("%s-run-page-%d-%s.png", kind, v.width, v.scheme), png)
		}
	}
}

func writeShot(t *testing.T, name string, png []byte) {
	t.Helper()
	path := *shotsDir + "/" + name
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", path)
}
