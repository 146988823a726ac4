package chatserver

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/wasmgap/wasmgap/internal/browsertest"
)

// TestChatPageAloneInChromium: the chat page on its own (wasmgap chat's root) has a
// heading, a line of help and an icon; a user alone is told so in words; Leave closes the
// stream and offers the login again.
func TestChatPageAloneInChromium(t *testing.T) {
	ts := startServer(t, Options{})
	ctx := browsertest.Start(t)
	poll := func(expr, what string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.url+"/?nick=solo")); err != nil {
		t.Fatal(err)
	}
	head, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.querySelector("#head h1")?.textContent ?? "", document.querySelector("#head p")?.textContent ?? "",
		String(document.getElementById("head").hidden), document.querySelector('link[rel="icon"]')?.href ?? ""]`))
	if err != nil || len(head) != 4 {
		t.Fatalf("read the heading: %v", err)
	}
	if head[0] != "Chat" || !strings.Contains(head[1], "nickname") || head[2] != "false" || !strings.HasPrefix(head[3], "data:image/svg+xml") {
		t.Errorf("heading %q, help %q, hidden %s, icon %.30q; want a shown heading, help and an icon", head[0], head[1], head[2], head[3])
	}
	poll(`document.getElementById("log").innerText.includes("now online: you are the only one online")`, "the alone user to be told so")
	poll(`document.getElementById("status").textContent.startsWith("connected as solo")`, "the stream to connect")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("leave"))); err != nil {
		t.Fatal(err)
	}
	poll(`!document.getElementById("login").hidden && document.getElementById("send").hidden && document.getElementById("status").textContent === "left as solo"`, "Leave to offer the login again")
	// The stream closed: bob, joining next in this page, is alone too.
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("nick"), "bob")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#login button"))); err != nil {
		t.Fatal(err)
	}
	poll(`document.getElementById("log").innerText.split("you are the only one online").length === 3`, "bob to be told he is alone (solo left)")
}
