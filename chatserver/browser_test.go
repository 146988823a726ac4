package chatserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/wasmgap/wasmgap/internal/browsertest"
)

// TestBrowserChat: two pages of the chat, mounted under /chat/ as the
// playground mounts it, one logged in over SSE and one over WebSocket, chat
// with each other, and a message holding HTML shows as text.
func TestBrowserChat(t *testing.T) {
	ts := startServer(t, Options{})
	browserChat(t, ts.srv)
}

// browserChat runs the pages of TestBrowserChat; with several servers (the
// nodes of one chat) alice and carol use the first, bob the second.
func browserChat(t *testing.T, servers ...*Server) {
	var sites []*httptest.Server
	for _, srv := range servers {
		mux := http.NewServeMux()
		mux.Handle("/chat/", http.StripPrefix("/chat", srv.Handler()))
		site := httptest.NewServer(mux)
		defer site.Close()
		sites = append(sites, site)
	}

	browser := browsertest.Start(t)

	var mu sync.Mutex
	var problems []string
	closers := map[string]context.CancelFunc{}
	tab := func(name string) context.Context {
		ctx, cancel := chromedp.NewContext(browser)
		t.Cleanup(cancel)
		closers[name] = cancel
		if err := chromedp.Do(ctx); err != nil {
			t.Fatal(err)
		}
		// Any dialog (an injected alert) or script error fails the test.
		dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
		errs := chromedp.Events(ctx, runtime.ExceptionThrown)
		go func() {
			for ev, err := range dialogs {
				if err != nil {
					return
				}
				mu.Lock()
				problems = append(problems, name+": a dialog opened: "+ev.Message)
				mu.Unlock()
				chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			}
		}()
		go func() {
			for ev, err := range errs {
				if err != nil {
					return
				}
				mu.Lock()
				d := ev.ExceptionDetails
				msg := d.Text
				if d.Exception != nil {
					msg += " " + d.Exception.Description
				}
				problems = append(problems, name+": script error: "+msg)
				mu.Unlock()
			}
		}()
		return ctx
	}
	step := func(ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// waitText waits until the page's log shows text.
	waitText := func(ctx context.Context, who, text string) {
		t.Helper()
		q, _ := json.Marshal(text)
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if _, err := chromedp.Run(sctx, chromedp.Poll[bool](`[...document.querySelectorAll("#log li")].some(li => li.textContent === `+string(q)+`)`,
			chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			lines, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("log").innerText`))
			t.Fatalf("%s's page never showed %q: %v\nit shows:\n%s", who, text, err, lines)
		}
	}
	join := func(ctx context.Context, nick, transport string) {
		t.Helper()
		site := sites[0]
		if nick == "bob" {
			site = sites[len(sites)-1]
		}
		step(ctx, nick+" joins",
			chromedp.Navigate(site.URL+"/chat/"),
			chromedp.WaitVisible(chromedp.ID("nick")),
			chromedp.SendKeys(chromedp.ID("nick"), nick),
			chromedp.SetValue(chromedp.ID("transport"), transport),
			chromedp.Click(chromedp.CSS("#login button")),
			chromedp.WaitVisible(chromedp.ID("msg")))
	}
	send := func(ctx context.Context, nick, to, text string) {
		t.Helper()
		step(ctx, nick+" sends",
			chromedp.SetValue(chromedp.ID("to"), to),
			chromedp.SendKeys(chromedp.ID("msg"), text),
			chromedp.Click(chromedp.CSS("#send button[type=submit], #send button:not([type])")))
	}

	alice, bob := tab("alice"), tab("bob")
	join(alice, "alice", "sse")
	waitText(alice, "alice", "Welcome alice!")
	waitText(alice, "alice", "now online: you are the only one online")
	join(bob, "bob", "ws")
	waitText(bob, "bob", "Welcome bob!")
	waitText(bob, "bob", "now online: alice")
	waitText(alice, "alice", "bob has joined.")

	const xss = `<img src=x onerror=alert(1)>`
	send(alice, "alice", "all", xss) // over POST ./send
	waitText(bob, "bob", "alice to all: "+xss)
	waitText(alice, "alice", "alice to all: "+xss)
	send(bob, "bob", "alice", "hi alice") // over the WebSocket
	waitText(alice, "alice", "bob: hi alice")
	waitText(bob, "bob", "You to alice: hi alice")
	send(alice, "alice", "bob", "hi bob")
	waitText(bob, "bob", "alice: hi bob")

	for name, ctx := range map[string]context.Context{"alice": alice, "bob": bob} {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#log img, #log *:not(li)").length`))
		if err != nil || n != 0 {
			t.Errorf("%s's page turned message text into %d elements (%v)", name, n, err)
		}
	}
	// The server logs bob off when his page goes away, and alice when her
	// tab closes.
	step(bob, "bob leaves", chromedp.Navigate("about:blank"))
	waitText(alice, "alice", "bob has left.")
	carol := tab("carol")
	join(carol, "carol", "ws")
	waitText(carol, "carol", "now online: alice")
	closers["alice"]()
	waitText(carol, "carol", "alice has left.")

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
}
