package chatserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wasmgap/wasmgap/internal/browsertest"
	"github.com/wasmgap/wasmgap/internal/headless"
)

// TestBrowserChat: two pages of the chat, mounted under /chat/ as the
// playground mounts it, one logged in over SSE and one over WebSocket, chat
// with each other, and a message holding HTML shows as text — in Chromium and
// in Firefox.
func TestBrowserChat(t *testing.T) {
	ts := startServer(t, Options{})
	for _, kind := range browsertest.Kinds() {
		t.Run(string(kind), func(t *testing.T) { browserChatIn(t, kind, ts.srv) })
	}
}

// browserChat runs the pages of TestBrowserChat in Chromium.
func browserChat(t *testing.T, servers ...*Server) { browserChatIn(t, headless.Chromium, servers...) }

// browserChatIn runs the pages of TestBrowserChat in the browser, each person's page a
// browser of its own; with several servers (the nodes of one chat) alice and carol use
// the first, bob the second.
func browserChatIn(t *testing.T, kind headless.Kind, servers ...*Server) {
	var sites []*httptest.Server
	for _, srv := range servers {
		mux := http.NewServeMux()
		mux.Handle("/chat/", http.StripPrefix("/chat", srv.Handler()))
		site := httptest.NewServer(mux)
		defer site.Close()
		sites = append(sites, site)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	pages := map[string]headless.Page{}
	tab := func(name string) headless.Page {
		p := browsertest.Open(t, kind)
		pages[name] = p
		return p
	}
	// eval runs a step's JavaScript in a page, bounded.
	eval := func(p headless.Page, what, js string, out any) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := p.Evaluate(sctx, js, out); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// poll waits until the JavaScript expression is true in the page.
	poll := func(p headless.Page, expr string) bool {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var ok bool
			if err := p.Evaluate(ctx, "Boolean("+expr+")", &ok); err == nil && ok {
				return true
			}
		}
		return false
	}
	// waitText waits until the page's log shows text.
	waitText := func(p headless.Page, who, text string) {
		t.Helper()
		q, _ := json.Marshal(text)
		if !poll(p, `[...document.querySelectorAll("#log li")].some(li => li.textContent === `+string(q)+`)`) {
			var lines string
			p.Evaluate(ctx, `document.getElementById("log").innerText`, &lines)
			t.Fatalf("%s's page never showed %q within 20 s; it shows:\n%s", who, text, lines)
		}
	}
	// set types a value into a field as a person would: the value, then its events.
	set := func(p headless.Page, what, id, value string) {
		t.Helper()
		qid, _ := json.Marshal(id)
		qv, _ := json.Marshal(value)
		eval(p, what, `(() => { const e = document.getElementById(`+string(qid)+`); e.focus(); e.value = `+string(qv)+`;
			e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); })()`, nil)
	}
	click := func(p headless.Page, what, sel string) {
		t.Helper()
		q, _ := json.Marshal(sel)
		eval(p, what, `document.querySelector(`+string(q)+`).click()`, nil)
	}
	join := func(p headless.Page, nick, transport string) {
		t.Helper()
		site := sites[0]
		if nick == "bob" {
			site = sites[len(sites)-1]
		}
		if err := p.Navigate(ctx, site.URL+"/chat/"); err != nil {
			t.Fatalf("%s joins: %v", nick, err)
		}
		// Any dialog (an injected alert) fails the test: it is reported as a console error.
		eval(p, nick+" joins", `window.alert = window.confirm = window.prompt = (m) => { console.error("a dialog opened: " + m); }`, nil)
		if !poll(p, `document.getElementById("nick").checkVisibility()`) {
			t.Fatalf("%s joins: the nickname field is not shown", nick)
		}
		set(p, nick+" joins", "nick", nick)
		set(p, nick+" joins", "transport", transport)
		click(p, nick+" joins", "#login button")
		if !poll(p, `document.getElementById("msg").checkVisibility()`) {
			t.Fatalf("%s joins: the message field is not shown", nick)
		}
	}
	send := func(p headless.Page, nick, to, text string) {
		t.Helper()
		set(p, nick+" sends", "to", to)
		set(p, nick+" sends", "msg", text)
		click(p, nick+" sends", "#send button[type=submit], #send button:not([type])")
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
	waitText(alice, "alice", "You to all: "+xss)
	send(bob, "bob", "alice", "hi alice") // over the WebSocket
	waitText(alice, "alice", "bob: hi alice")
	waitText(bob, "bob", "You to alice: hi alice")
	send(alice, "alice", "bob", "hi bob")
	waitText(bob, "bob", "alice: hi bob")

	for name, p := range map[string]headless.Page{"alice": alice, "bob": bob} {
		var n int
		if err := p.Evaluate(ctx, `document.querySelectorAll("#log img, #log *:not(li)").length`, &n); err != nil || n != 0 {
			t.Errorf("%s's page turned message text into %d elements (%v)", name, n, err)
		}
	}
	// The server logs bob off when his page goes away, and alice when her
	// browser closes.
	if err := bob.Navigate(ctx, "about:blank"); err != nil {
		t.Fatalf("bob leaves: %v", err)
	}
	waitText(alice, "alice", "bob has left.")
	carol := tab("carol")
	join(carol, "carol", "ws")
	waitText(carol, "carol", "now online: alice")
	aliceErrors := alice.ConsoleErrors()
	alice.Close()
	waitText(carol, "carol", "alice has left.")

	for name, p := range pages {
		errs := p.ConsoleErrors()
		if name == "alice" {
			errs = aliceErrors
		}
		for _, e := range errs {
			t.Errorf("%s: script error or dialog: %s", name, e)
		}
	}
}
