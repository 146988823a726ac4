package chatserver

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wasmgap/wasmgap/chatserver/internal/store"
)

// fillMailbox has alice send n private messages to the offline bob.
func fillMailbox(t *testing.T, ts *testServer, n int) {
	t.Helper()
	for i := range n {
		if status, body := ts.msg(t, "alice", "bob", fmt.Sprint("m", i)); status != 200 {
			t.Fatalf("send %d: %d %s", i, status, body)
		}
	}
	ts.waitMailbox(t, "bob", n)
}

// expectMail reads the offline messages m<from>..m<to-1>, in order.
func (c *client) expectMail(from, to int) {
	c.t.Helper()
	c.expect("Welcome "+c.nick+"!", "now online: ")
	for i := from; i < to; i++ {
		c.expectOffline("alice", fmt.Sprint("m", i))
	}
}

// TestMailboxSurvivesDroppedLogin is the reproduction: bob has 100 offline
// messages; a first login that reads 10 and drops must not lose the other
// 90 for a second login without an id (a reloaded page).
func TestMailboxSurvivesDroppedLogin(t *testing.T) {
	t.Run("sse", func(t *testing.T) {
		ts := startServer(t, Options{MailAckDelay: time.Hour})
		fillMailbox(t, ts, 100)
		first := ts.login(t, "sse", "bob")
		first.expectMail(0, 10)
		first.close()
		ts.waitStreams(t, "bob", -1)
		if n := ts.mailbox("bob"); n != 100 {
			t.Fatalf("after a login that dropped, %d messages wait, want 100", n)
		}
		second := ts.login(t, "sse", "bob")
		second.expectMail(0, 100)
	})
	t.Run("ws", func(t *testing.T) {
		ts := startServer(t, Options{})
		fillMailbox(t, ts, 100)
		// A raw client that reads 10 frames and drops: it never reads the
		// ping after them, so it never answers it.
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.url, "http")+"/ws?nick=bob", nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 12 {
			ws.SetReadDeadline(time.Now().Add(waitFor))
			if _, _, err := ws.ReadMessage(); err != nil {
				t.Fatal(err)
			}
		}
		ws.Close()
		ts.waitStreams(t, "bob", -1)
		second := ts.login(t, "ws", "bob")
		second.expectMail(0, 100)
		// This one read them all: its pong confirms them.
		ts.waitMailbox(t, "bob", 0)
	})
}

// TestMailboxConfirmedDelivery: once delivery is known — an SSE stream open
// for MailAckDelay after them, a WebSocket's pong, a resume id past them —
// the messages leave the mailbox and a fresh login gets none.
func TestMailboxConfirmedDelivery(t *testing.T) {
	for _, kind := range []string{"sse", "ws"} {
		t.Run(kind, func(t *testing.T) {
			ts := startServer(t, Options{MailAckDelay: 50 * time.Millisecond})
			fillMailbox(t, ts, 20)
			bob := ts.login(t, kind, "bob")
			bob.expectMail(0, 20)
			ts.waitMailbox(t, "bob", 0)
			bob.close()
			ts.waitStreams(t, "bob", -1)
			again := ts.login(t, kind, "bob")
			again.expect("Welcome bob!", "now online: ")
			ts.msg(t, "alice", "bob", "marker")
			again.expect("alice: marker") // nothing came before it
		})
	}
}

// TestMailboxResumeNoDuplicates: a client that read part of its offline
// messages and resumes with its id gets the rest once, none twice, and its
// resume id confirms those it read.
func TestMailboxResumeNoDuplicates(t *testing.T) {
	ts := startServer(t, Options{MailAckDelay: time.Hour})
	fillMailbox(t, ts, 50)
	first := ts.login(t, "sse", "bob")
	first.expectMail(0, 10)
	last := first.lastID
	first.close()
	ts.waitStreams(t, "bob", -1)

	again := ts.resume(t, "sse", "bob", strconv.FormatUint(last, 10))
	again.lastID = last
	for i := 10; i < 50; i++ {
		again.expectOffline("alice", fmt.Sprint("m", i))
	}
	again.expect("Welcome bob!", "now online: ")
	if n := ts.mailbox("bob"); n != 40 {
		t.Errorf("after a resume past 10 of 50, %d wait, want 40", n)
	}
	ts.msg(t, "alice", "bob", "marker")
	again.expect("alice: marker") // nothing offered twice
	mark := again.lastID
	again.close()
	ts.waitStreams(t, "bob", -1)

	// Its next resume confirms the rest.
	third := ts.resume(t, "ws", "bob", strconv.FormatUint(mark, 10))
	third.lastID = mark
	third.expect("Welcome bob!", "now online: ")
	ts.waitMailbox(t, "bob", 0)
}

// TestMailboxAfterRestart: the mailboxes come back from the store as they
// were, their senders' addresses included, so the per-address limits hold
// across a restart: the flooder's oldest mail still goes first.
func TestMailboxAfterRestart(t *testing.T) {
	dir := t.TempDir()
	o := Options{DataDir: dir, MaxMailboxes: 30, EvictMail: true} // 3 mails per address
	ts := startServer(t, o)
	send := func(ts *testServer, from, to, addr string) {
		t.Helper()
		if res := ts.srv.localHub().do(t.Context(), &postReq{msg: message{From: from, To: to, Text: "hi " + to, Time: time.Now(), Addr: addr}}); res.err != nil || !res.offline {
			t.Fatalf("%s to %s: %+v", from, to, res)
		}
	}
	for i := range 3 {
		send(ts, "bot", fmt.Sprint("v", i), "203.0.113.6")
	}
	send(ts, "ann", "bob", "192.0.2.1")
	ts.stop()

	ts = startServer(t, o)
	var boxes []string
	ts.srv.localHub().do(t.Context(), &inspectReq{fn: func(h *hub) {
		for _, nick := range h.m.MailboxNicks() {
			for _, m := range h.m.Mailbox(nick) {
				boxes = append(boxes, nick+" "+m.From+" "+m.Addr)
			}
		}
	}})
	want := []string{"bob ann 192.0.2.1", "v0 bot 203.0.113.6", "v1 bot 203.0.113.6", "v2 bot 203.0.113.6"}
	if !slices.Equal(boxes, want) {
		t.Fatalf("after a restart: %q, want %q", boxes, want)
	}
	send(ts, "bot", "v3", "203.0.113.6")
	if ts.mailbox("v0") != 0 || ts.mailbox("v3") != 1 || ts.mailbox("bob") != 1 {
		t.Fatalf("the flooder's fourth mail after a restart: v0 %d, v3 %d, bob %d; want its oldest (v0) gone", ts.mailbox("v0"), ts.mailbox("v3"), ts.mailbox("bob"))
	}
	// And what the restart read is what the store holds after it.
	ts.stop()
	st, state, err := store.Open(dir+"/chat.db", true, ts.srv.opts.Logger)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if len(state.Mailboxes) != 4 || state.Mailboxes["v0"] != 0 || state.Mailboxes["v3"] != 1 {
		t.Fatalf("the store holds mailboxes %v", state.Mailboxes)
	}
}
