package room

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

// driver feeds a machine requests with increasing sequences and times.
type driver struct {
	m   *Machine
	seq uint64
	at  time.Time
}

func newDriver(cfg Config) *driver {
	if cfg.MaxMailbox == 0 {
		cfg.MaxMailbox = 100
	}
	if cfg.MaxMailboxes == 0 {
		cfg.MaxMailboxes = 100
	}
	return &driver{m: New(cfg, 0), at: t0}
}

func (d *driver) do(r Request) Output {
	d.seq++
	d.at = d.at.Add(time.Second)
	r.Seq, r.At = d.seq, d.at
	if r.Kind == Post && r.Sent.IsZero() {
		r.Sent = d.at
	}
	return d.m.Apply(r)
}

func (d *driver) open(nick string, token uint64) Output {
	return d.do(Request{Kind: Open, Nick: nick, Token: token})
}
func (d *driver) post(from, to, text string) Output {
	return d.do(Request{Kind: Post, Nick: from, To: to, Text: text, Addr: "addr-" + from})
}

// texts is the events as "to/except: text" lines.
func texts(evs []Event) string {
	var b []string
	for _, e := range evs {
		if e.To != "" {
			b = append(b, e.To+": "+e.Text)
		} else {
			b = append(b, "all-"+e.Except+": "+e.Text)
		}
	}
	return strings.Join(b, "\n")
}

func TestPosts(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(d *driver)
		post    [3]string
		events  string
		offline bool
		refusal RefusalKind
		mail    int // mails waiting for the receiver after
	}{
		{name: "to all", setup: func(d *driver) { d.open("ann", 1) }, post: [3]string{"ann", "all", "hi"},
			events: "all-: ann to all: hi"},
		{name: "private, receiver online", setup: func(d *driver) { d.open("ann", 1); d.open("bob", 2) },
			post: [3]string{"ann", "bob", "hi"}, events: "bob: ann: hi\nann: You to bob: hi"},
		{name: "private to oneself, online", setup: func(d *driver) { d.open("ann", 1) },
			post: [3]string{"ann", "ann", "note"}, events: "ann: You to ann: note"},
		{name: "offline receiver", post: [3]string{"ann", "bob", "hi"},
			events: "ann: You to bob (offline): hi", offline: true, mail: 1},
		{name: "to oneself, offline: kept in the mailbox", post: [3]string{"ann", "ann", "note"},
			events: "ann: You to ann (offline): note", offline: true, mail: 1},
		{name: "receiver within its grace: event and mailbox", setup: func(d *driver) {
			d.open("bob", 2)
			d.do(Request{Kind: Close, Nick: "bob", Token: 2})
		}, post: [3]string{"ann", "bob", "hi"}, events: "bob: ann: hi\nann: You to bob: hi", mail: 1},
		{name: "mailbox full", setup: func(d *driver) {
			for i := range 3 {
				d.post("ann", "bob", fmt.Sprint(i))
			}
		}, post: [3]string{"ann", "bob", "more"}, refusal: MailboxFull, mail: 3},
		{name: "too many mailboxes", setup: func(d *driver) {
			d.post("ann", "c1", "x")
			d.post("bob", "c2", "x")
		}, post: [3]string{"cat", "c3", "x"}, refusal: StoreFull},
		{name: "grace: no mail past the mailbox cap", setup: func(d *driver) {
			d.post("ann", "c1", "x")
			d.post("dan", "c2", "x")
			d.open("bob", 2)
			d.do(Request{Kind: Close, Nick: "bob", Token: 2})
		}, post: [3]string{"cat", "bob", "hi"}, events: "bob: cat: hi\ncat: You to bob: hi", mail: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(Config{Grace: time.Minute, MaxMailbox: 3, MaxMailboxes: 2})
			if tt.setup != nil {
				tt.setup(d)
			}
			out := d.post(tt.post[0], tt.post[1], tt.post[2])
			if got := texts(out.Events); got != tt.events {
				t.Errorf("events:\n%s\nwant:\n%s", got, tt.events)
			}
			if out.Offline != tt.offline {
				t.Errorf("offline %v, want %v", out.Offline, tt.offline)
			}
			if tt.refusal == 0 && out.Refusal != nil || tt.refusal != 0 && (out.Refusal == nil || out.Refusal.Kind != tt.refusal) {
				t.Errorf("refusal %v, want kind %d", out.Refusal, tt.refusal)
			}
			if n := len(d.m.Mailbox(tt.post[1])); n != tt.mail {
				t.Errorf("%d mails waiting for %s, want %d", n, tt.post[1], tt.mail)
			}
		})
	}
}

