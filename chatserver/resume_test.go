package chatserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestResumeSSE drops an SSE stream in the middle of a flow of messages and
// resumes it with Last-Event-ID: nothing is missing, nothing comes twice.
func TestResumeSSE(t *testing.T) {
	for _, kind := range []string{"sse", "ws"} {
		t.Run(kind, func(t *testing.T) {
			ts := startServer(t, Options{LeaveGrace: time.Minute})
			john := ts.login(t, kind, "john")
			john.expect("Welcome john!", "now online: ")
			const total = 300
			sent := make(chan struct{})
			go func() {
				defer close(sent)
				for i := range total {
					if status, body := ts.msg(t, "mary", "john", fmt.Sprint("m", i)); status != 200 {
						t.Errorf("send %d: %d %s", i, status, body)
						return
					}
				}
			}()
			got := map[string]bool{}
			for range 100 {
				e := john.next()
				if got[e.text] {
					t.Fatalf("%q twice", e.text)
				}
				got[e.text] = true
			}
			john.close() // mid-stream: more is on its way
			last := john.lastID
			drained := 0
		drain: // what arrived before the close counts as received too
			for {
				select {
				case e := <-john.events:
					if e.id > last {
						last = e.id
						got[e.text] = true
						drained++
					}
				default:
					break drain
				}
			}
			<-sent
			again := ts.resume(t, kind, "john", strconv.FormatUint(last, 10))
			again.lastID = last
			for len(got) < total {
				e := again.next()
				if e.text == "Welcome john!" || e.text == "now online: " || e.text == "now online: john" {
					continue
				}
				if got[e.text] {
					t.Fatalf("%q twice after resume", e.text)
				}
				got[e.text] = true
			}
			for i := range total {
				if !got[fmt.Sprint("mary: m", i)] {
					t.Fatalf("message m%d missing", i)
				}
			}
			again.expect("Welcome john!", "now online: ")
			again.quiet()
		})
	}
}

// TestRestartOfflineOnce restarts the server between a message to an
// offline user and that user's login: the message arrives, exactly once.
func TestRestartOfflineOnce(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, Options{DataDir: dir})
	bob := ts.login(t, "sse", "bob")
	bob.expect("Welcome bob!", "now online: ")
	first := bob.lastID
	bob.close()
	ts.waitStreams(t, "bob", -1)
	alice := ts.login(t, "ws", "alice")
	alice.expect("Welcome alice!", "now online: ")
	alice.send("bob", "kept across a restart")
	alice.expect("You to bob (offline): kept across a restart")
	ts.stop()

	ts2 := startServer(t, Options{DataDir: dir})
	bob2 := ts2.login(t, "ws", "bob")
	bob2.expect("Welcome bob!", "now online: ")
	if bob2.lastID <= first {
		t.Errorf("ids went back after the restart: %d after %d", bob2.lastID, first)
	}
	bob2.expectOffline("alice", "kept across a restart")
	ts2.waitMailbox(t, "bob", 0) // the WebSocket's pong confirmed it
	bob2.close()
	ts2.waitStreams(t, "bob", -1)

	// Neither a fresh login nor a resume from before the delivery gets it again.
	bob3 := ts2.login(t, "sse", "bob")
	bob3.expect("Welcome bob!", "now online: ")
	bob3.quiet()
	bob3.close()
	ts2.waitStreams(t, "bob", -1)
	bob4 := ts2.resume(t, "sse", "bob", strconv.FormatUint(first, 10))
	seen := 0
	for { // the replay comes before the welcome
		e := bob4.next()
		if e.text == "Welcome bob!" {
			break
		}
		if strings.HasPrefix(e.text, "alice (") {
			seen++
		}
	}
	if seen != 1 {
		t.Errorf("a resume from before the delivery showed the offline message %d times, want 1 (the stored delivery)", seen)
	}
}

// TestRestartResume resumes a stream across a restart: the history is in the store.
func TestRestartResume(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, Options{DataDir: dir})
	john := ts.login(t, "sse", "john")
	john.expect("Welcome john!", "now online: ")
	mark := john.lastID
	ts.msg(t, "mary", "all", "one")
	john.expect("mary to all: one")
	ts.msg(t, "mary", "all", "two")
	john.expect("mary to all: two")
	ts.stop()

	ts2 := startServer(t, Options{DataDir: dir})
	again := ts2.resume(t, "sse", "john", strconv.FormatUint(mark, 10))
	again.expect("mary to all: one", "mary to all: two", "Welcome john!", "now online: ")
}

// TestLeaveGrace: a user who reconnects within the grace is never reported
// as gone, and what was sent meanwhile reaches the resumed stream.
func TestLeaveGrace(t *testing.T) {
	ts := startServer(t, Options{LeaveGrace: 3 * time.Second})
	alice := ts.login(t, "sse", "alice")
	alice.expect("Welcome alice!", "now online: ")
	bob := ts.login(t, "ws", "bob")
	bob.expect("Welcome bob!", "now online: alice")
	alice.expect("bob has joined.")
	bob.close()
	ts.waitStreams(t, "bob", 0)
	alice.send("bob", "while you were away")
	alice.expect("You to bob: while you were away") // still online, not "(offline)"
	back := ts.resume(t, "ws", "bob", strconv.FormatUint(bob.lastID, 10))
	back.expect("alice: while you were away", "Welcome bob!", "now online: alice")
	back.quiet()
	alice.quiet() // neither "has left." nor "has joined."

	// A fresh login within the grace gets the message from the mailbox instead.
	back.close()
	ts.waitStreams(t, "bob", 0)
	alice.send("bob", "second")
	alice.expect("You to bob: second")
	fresh := ts.login(t, "sse", "bob")
	fresh.expect("Welcome bob!", "now online: alice")
	fresh.expectOffline("alice", "second")
	fresh.close()
	alice.expect("bob has left.") // after the grace
}

// TestShutdownDrains: Serve drains on cancel; streams are told why and the
// store is closed so the next server opens it.
func TestShutdownDrains(t *testing.T) {
	ts, stop := serveOn(t, Options{})
	c := ts.login(t, "sse", "john")
	c.expect("Welcome john!", "now online: ")
	w := ts.login(t, "ws", "jane")
	w.expect("Welcome jane!", "now online: john")
	stop() // fails the test unless Serve returns nil
	for _, cl := range []*client{c, w} {
		select {
		case <-cl.done:
		case <-time.After(waitFor):
			t.Fatalf("%s's stream still open after shutdown", cl.nick)
		}
	}
	if got := <-c.comments; got != "closed: the chat server is shutting down; reconnect with the last event id received to resume" {
		t.Errorf("sse closing comment = %q", got)
	}
	select {
	case e := <-w.errs:
		if e == "" {
			t.Error("empty ws error")
		}
	default:
		t.Error("the WebSocket was not told why it closed")
	}
	srv2, err := New(Options{DataDir: ts.dir})
	if err != nil {
		t.Fatalf("reopen after shutdown: %v", err)
	}
	srv2.Shutdown(context.Background())
}
