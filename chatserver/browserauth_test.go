package chatserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/wasmgap/wasmgap/internal/browsertest"
)

// pageTab opens the chat page at path (under /chat/ of site) in a tab of
// its own browser context (its own cookies).
func pageTab(t *testing.T, browser context.Context, url string) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // the tab lives as long as ctx
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
	defer scancel()
	if err := chromedp.Do(sctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// pageWait waits until js is true on the page.
func pageWait(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(sctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
		defer dcancel()
		shown, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`location.href + "\n" + document.getElementById("status").textContent + "\n" + document.getElementById("log").innerText`))
		t.Fatalf("%s: %v\nthe page shows:\n%s", what, err, shown)
	}
}

func pageShows(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	q, _ := json.Marshal(text)
	pageWait(t, ctx, "the page never showed "+string(q), `[...document.querySelectorAll("#log li")].some(li => li.textContent === `+string(q)+`)`)
}

func typeAndSend(t *testing.T, ctx context.Context, to, text string) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, chromedp.WaitVisible(chromedp.ID("msg")), chromedp.SetValue(chromedp.ID("to"), to),
		chromedp.SendKeys(chromedp.ID("msg"), text), chromedp.Click(chromedp.CSS("#send button:not([type])"))); err != nil {
		t.Fatal(err)
	}
}

func mountChat(t *testing.T, srv *Server) string {
	mux := http.NewServeMux()
	mux.Handle("/chat/", http.StripPrefix("/chat", srv.Handler()))
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	return site.URL + "/chat/"
}

// TestBrowserTokens: with --auth, the page takes its token from the URL's
// fragment, logs in as the token's nick over SSE and WebSocket, sends with
// it, and shows why a login as another nick is refused.
func TestBrowserTokens(t *testing.T) {
	ts := startServer(t, Options{AuthSecret: testSecret})
	url := mountChat(t, ts.srv)
	browser := browsertest.Start(t)
	alice := pageTab(t, browser, url+"#token="+mint(t, "alice", time.Hour))
	pageShows(t, alice, "Welcome alice!")
	bob := pageTab(t, browser, url+"?transport=ws#token="+mint(t, "bob", time.Hour))
	pageShows(t, bob, "Welcome bob!")
	pageShows(t, alice, "bob has joined.")
	typeAndSend(t, alice, "bob", "over POST with a bearer token")
	pageShows(t, bob, "alice: over POST with a bearer token")
	typeAndSend(t, bob, "alice", "over the WebSocket")
	pageShows(t, alice, "bob: over the WebSocket")

	mallory := pageTab(t, browser, url+"?nick=alice#token="+mint(t, "mallory", time.Hour))
	pageWait(t, mallory, "mallory's page never said why", `document.getElementById("status").textContent.includes("token is mallory's")`)
}

// TestBrowserClaims: with --claim-nicks the claim's cookie, set by the SSE
// or WebSocket login, is what the page's later sends and logins show.
func TestBrowserClaims(t *testing.T) {
	ts := startServer(t, Options{ClaimNicks: true, LeaveGrace: time.Hour})
	url := mountChat(t, ts.srv)
	browser := browsertest.Start(t)
	alice := pageTab(t, browser, url+"?nick=alice")
	pageShows(t, alice, "Welcome alice!")
	typeAndSend(t, alice, "all", "sent with the claim's cookie")
	pageShows(t, alice, "You to all: sent with the claim's cookie")
	bob := pageTab(t, browser, url+"?nick=bob&transport=ws")
	pageShows(t, bob, "Welcome bob!")
	// A reload logs bob in again: the cookie of the WebSocket's handshake
	// shows his claim.
	sctx, cancel := context.WithTimeout(bob, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	pageWait(t, bob, "bob's second login", `document.getElementById("status").textContent === "connected as bob (WebSocket)"`)
	// Another browser cannot be alice while her claim lasts.
	other := pageTab(t, browser, url+"?nick=alice")
	pageWait(t, other, "the other page never said alice is claimed", `document.getElementById("status").textContent.includes("claimed")`)
}