func TestRefusalWording(t *testing.T) {
	d := newDriver(Config{MaxMailbox: 1, MaxMailboxes: 1, Retention: time.Hour})
	d.post("ann", "bob", "x")
	if r := d.post("ann", "bob", "y").Refusal; r == nil || r.Text != "mailbox full: bob is offline and already has 1 messages waiting, the most kept per user" {
		t.Errorf("mailbox full: %v", r)
	}
	if r := d.post("cat", "dan", "y").Refusal; r == nil || r.Text != "chat store full: 1 offline users already have messages waiting, the most kept; dan's message was not stored, retry once they logged in or their messages expired (retention 1h0m0s)" {
		t.Errorf("store full: %v", r)
	}
}

func TestOpenWelcomeAndPresence(t *testing.T) {
	d := newDriver(Config{Grace: time.Minute, PresenceWindow: 10 * time.Second})
	out := d.open("ann", 1)
	if got := texts(out.Joined.Preamble); got != "ann: Welcome ann!\nann: now online: " {
		t.Errorf("preamble %q", got)
	}
	if got := texts(out.Events); got != "all-ann: ann has joined." {
		t.Errorf("first join told at once: %q", got)
	}
	// Within the window: the joins wait, and a Flush tells them together.
	out = d.open("bob", 2)
	if len(out.Events) != 0 || out.FlushAt.IsZero() {
		t.Fatalf("second join within the window: events %q, flush at %v", texts(out.Events), out.FlushAt)
	}
	if got := texts(out.Joined.Preamble); !strings.Contains(got, "now online: ann") {
		t.Errorf("bob's welcome: %q", got)
	}
	for i, n := range []string{"cat", "dan", "eve"} {
		if out := d.open(n, uint64(3+i)); !out.FlushAt.IsZero() {
			t.Errorf("%s: a second flush asked for", n)
		}
	}
	out = d.do(Request{Kind: Flush})
	if got := texts(out.Events); got != "all-: bob, cat and 2 others joined." {
		t.Errorf("flush: %q", got)
	}
	// A waiting notice comes before a post.
	d.at = d.at.Add(time.Minute)
	d.open("fay", 8)
	d.open("gus", 9)
	out = d.post("ann", "all", "hello")
	if got := texts(out.Events); got != "all-gus: gus has joined.\nall-: ann to all: hello" {
		t.Errorf("post after a waiting join: %q", got)
	}
}

func TestGraceAndLeave(t *testing.T) {
	d := newDriver(Config{Grace: time.Minute})
	d.open("ann", 1)
	d.open("bob", 2)
	out := d.do(Request{Kind: Close, Nick: "bob", Token: 2})
	if len(out.Graces) != 1 || out.Graces[0].Nick != "bob" || len(out.Events) != 0 {
		t.Fatalf("close: %+v", out)
	}
	g := out.Graces[0]
	// Back within the grace: the old grace no longer applies.
	d.open("bob", 3)
	if out := d.do(Request{Kind: GraceOver, Nick: "bob", Gen: g.Gen}); len(out.Events) != 0 {
		t.Errorf("a stale grace took bob offline: %q", texts(out.Events))
	}
	out = d.do(Request{Kind: Close, Nick: "bob", Token: 3})
	out = d.do(Request{Kind: GraceOver, Nick: "bob", Gen: out.Graces[0].Gen})
	if got := texts(out.Events); got != "all-bob: bob has left." {
		t.Errorf("grace over: %q", got)
	}
	if on, _ := d.m.Online("bob"); on {
		t.Error("bob still online")
	}
}

func TestNodeGone(t *testing.T) {
	d := newDriver(Config{})
	d.do(Request{Kind: Open, Nick: "ann", Node: "a", Token: 1})
	d.do(Request{Kind: Open, Nick: "bob", Node: "b", Token: 1})
	out := d.do(Request{Kind: NodeGone, Node: "b"})
	if got := texts(out.Events); got != "all-bob: bob has left." {
		t.Errorf("node gone: %q", got)
	}
	if out := d.do(Request{Kind: Open, Nick: "bob", Node: "b", Token: 2}); out.Refusal == nil || out.Refusal.Kind != Unavailable {
		t.Errorf("open on a gone node: %+v", out.Refusal)
	}
}

