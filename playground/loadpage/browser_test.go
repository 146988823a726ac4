package loadpage

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/wasmgap/wasmgap/internal/browsertest"
)

// TestBrowserPage drives the load page in headless Chromium: an HTTP run and a WebSocket
// fan-out against its own server, each streamed to the end, summarized, and charted.
func TestBrowserPage(t *testing.T) {
	srv := pageServer(t)
	ctx := browsertest.Start(t)
	var mu sync.Mutex
	var scriptErrors []string
	go func() {
		for ev, err := range chromedp.Events(ctx, runtime.ExceptionThrown) {
			if err != nil {
				return
			}
			mu.Lock()
			scriptErrors = append(scriptErrors, ev.ExceptionDetails.Text)
			mu.Unlock()
		}
	}()

	run := func(what, setup string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx,
			chromedp.Evaluate[chromedp.Void](setup),
			chromedp.Click(chromedp.ID("start")),
		); err != nil {
			t.Fatalf("%s: start: %v", what, err)
		}
		if _, err := chromedp.Run(sctx, chromedp.Poll[bool](`document.getElementById("status").textContent === "done"`,
			chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent`))
			t.Fatalf("%s: never done: %v; status %q", what, err, status)
		}
		summary, err := chromedp.Run(sctx, chromedp.Evaluate[string](`document.getElementById("summary").innerText`))
		if err != nil {
			t.Fatal(err)
		}
		painted, err := chromedp.Run(sctx, chromedp.Evaluate[int](`(() => {
			const c = document.getElementById("chart"), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
			let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; })()`))
		if err != nil {
			t.Fatal(err)
		}
		if painted < 100 {
			t.Errorf("%s: the latency chart has %d painted pixels", what, painted)
		}
		return summary
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/load/"), chromedp.WaitVisible(chromedp.ID("start"))); err != nil {
		t.Fatal(err)
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
		if b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			os.WriteFile(path, b, 0o644)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(scriptErrors) > 0 {
		t.Errorf("script errors: %v", scriptErrors)
	}
}
