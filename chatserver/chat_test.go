package chatserver

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSemantics runs the article's whole conversation with every mix of
// transports: each user's transport is one letter of the case's name.
func TestSemantics(t *testing.T) {
	for _, mix := range []string{"sse,sse,sse", "ws,ws,ws", "sse,ws,sse", "ws,sse,ws"} {
		t.Run(mix, func(t *testing.T) {
			k := strings.Split(mix, ",")
			ts := startServer(t, Options{MailAckDelay: 50 * time.Millisecond})

			// Login: a welcome, who is online (nobody yet).
			alice := ts.login(t, k[0], "alice")
			alice.expect("Welcome alice!", "now online: ")

			// A second user: sees alice online; alice is told.
			bob := ts.login(t, k[1], "bob")
			bob.expect("Welcome bob!", "now online: alice")
			alice.expect("bob has joined.")

			// A message to all reaches everyone, the sender too.
			alice.send("all", "hello everyone")
			alice.expect("alice to all: hello everyone")
			bob.expect("alice to all: hello everyone")

			// A private message, echoed to the sender.
			bob.send("alice", "psst")
			alice.expect("bob: psst")
			bob.expect("You to alice: psst")

			// The article's GET route sends too.
			if status, body := ts.msg(t, "alice", "bob", "via GET"); status != 200 || body != "ok" {
				t.Fatalf("GET /msg: %d %q", status, body)
			}
			bob.expect("alice: via GET")
			alice.expect("You to bob: via GET")

			// A message to oneself is only echoed.
			alice.send("alice", "note to self")
			alice.expect("You to alice: note to self")

			// A message to an offline user is kept and acknowledged.
			alice.send("carol", "see you later")
			alice.expect("You to carol (offline): see you later")
			bob.send("carol", "me too")
			bob.expect("You to carol (offline): me too")

			// At login the kept messages come after the welcome lines, in order.
			carol := ts.login(t, k[2], "carol")
			carol.expect("Welcome carol!", "now online: alice, bob")
			carol.expectOffline("alice", "see you later")
			carol.expectOffline("bob", "me too")
			alice.expect("carol has joined.")
			bob.expect("carol has joined.")

			// Several connections per user: a second tab of bob, over the
			// other transport. No one is told bob joined again.
			other := map[string]string{"sse": "ws", "ws": "sse"}[k[1]]
			bob2 := ts.login(t, other, "bob")
			bob2.expect("Welcome bob!", "now online: alice, bob, carol")
			carol.send("bob", "to every tab")
			bob.expect("carol: to every tab")
			bob2.expect("carol: to every tab")
			carol.expect("You to bob: to every tab")
			alice.quiet()

			// Closing one of bob's tabs says nothing; the last one says he left.
			bob.close()
			carol.send("all", "still here?")
			for _, c := range []*client{alice, bob2, carol} {
				c.expect("carol to all: still here?")
			}
			bob2.close()
			alice.expect("bob has left.")
			carol.expect("bob has left.")

			// Now bob is offline again: a message waits for him.
			alice.send("bob", "back soon?")
			alice.expect("You to bob (offline): back soon?")
			bob3 := ts.login(t, k[1], "bob")
			bob3.expect("Welcome bob!", "now online: alice, carol")
			bob3.expectOffline("alice", "back soon?")
			alice.expect("bob has joined.")
			carol.expect("bob has joined.")
			ts.waitMailbox(t, "bob", 0) // its delivery is known
			bob3.close()
			alice.expect("bob has left.")
			// It was delivered once: the next login finds no mail.
			bob4 := ts.login(t, k[1], "bob")
			bob4.expect("Welcome bob!", "now online: alice, carol")
			bob4.quiet()
		})
	}
}

// TestWebSocketSendsInOrder: one WebSocket sends many frames without
// waiting; they are stored and delivered in the order sent, errors
// included in their place.
func TestWebSocketSendsInOrder(t *testing.T) {
	ts := startServer(t, Options{})
	rx := ts.login(t, "sse", "rx")
	rx.expect("Welcome rx!", "now online: ")
	tx := ts.login(t, "ws", "tx")
	tx.expect("Welcome tx!", "now online: rx")
	rx.expect("tx has joined.")
	const n = 2000
	for i := range n {
		text := strconv.Itoa(i)
		if i == n/2 {
			text = "" // refused: the others still go
		}
		tx.send("rx", text)
	}
	for i := range n {
		if i == n/2 {
			continue
		}
		rx.expect("tx: " + strconv.Itoa(i))
		tx.expect("You to rx: " + strconv.Itoa(i))
	}
	select {
	case e := <-tx.errs:
		if !strings.Contains(e, "empty") {
			t.Errorf("error %q", e)
		}
	case <-time.After(waitFor):
		t.Fatal("the empty message was not refused")
	}
}

// TestTextOneLine: a message is one line with no control character: line
// and paragraph separators (U+0085, U+2028, U+2029) and bidirectional
// controls (U+202A to U+202E, U+2066 to U+2069) are refused with 400
// saying which, on every send route, beside the C0 controls.
func TestTextOneLine(t *testing.T) {
	ts := startServer(t, Options{})
	for _, r := range []rune{'\n', 0x85, 0x2028, 0x2029, 0x202a, 0x202e, 0x2066, 0x2069} {
		text := "a" + string(r) + "b"
		want := fmt.Sprintf("%U", r)
		if status, body := ts.msg(t, "ann", "all", text); status != 400 || !strings.Contains(body, want) || !strings.Contains(body, "one line") {
			t.Errorf("GET /msg with %U: %d %q, want 400 naming it", r, status, body)
		}
		if status, body := ts.post(t, "ann", "all", text); status != 400 || !strings.Contains(body, want) {
			t.Errorf("POST /send with %U: %d %q, want 400 naming it", r, status, body)
		}
	}
	if status, body := ts.msg(t, "ann", "all", "fine\ttext ✓"); status != 200 {
		t.Errorf("an ordinary line: %d %q", status, body)
	}
}