func TestMailOfferAndAck(t *testing.T) {
	d := newDriver(Config{})
	d.post("ann", "bob", "one")
	d.post("ann", "bob", "two")
	out := d.open("bob", 1)
	j := out.Joined
	if !j.MailPending || j.MailTo-j.MailFrom != 2 {
		t.Fatalf("joined %+v", j)
	}
	if got := texts(out.Events); !strings.Contains(got, "bob: ann (2026-01-02 03:04): one\nbob: ann (2026-01-02 03:04): two") {
		t.Errorf("offers: %q", got)
	}
	// Not acknowledged: offered again at the next login, under new ids.
	d.do(Request{Kind: Close, Nick: "bob", Token: 1})
	out = d.open("bob", 2)
	if len(out.Deleted) != 2 {
		t.Errorf("the earlier offers not superseded: %v", out.Deleted)
	}
	j = out.Joined
	d.do(Request{Kind: Ack, Nick: "bob", From: j.MailFrom, Upto: j.MailTo})
	if n := len(d.m.Mailbox("bob")); n != 0 {
		t.Errorf("%d mails left after the ack", n)
	}
	// A resume that covers an offer confirms it.
	d.do(Request{Kind: Close, Nick: "bob", Token: 2})
	d.post("ann", "bob", "three")
	out = d.open("bob", 3)
	d.do(Request{Kind: Close, Nick: "bob", Token: 3})
	d.do(Request{Kind: Open, Nick: "bob", Token: 4, Resume: out.Joined.MailTo, HasResume: true})
	if n := len(d.m.Mailbox("bob")); n != 0 {
		t.Errorf("%d mails left after a resume past them", n)
	}
}

func TestResumeAboveLast(t *testing.T) {
	d := newDriver(Config{})
	out := d.do(Request{Kind: Open, Nick: "ann", Token: 1, Resume: 99, HasResume: true})
	if !strings.HasPrefix(out.Joined.Notice, "resume id 99 is above the last event id issued here (0)") || out.Joined.HasResume {
		t.Errorf("joined %+v", out.Joined)
	}
}

func TestRetention(t *testing.T) {
	d := newDriver(Config{Retention: time.Hour})
	d.post("ann", "bob", "old")
	d.at = d.at.Add(2 * time.Hour)
	out := d.do(Request{Kind: Tick})
	if len(out.Mail) != 1 || !out.Mail[0].Drop || d.m.Mailboxes() != 0 {
		t.Errorf("expired mail kept: %+v", out.Mail)
	}
}

func TestIDsPerRequest(t *testing.T) {
	d := newDriver(Config{IDsPerRequest: 10})
	d.open("ann", 1) // seq 1
	out := d.post("ann", "all", "x")
	if out.Events[0].ID != 21 {
		t.Errorf("id %d, want 21 (seq 2 × 10 + 1)", out.Events[0].ID)
	}
	// A machine that starts late makes the same ids.
	late := New(Config{IDsPerRequest: 10, MaxMailbox: 1, MaxMailboxes: 1}, 0)
	if out := late.Apply(Request{Kind: Post, Seq: 2, At: t0, Nick: "ann", To: "all", Text: "x"}); out.Events[0].ID != 21 {
		t.Errorf("late machine: id %d", out.Events[0].ID)
	}
}

