package chatserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestStoreBytesLimit: past MaxStoreBytes a send gets 507 saying why, and
// nothing already stored is lost: a resume from the start replays every
// message that was accepted.
func TestStoreBytesLimit(t *testing.T) {
	ts := startServer(t, Options{MaxStoreBytes: 256 << 10, NoSync: true})
	john := ts.login(t, "sse", "john")
	john.expect("Welcome john!", "now online: ")
	start := john.lastID
	john.close()
	ts.waitStreams(t, "john", -1)
	text := strings.Repeat("x", 1000)
	accepted := 0
	var status int
	var body string
	for i := range 2000 {
		status, body = ts.msg(t, "mary", "all", fmt.Sprint(i, " ", text))
		if status != 200 {
			break
		}
		accepted++
	}
	if status != 507 || !strings.Contains(body, "chat store full") || !strings.Contains(body, "the most allowed is 262144") {
		t.Fatalf("after %d sends: %d %q, want 507 saying the store is full and its limit", accepted, status, body)
	}
	if accepted < 50 {
		t.Fatalf("only %d sends of 1 KB fit in 256 KiB", accepted)
	}
	// Also POST /send, in JSON.
	if st, b := ts.post(t, "mary", "all", "one more"); st != 507 || !strings.Contains(b, `"error"`) {
		t.Errorf("POST /send past the limit: %d %s", st, b)
	}
	again := ts.resume(t, "sse", "john", fmt.Sprint(start))
	for i := range accepted {
		again.expect(fmt.Sprint("mary to all: ", i, " ", text))
	}
	again.expect("Welcome john!")
}

// TestMailboxesLimit: past MaxMailboxes a message to one more offline user
// gets 507 when no sending address holds more than one; users who already
// have a mailbox still get messages; the offline acknowledgement of POST
// /send says how long a message is kept.
func TestMailboxesLimit(t *testing.T) {
	ts := startServer(t, Options{MaxMailboxes: 3, Retention: 2 * time.Hour})
	for i := range 3 {
		p := message{From: fmt.Sprint("sender", i), To: fmt.Sprint("victim", i), Text: "hi", Time: time.Now(), Addr: fmt.Sprint("192.0.2.", i)}
		if res := ts.srv.localHub().do(t.Context(), &postReq{msg: p}); res.err != nil || !res.offline {
			t.Fatalf("mailbox %d: %+v", i, res)
		}
	}
	status, body := ts.msg(t, "spammer", "victim3", "hi")
	if status != 507 || !strings.Contains(body, "3 offline users already have messages waiting") {
		t.Fatalf("a fourth mailbox: %d %q, want 507 saying how many are kept", status, body)
	}
	status, body = ts.post(t, "spammer", "victim0", "again")
	var ack struct {
		OK      bool   `json:"ok"`
		Offline string `json:"offline"`
	}
	if err := json.Unmarshal([]byte(body), &ack); status != 200 || err != nil || !ack.OK || !strings.Contains(ack.Offline, "kept for 2h0m0s") {
		t.Fatalf("to an existing mailbox: %d %s, want 200 with the offline acknowledgement and its retention", status, body)
	}
	v := ts.login(t, "ws", "victim0")
	v.expect("Welcome victim0!", "now online: ")
	v.expectOffline("sender0", "hi")
	v.expectOffline("spammer", "again")
	ts.waitMailbox(t, "victim0", 0)
	// Its mailbox is gone: room for another.
	if status, body := ts.msg(t, "spammer", "victim3", "hi"); status != 200 {
		t.Fatalf("after a mailbox was emptied: %d %s", status, body)
	}
}

