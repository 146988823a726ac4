package loadpage

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wasmgap/wasmgap/internal/browsertest"
	"github.com/wasmgap/wasmgap/internal/headless"
)

// TestBrowserPage drives the load page in headless Chromium and in headless Firefox: an
// HTTP run and a WebSocket fan-out against its own server, each streamed to the end,
// summarized, and charted, with no script error.
func TestBrowserPage(t *testing.T) {
	for _, kind := range browsertest.Kinds() {
		t.Run(string(kind), func(t *testing.T) { testBrowserPage(t, kind) })
	}
}

func testBrowserPage(t *testing.T, kind headless.Kind) {
	srv := pageServer(t)
	p := browsertest.Open(t, kind)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	eval := func(what, js string, out any) {
		t.Helper()
		if err := p.Evaluate(ctx, js, out); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// poll waits until the JavaScript expression is true.
	poll := func(what, expr string, limit time.Duration) bool {
		t.Helper()
		for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var ok bool
			if err := p.Evaluate(ctx, "Boolean("+expr+")", &ok); err == nil && ok {
				return true
			}
		}
		return false
	}

	run := func(what, setup string) string {
		t.Helper()
		eval(what+": set up", setup, nil)
		eval(what+": start", `document.getElementById("start").click()`, nil)
		if !poll(what, `document.getElementById("status").textContent === "done"`, 30*time.Second) {
			var status string
			p.Evaluate(ctx, `document.getElementById("status").textContent`, &status)
			t.Fatalf("%s: never done within 30 s; status %q", what, status)
		}
		var summary string
		eval(what+": summary", `document.getElementById("summary").innerText`, &summary)
		var painted int
		eval(what+": chart", `(() => {
			const c = document.getElementById("chart"), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
			let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; })()`, &painted)
		if painted < 100 {
			t.Errorf("%s: the latency chart has %d painted pixels", what, painted)
		}
		return summary
	}

	if err := p.Navigate(ctx, srv.URL+"/load/"); err != nil {
		t.Fatal(err)
	}
	if !poll("the form", `document.getElementById("start")?.checkVisibility()`, 10*time.Second) {
		t.Fatal("the start button is not shown")
	}
	summary := run("HTTP run", `(() => { const f = document.getElementById("form"); f.n.value = 500; f.c.value = 4; })()`)
	for _, want := range []string{"500 sent, 500 ok, 0 errors", "closed model, 4 connection(s)", "p99"} {
		if !strings.Contains(summary, want) {
			t.Errorf("HTTP run summary lacks %q:\n%s", want, summary)
		}
	}
	summary = run("ws-fanout", `(() => { const f = document.getElementById("form");
		f.scenario.value = "ws-fanout"; f.scenario.dispatchEvent(new Event("change"));
		f.n.value = 20; f.rate.value = 200; f.receivers.value = 5; })()`)
	for _, want := range []string{"100 expected, 100 delivered, 0 lost, 0 duplicated", "Send→receive"} {
		if !strings.Contains(summary, want) {
			t.Errorf("ws-fanout summary lacks %q:\n%s", want, summary)
		}
	}
	if path := os.Getenv("LOAD_PAGE_SCREENSHOT"); path != "" {
		if c := headless.ChromedpContext(p); c != nil {
			if b, err := chromedp.Run(c, chromedp.FullScreenshot(100)); err == nil {
				os.WriteFile(path, b, 0o644)
			}
		}
	}
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("script errors: %v", errs)
	}
}