// With EvictMail, a flooder from one address cannot shut offline messages
// off for the others: past its own limit its oldest mail goes, and when the chat holds
// its most mailboxes the address holding the most gives up its oldest.
func TestFlooderGivesWayFirst(t *testing.T) {
	d := newDriver(Config{MaxMailbox: 10, MaxMailboxes: 5, MaxMailPerAddr: 3, EvictMail: true})
	for i := range 10 {
		out := d.do(Request{Kind: Post, Nick: fmt.Sprintf("bot%d", i), To: fmt.Sprintf("v%d", i), Text: "spam", Addr: "6.6.6.6"})
		if out.Refusal != nil {
			t.Fatalf("flood %d refused: %v", i, out.Refusal)
		}
	}
	if n := d.m.Mailboxes(); n != 3 {
		t.Errorf("the flooder holds %d mailboxes, want its limit 3", n)
	}
	if len(d.m.Mailbox("v9")) != 1 || len(d.m.Mailbox("v0")) != 0 {
		t.Error("the flooder's newest mail is not the one kept")
	}
	d.do(Request{Kind: Post, Nick: "ann", To: "bob", Text: "hi", Addr: "1.1.1.1"})
	d.do(Request{Kind: Post, Nick: "cat", To: "dan", Text: "hi", Addr: "2.2.2.2"})
	// Full: the flooder (3 held) gives way, not the new mail.
	out := d.do(Request{Kind: Post, Nick: "eve", To: "fay", Text: "hi", Addr: "3.3.3.3"})
	if out.Refusal != nil {
		t.Fatalf("an honest sender refused: %v", out.Refusal)
	}
	if len(d.m.Mailbox("v7")) != 0 || len(d.m.Mailbox("bob")) != 1 {
		t.Error("not the flooder's oldest mail was dropped")
	}
	// Per address, bytes too.
	d2 := newDriver(Config{MaxMailBytesPerAddr: 10, EvictMail: true})
	d2.do(Request{Kind: Post, Nick: "a", To: "x", Text: "123456", Addr: "A"})
	d2.do(Request{Kind: Post, Nick: "a", To: "y", Text: "123456", Addr: "A"})
	if len(d2.m.Mailbox("x")) != 0 || len(d2.m.Mailbox("y")) != 1 {
		t.Error("bytes per address not bounded by the oldest mail leaving")
	}
}

// Without EvictMail, a full share of one address or a chat holding its
// most mailboxes refuses the new mail and keeps every mail it took.
func TestFullMailboxesRefuse(t *testing.T) {
	d := newDriver(Config{MaxMailbox: 10, MaxMailboxes: 3, MaxMailPerAddr: 2, MaxMailBytesPerAddr: 100})
	for i, tc := range []struct {
		to, addr, text string
		refused        RefusalKind
	}{
		{"a", "A", "one", 0},
		{"b", "A", "two", 0},
		{"c", "A", "three", SenderMailFull},
		{"c", "B", "four", 0},
		{"e", "B", strings.Repeat("x", 97), SenderMailFull},
		{"d", "C", "five", StoreFull},
		{"a", "C", "six", 0},
	} {
		out := d.do(Request{Kind: Post, Nick: "bot", To: tc.to, Text: tc.text, Addr: tc.addr})
		if got := RefusalKind(0); out.Refusal != nil {
			got = out.Refusal.Kind
			if got != tc.refused {
				t.Fatalf("post %d: refused %v (%s), want %v", i, got, out.Refusal.Text, tc.refused)
			}
		} else if tc.refused != 0 {
			t.Fatalf("post %d to %s from %s: taken, want refused (%v)", i, tc.to, tc.addr, tc.refused)
		}
	}
	var kept []string
	for _, nick := range d.m.MailboxNicks() {
		for _, ml := range d.m.Mailbox(nick) {
			kept = append(kept, nick+":"+ml.Text)
		}
	}
	if want := []string{"a:one", "a:six", "b:two", "c:four"}; !slices.Equal(kept, want) {
		t.Errorf("mail kept %q, want every mail taken: %q", kept, want)
	}
}

func TestRollback(t *testing.T) {
	d := newDriver(Config{Grace: time.Minute, PresenceWindow: time.Minute})
	d.open("ann", 1)
	d.post("ann", "bob", "kept")
	before := d.m.Last()
	d.m.Begin()
	d.open("bob", 2)
	d.open("cat", 3)
	d.post("ann", "dan", "x")
	d.do(Request{Kind: Close, Nick: "ann", Token: 1})
	d.m.Rollback()
	if d.m.Last() != before || d.m.Users() != 1 || len(d.m.Mailbox("bob")) != 1 || d.m.Mailboxes() != 1 {
		t.Errorf("after rollback: last %d (want %d), users %d, mailboxes %v", d.m.Last(), before, d.m.Users(), d.m.MailboxNicks())
	}
	if on, n := d.m.Online("ann"); !on || n != 1 {
		t.Error("ann's stream not back")
	}
	if len(d.m.Mailbox("bob")[0].Text) != 4 || d.m.Mailbox("bob")[0].ID != 0 {
		t.Error("bob's mail changed")
	}
}