// TestMailboxFlooder: with EvictMail, one client that fills the chat's
// mailboxes from one address, rotating its nicks, does not shut offline
// messages off for the others: past its own share its oldest unread mail goes, and when the
// chat holds its most mailboxes, the address holding the most gives way.
// (Before, every message to an offline user got 507 once it was full.)
func TestMailboxFlooder(t *testing.T) {
	ts := startServer(t, Options{MaxMailboxes: 20, SendRate: -1, EvictMail: true})
	for i := range 40 {
		if status, body := ts.msg(t, fmt.Sprint("bot", i), fmt.Sprint("nobody", i), "spam"); status != 200 {
			t.Fatalf("flood %d: %d %s", i, status, body)
		}
	}
	if n := ts.mailbox("nobody0"); n != 0 {
		t.Errorf("the flooder's oldest mail still waits")
	}
	if n := ts.mailbox("nobody39"); n != 1 {
		t.Errorf("the flooder's newest mail does not wait")
	}
	// Others fill the chat's mailboxes from their own addresses: the
	// flooder gives way until it holds one mail, like each of them.
	post := func(i int) error {
		p := message{From: fmt.Sprint("friend", i), To: fmt.Sprint("away", i), Text: "see you", Time: time.Now(), Addr: fmt.Sprint("198.51.100.", i)}
		return ts.srv.localHub().do(t.Context(), &postReq{msg: p}).err
	}
	const honest = 19
	for i := range honest {
		if err := post(i); err != nil {
			t.Fatalf("an honest message %d refused: %v", i, err)
		}
	}
	if err := post(honest); !errors.Is(err, ErrStoreFull) {
		t.Fatalf("with 20 addresses holding one mail each: %v, want the chat store full", err)
	}
	// ...and the flooder gave way each time: every honest mail waits.
	for i := range honest {
		if n := ts.mailbox(fmt.Sprint("away", i)); n != 1 {
			t.Fatalf("away%d's mail: %d waiting, want 1", i, n)
		}
	}
}

// TestMailboxRetention: offline messages expire with the retention, like history.
func TestMailboxRetention(t *testing.T) {
	ts := startServer(t, Options{Retention: time.Hour})
	now := ts.setClock()
	ts.msg(t, "alice", "bob", "old")
	ts.waitMailbox(t, "bob", 1)
	now.Add(int64(2 * time.Hour))
	ts.prune()
	if n := ts.mailbox("bob"); n != 0 {
		t.Fatalf("%d messages older than the retention still wait", n)
	}
	bob := ts.login(t, "sse", "bob")
	bob.expect("Welcome bob!", "now online: ")
	ts.msg(t, "alice", "bob", "marker")
	bob.expect("alice: marker") // the expired message did not come first
}

// TestMailCapKeepsAcknowledged: with the mailbox caps reached (the mail
// waiting from one address, the users with mail waiting), one more
// message is refused with a body that names the cap, and no message that
// was acknowledged (200) leaves its mailbox to make room (issue 49, item
// 4). Eviction happens only when the operator chose it (EvictMail).
func TestMailCapKeepsAcknowledged(t *testing.T) {
	ts := startServer(t, Options{MaxMailboxes: 20, SendRate: -1}) // 2 mails per address
	acked := map[string]string{}
	for i := range 6 {
		to, text := fmt.Sprint("nobody", i), fmt.Sprint("spam ", i)
		status, body := ts.msg(t, fmt.Sprint("bot", i), to, text)
		switch {
		case status == 200:
			acked[to] = text
		case status != 429 || !strings.Contains(body, "from your address") || !strings.Contains(body, "the most kept per address"):
			t.Fatalf("flood %d: %d %q, want 200, or 429 naming the cap per address", i, status, body)
		}
	}
	if len(acked) != 2 {
		t.Fatalf("%d of the flood acknowledged, want the address's share of 2", len(acked))
	}
	// Others fill the chat's mailboxes from addresses of their own.
	for i := range 30 {
		to := fmt.Sprint("away", i)
		p := message{From: fmt.Sprint("friend", i), To: to, Text: "see you", Time: time.Now(), Addr: fmt.Sprint("198.51.100.", i)}
		err := ts.srv.localHub().do(t.Context(), &postReq{msg: p}).err
		switch {
		case err == nil:
			acked[to] = "see you"
		case !errors.Is(err, ErrStoreFull) || !strings.Contains(err.Error(), "offline users already have messages waiting"):
			t.Fatalf("message %d: %v, want the chat store full", i, err)
		}
	}
	if len(acked) != 20 {
		t.Fatalf("%d mailboxes acknowledged, want the cap of 20", len(acked))
	}
	var missing []string
	for to := range acked {
		if ts.mailbox(to) != 1 {
			missing = append(missing, to)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("acknowledged messages missing from their mailboxes: %v", missing)
	}
}