func TestTextProblem(t *testing.T) {
	for _, tt := range []struct {
		text, want string
	}{
		{"hello\tworld ✓", ""},
		{"a\nb", "control character U+000A"},
		{"a\u0085b", "line break U+0085"},
		{"a\u2028b", "line break U+2028"},
		{"a\u2029b", "line break U+2029"},
		{"a\u202eb", "bidirectional control U+202E"},
		{"a\u202ab", "bidirectional control U+202A"},
		{"a\u2066b", "bidirectional control U+2066"},
		{"a\u2069b", "bidirectional control U+2069"},
		{"a\u0090b", "control character U+0090"},
		{"\xff", "not valid UTF-8"},
	} {
		got := TextProblem(tt.text)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("TextProblem(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// The queue of mails by arrival does not keep what left: a flood whose
// mail keeps making room for itself holds a bounded queue.
func TestQueueBounded(t *testing.T) {
	d := newDriver(Config{MaxMailbox: 10, MaxMailboxes: 100000, MaxMailPerAddr: 3, EvictMail: true})
	for i := range 5000 {
		d.do(Request{Kind: Post, Nick: "bot", To: fmt.Sprint("v", i), Text: "spam", Addr: "6.6.6.6"})
		if n := len(d.m.queue) - d.m.head; n > 2*d.m.total+1024 {
			t.Fatalf("after %d mails: %d queued for %d waiting", i+1, n, d.m.total)
		}
	}
	if d.m.total != 3 || d.m.Mailboxes() != 3 {
		t.Errorf("%d mails in %d mailboxes, want the flooder's 3", d.m.total, d.m.Mailboxes())
	}
	// Within transactions too, compacted at their commit.
	d.m.Begin()
	for i := range 3000 {
		d.do(Request{Kind: Post, Nick: "bot", To: fmt.Sprint("w", i), Text: "spam", Addr: "6.6.6.6"})
	}
	d.m.Commit()
	if n := len(d.m.queue) - d.m.head; n > 2*d.m.total+1024 {
		t.Errorf("after a commit: %d queued for %d waiting", n, d.m.total)
	}
}

// Restored mails (a store's, at start) are counted and expire like others.
func TestRestore(t *testing.T) {
	m := New(Config{MaxMailbox: 10, MaxMailboxes: 10, Retention: time.Hour}, 40)
	m.Restore("bob", Mail{Key: 2, From: "ann", Addr: "A", Text: "new", Sent: t0.Add(30 * time.Minute)})
	m.Restore("ann", Mail{Key: 1, From: "bob", Addr: "B", Text: "old", Sent: t0})
	out := m.Apply(Request{Kind: Tick, Seq: 1, At: t0.Add(61 * time.Minute)})
	if len(out.Mail) != 1 || out.Mail[0].Nick != "ann" || m.MailCount("bob") != 1 {
		t.Fatalf("expired %+v; bob has %d", out.Mail, m.MailCount("bob"))
	}
	out = m.Apply(Request{Kind: Post, Seq: 2, At: t0.Add(62 * time.Minute), Nick: "cat", To: "dan", Text: "x"})
	if out.Events[0].ID != 41 || out.Mail[0].Mail.Key != 3 {
		t.Errorf("after restore: event %d, mail key %d; want 41 and 3", out.Events[0].ID, out.Mail[0].Mail.Key)
	}
}

// TestNickProblemNamesTheCharacter: a nickname's refusal names the
// character as it is ('é', not the 'Ã' of its first byte) and counts
// characters, not bytes.
func TestNickProblemNamesTheCharacter(t *testing.T) {
	for _, tc := range []struct{ nick, says string }{
		{"josé", `the character 'é'`},
		{"a\xffb", `the byte "\xff", which is not UTF-8`},
		{strings.Repeat("é", 20), "has the character 'é'"},
		{strings.Repeat("x", 33), "is 33 characters long"},
	} {
		if got := NickProblem(tc.nick); !strings.Contains(got, tc.says) {
			t.Errorf("NickProblem(%q) = %q, want it to say %q", tc.nick, got, tc.says)
		}
	}
}
